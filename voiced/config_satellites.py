"""The `satellites:` list of config.yaml: the Wyoming satellites voiced serves, one per room.

A satellite is `wyoming-satellite` on a small box with a microphone and a speaker; it listens on
tcp://host:10700 and voiced connects to it, as Home Assistant's Wyoming integration does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import Field, field_validator

from voiced.config_sections import WakeWord, _Section
from voiced.errors import ConfigError
from voiced.wyoming_link import parse_uri

SATELLITE_NAME = r"^[a-z][a-z0-9_-]*$"


class SatelliteConfig(_Section):
    """One satellite: its name, where it listens, and the room it is in."""

    name: str = Field(
        min_length=1,
        max_length=40,
        pattern=SATELLITE_NAME,
        description="what the log, the events and the web call it (lower case, e.g. kitchen_satellite)",
    )
    uri: str = Field(
        description="where the satellite listens: tcp://host:port (wyoming-satellite's --uri, port 10700)"
    )
    room: str = Field(
        min_length=1,
        max_length=60,
        description='the room it is in: "here" for what is said to it; one of the devices\' rooms',
    )

    wake_word: WakeWord | None = Field(
        None,
        description="a wake word voiced listens for on the satellite's stream (its microWakeWord model), "
        "for a satellite that streams without one of its own; null = none on voiced's side (the "
        "satellite's own --wake-uri, or always listening). wake.listen_s and wake.follow_up_s apply",
    )

    echo: Literal["half_duplex", "cancel"] = Field(
        "half_duplex",
        description="half_duplex: deaf to the satellite while its reply plays; cancel: it keeps listening "
        "and you can talk over the reply (barge-in), our own echo told apart as for the daemon's "
        "microphone (audio.echo: cancel). For a satellite that streams while it plays (no --wake-uri)",
    )

    @field_validator("uri")
    @classmethod
    def _tcp_host_port(cls, uri: str) -> str:
        try:
            parse_uri(uri, "uri")
        except ConfigError as exc:
            raise ValueError(str(exc).removeprefix("uri: ")) from None
        return uri

    @property
    def host_port(self) -> tuple[str, int]:
        return parse_uri(self.uri, f"satellites {self.name}.uri")


def check_unique(satellites: Iterable[SatelliteConfig]) -> None:
    """Two satellites may share neither a name nor an address (ValueError names the repeat)."""
    names: set[str] = set()
    uris: set[str] = set()
    for satellite in satellites:
        if satellite.name in names:
            raise ValueError(f"satellites: two are named {satellite.name!r}")
        if satellite.uri in uris:
            raise ValueError(f"satellites: {satellite.name!r} has the address of another, {satellite.uri}")
        names.add(satellite.name)
        uris.add(satellite.uri)


def check_rooms(satellites: Iterable[SatelliteConfig], rooms: Iterable[str], origin: object) -> None:
    """Each satellite's room is a room of the devices (ConfigError otherwise, naming the known ones)."""
    known = sorted(set(rooms))
    for index, satellite in enumerate(satellites):
        if satellite.room not in known:
            listed = ", ".join(known) or "none: no device names a room"
            raise ConfigError(
                f"{origin}: satellites.{index}.room: {satellite.room!r} is no room of the devices "
                f"(rooms: {listed})"
            )
