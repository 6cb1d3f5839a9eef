"""Asking a satellite what it is (`describe` → `info`), for the link and for `voiced satellites`."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass

from wyoming.client import AsyncTcpClient
from wyoming.info import Describe, Info

from voiced.config_satellites import SatelliteConfig
from voiced.wyoming_link import TooSlow, within

# What a satellite that misbehaves on the wire raises: a closed socket, a slow answer, a broken
# header or body (JSON, missing fields).
WIRE_ERRORS = (OSError, TooSlow, asyncio.IncompleteReadError, ValueError, KeyError, TypeError)


class SatelliteGone(ConnectionError):
    """The satellite closed the connection."""


async def read_info(client: AsyncTcpClient) -> Info:
    """The satellite's `info`, skipping whatever else it sends first."""
    while True:
        event = await client.read_event()
        if event is None:
            raise SatelliteGone("it closed the connection before describing itself")
        if Info.is_type(event.type):
            return Info.from_event(event)


def software_of(info: Info) -> str:
    """What the satellite says it is: its name and version ("kitchen_satellite 1.0.0")."""
    satellite = info.satellite
    return f"{satellite.name} {satellite.version or ''}".strip() if satellite else ""


@dataclass(frozen=True)
class Probe:
    satellite: SatelliteConfig
    software: str | None  # None: not reached
    problem: str = ""

    def row(self) -> str:
        s = self.satellite
        status = f"up        {self.software}" if self.software is not None else f"not up    {self.problem}"
        return f"{s.name:<22} {s.room:<14} {s.uri:<28} {status}".rstrip()


async def probe(satellite: SatelliteConfig, timeout_s: float) -> Probe:
    host, port = satellite.host_port
    client = AsyncTcpClient(host, port)
    try:
        await within(client.connect(), timeout_s, "connect")
        await client.write_event(Describe().event())
        info = await within(read_info(client), timeout_s, "describe")
    except WIRE_ERRORS as error:
        return Probe(satellite, None, str(error) or type(error).__name__)
    finally:
        with contextlib.suppress(OSError):
            await client.disconnect()
    return Probe(satellite, software_of(info))


async def probe_all(satellites: Sequence[SatelliteConfig], timeout_s: float) -> list[Probe]:
    """Every satellite asked at once, in the config's order."""
    return list(await asyncio.gather(*(probe(satellite, timeout_s) for satellite in satellites)))
