"""SatelliteLink against a real wyoming-satellite process: handshake, audio, and reconnection."""

from __future__ import annotations

import asyncio
import logging
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import yaml

from tests.conftest import REPO
from tests.satellites import Satellite
from voiced.bus import EventBus, Subscription
from voiced.config_satellites import SatelliteConfig
from voiced.events import Event
from voiced.satellites.events import SatelliteConnected, SatelliteDisconnected
from voiced.satellites.link import LinkTiming, SatelliteLink

FAST = LinkTiming(connect_s=2.0, describe_s=1.0, first_retry_s=0.2, max_retry_s=1.0)


@pytest.fixture
def kitchen(tmp_path: Path) -> Iterator[Satellite]:
    satellite = Satellite(tmp_path, "kitchen_satellite")
    satellite.start()
    try:
        yield satellite
    finally:
        satellite.stop()


async def next_of(events: Subscription, kind: type[Event], timeout_s: float) -> Event:
    async def wait() -> Event:
        while not isinstance(event := await events.get(), kind):
            pass
        return event

    return await asyncio.wait_for(wait(), timeout_s)


class Heard:
    def __init__(self) -> None:
        self.audio = bytearray()
        self.ends = 0
        self.grew = asyncio.Event()

    def feed(self, pcm: bytes) -> None:
        self.audio += pcm
        self.grew.set()

    def end(self) -> None:
        self.ends += 1


def test_the_link_describes_runs_hears_and_comes_back_after_a_kill(
    kitchen: Satellite, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="voiced.satellites.link"):
        asyncio.run(asyncio.wait_for(_describes_runs_hears_and_comes_back(kitchen), 60))
    said = [r.getMessage() for r in caplog.records if "connected at" in r.getMessage()]
    assert said and all("half duplex" in line and "no barge-in" in line for line in said)


async def _describes_runs_hears_and_comes_back(kitchen: Satellite) -> None:
    bus = EventBus()
    events = bus.subscribe("test")
    heard = Heard()
    config = SatelliteConfig(name=kitchen.name, uri=kitchen.uri, room="kitchen")
    link = SatelliteLink(config, bus, on_audio=heard.feed, on_audio_end=heard.end, timing=FAST)
    async with link:
        up = await next_of(events, SatelliteConnected, 10)
        assert isinstance(up, SatelliteConnected)
        assert (up.satellite, up.room, up.uri) == (kitchen.name, "kitchen", kitchen.uri)
        assert up.software.startswith(kitchen.name)  # its info names it
        kitchen.say(np.full(16000, 1000, dtype=np.int16))  # a second of a loud tone
        async with asyncio.timeout(10):
            while max(np.abs(np.frombuffer(bytes(heard.audio), dtype=np.int16)), default=0) < 1000:
                heard.grew.clear()
                await heard.grew.wait()
        assert link.connected and link.streaming

        kitchen.kill()
        gone = await next_of(events, SatelliteDisconnected, 10)
        assert isinstance(gone, SatelliteDisconnected) and gone.satellite == kitchen.name
        assert not link.connected and heard.ends >= 1  # the utterance the kill cut off ends
        kitchen.start()
        again = await next_of(events, SatelliteConnected, 15)
        assert isinstance(again, SatelliteConnected) and link.connected


def test_a_satellite_that_never_answers_is_let_go_and_tried_again() -> None:
    """It accepts the connection and says nothing: no info within describe_s, so not connected."""
    asyncio.run(asyncio.wait_for(_never_answers(), 30))


async def _never_answers() -> None:
    with socket.socket() as mute:
        mute.bind(("127.0.0.1", 0))
        mute.listen()
        port = mute.getsockname()[1]
        bus = EventBus()
        events = bus.subscribe("test")
        config = SatelliteConfig(name="attic_satellite", uri=f"tcp://127.0.0.1:{port}", room="attic")
        link = SatelliteLink(config, bus, on_audio=lambda _pcm: None, on_audio_end=lambda: None, timing=FAST)
        async with link:
            gone = await next_of(events, SatelliteDisconnected, 5)
            assert isinstance(gone, SatelliteDisconnected)
            assert "describe within 1 s" in gone.reason
            assert not link.connected
            assert not link.send(Event())  # nothing is queued for a satellite that is not there


def test_voiced_satellites_lists_each_one_up_or_why_not(tmp_path: Path, kitchen: Satellite) -> None:
    with socket.socket() as mute:
        mute.bind(("127.0.0.1", 0))
        mute.listen()
        mute_uri = f"tcp://127.0.0.1:{mute.getsockname()[1]}"
        satellites = [
            {"name": kitchen.name, "uri": kitchen.uri, "room": "kitchen"},
            {"name": "mute_satellite", "uri": mute_uri, "room": "living room"},
        ]
        config = tmp_path / "config.yaml"
        config.write_text(yaml.safe_dump({"devices_dir": str(REPO / "devices"), "satellites": satellites}))
        listed = subprocess.run(
            [sys.executable, "-m", "voiced", "-c", str(config), "satellites"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert listed.returncode == 1, listed.stderr  # one of them does not answer
    kitchen_row, mute_row = listed.stdout.splitlines()
    assert kitchen_row.split()[:4] == [kitchen.name, "kitchen", kitchen.uri, "up"]
    assert kitchen.name in kitchen_row.split("up", 1)[1]  # what it says it is
    assert mute_row.split()[:5] == ["mute_satellite", "living", "room", mute_uri, "not"]
    assert mute_row.endswith("describe within 3 s")
