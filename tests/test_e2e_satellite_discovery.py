"""A device discovered while voiced runs is learned by every satellite's room, not only by the daemon's
own understanding: a Tasmota switch announced on the broker (Home Assistant's discovery), then named
to the kitchen satellite. The whole daemon in this process with real wyoming-satellite processes, a
real Mosquitto and the device simulator, as in test_e2e_satellites.py."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from tests.conftest import Broker
from tests.discovery_payloads import TASMOTA_SWITCH, encoded
from tests.home import SimulatedHome
from tests.satellites import Satellite
from tests.speech_fixtures import spoken
from tests.test_discovery import Publisher
from tests.test_e2e_satellites import (
    REPLY_WITHIN_S,
    Events,
    engines,
    home,
    reply_heard,
    started,
    workdir,
    write_config,
)
from voiced.engines import Engines

pytestmark = pytest.mark.e2e
__all__ = ["engines", "home", "workdir"]  # the satellites' fixtures, used here by name
LEARNED_WITHIN_S = (
    120.0  # the room relearns its whole grammar (about 6 s on a quiet box), beside the daemon's
)
POWER = "tasmota_ABC123/cmnd/POWER"  # the switch's command topic


def test_a_device_discovered_after_start_is_learned_by_a_satellite_s_room(
    workdir: Path, broker: Broker, home: SimulatedHome, engines: Engines
) -> None:
    kitchen = Satellite(workdir, "kitchen_satellite")
    kitchen.start()
    publisher = Publisher(broker.port)
    try:
        satellites = [{"name": kitchen.name, "uri": kitchen.uri, "room": "kitchen"}]
        config = write_config(workdir, broker, satellites, discovery=True)
        run = _discovered(workdir, config, kitchen, home, engines, publisher)
        asyncio.run(asyncio.wait_for(run, LEARNED_WITHIN_S + 120))
    finally:
        kitchen.stop()
        publisher.close()


async def _discovered(
    workdir: Path,
    config: Path,
    kitchen: Satellite,
    home: SimulatedHome,
    engines: Engines,
    publisher: Publisher,
) -> None:
    daemon, _commands = await started(workdir, config, kitchen, home, engines)
    # announced after start: no room could have learned it with the rest of the home
    await asyncio.to_thread(publisher.retain, TASMOTA_SWITCH[0], encoded(TASMOTA_SWITCH[1]))
    await learned(daemon.events, kitchen.name, "coffee_machine", LEARNED_WITHIN_S)

    kitchen.say(spoken("Turn on the coffee machine."))
    deadline = time.monotonic() + REPLY_WITHIN_S
    while publisher.sent(POWER) != [b"ON"]:
        assert time.monotonic() < deadline, f"nothing on {POWER}: {publisher.sent(POWER)}"
        await asyncio.sleep(0.1)
    assert "coffee machine" in await reply_heard(kitchen, 1, engines, daemon.events)

    await daemon.stop()
    sent = [(e["device"], e["room"]) for e in daemon.events.all() if e["kind"] == "command_sent"]
    assert sent == [("coffee_machine", "kitchen")], sent


async def learned(events: Events, satellite: str, device: str, timeout_s: float) -> None:
    """Until `satellite`'s room says it has learned a home with `device` in it (room_learned)."""
    deadline = time.monotonic() + timeout_s
    while not any(
        e["kind"] == "room_learned" and e["satellite"] == satellite and device in e["devices"]
        for e in events.all()
    ):
        assert time.monotonic() < deadline, f"{satellite} did not learn {device} in {timeout_s} s"
        await asyncio.sleep(0.2)
