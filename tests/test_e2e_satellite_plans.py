"""A request for later said at a satellite is the home's plan, planned in that satellite's room (issue
29): *"in here"* is the kitchen, the step for now is sent naming the kitchen, the read-back and the
answer to the "yes" are said at the kitchen's satellite only. Real wyoming-satellite processes on
loopback, the whole daemon in this process (as in test_e2e_satellites.py), a real Mosquitto and the
device simulator; the daemon's own room is the bedroom."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.conftest import Broker
from tests.home import SimulatedHome
from tests.satellites import Satellite
from tests.speech_fixtures import spoken
from tests.test_e2e_satellites import (
    REPLY_WITHIN_S,
    Commands,
    Daemon,
    Events,
    engines,
    home,
    reply_heard,
    workdir,
    write_config,
)
from voiced.engines import Engines
from voiced.language.replies import say

pytestmark = pytest.mark.e2e
__all__ = ["engines", "home", "workdir"]  # the satellites' fixtures, used here by name


def test_a_plan_said_in_the_kitchen_is_the_kitchen_s_and_is_read_back_there(
    workdir: Path, broker: Broker, home: SimulatedHome, engines: Engines
) -> None:
    kitchen = Satellite(workdir, "kitchen_satellite")
    living = Satellite(workdir, "living_room_satellite")
    for satellite in (kitchen, living):
        satellite.start()
    try:
        satellites = [
            {"name": kitchen.name, "uri": kitchen.uri, "room": "kitchen"},
            {"name": living.name, "uri": living.uri, "room": "living room"},
        ]
        config = write_config(workdir, broker, satellites)
        asyncio.run(asyncio.wait_for(_plan(workdir, config, kitchen, living, home, engines), 200))
    finally:
        for satellite in (kitchen, living):
            satellite.stop()


async def _plan(
    workdir: Path, config: Path, kitchen: Satellite, living: Satellite, home: SimulatedHome, engines: Engines
) -> None:
    daemon = Daemon(workdir, config, engines)
    daemon.start()
    commands = Commands(home)
    events = daemon.events
    for satellite in (kitchen, living):
        await events.count("satellite_connected", satellite.name, 1, 60)

    kitchen.say(spoken("Turn on the light in here, then in two minutes turn it off."))
    await commands.sent(("kitchen_light", "ON"))  # the step for now, at once
    assert "kitchen" in await reply_heard(kitchen, 1, engines, events)  # its audio, at the kitchen
    waiting = await waiting_plan(events)
    assert "kitchen light" in waiting["detail"] and "bedroom" not in waiting["detail"], waiting
    read_back = said(events, kitchen.name)
    assert read_back == [
        "Turning on the kitchen light. I'll turn off the kitchen light in 2 minutes. Shall I go ahead?"
    ], read_back

    kitchen.say(spoken("Yes."))
    await reply_heard(kitchen, 2, engines, events)
    assert said(events, kitchen.name)[1] == say("plan_going_ahead")
    await daemon.stop()

    seen = events.all()
    sent = [(e["device"], e["room"]) for e in seen if e["kind"] == "command_sent"]
    assert sent == [("kitchen_light", "kitchen")], sent  # the step for later is two minutes away
    created = [e for e in seen if e["kind"] == "plan_created"]
    assert len(created) == 1 and created[0]["data"]["steps"] == 1, created  # the later step only
    cancelled = [e for e in seen if e["kind"] in ("plan_cancelled", "plan_failed")]
    assert cancelled == [], cancelled  # confirmed: it waits for its time
    assert living.reply_files() == []  # nothing said in the living room
    assert daemon.heard_locally_s() == 0.0  # nor on the daemon's own speaker, in the bedroom


def said(events: Events, satellite: str) -> list[str]:
    """What `satellite`'s room said, turn by turn (its sentences joined)."""
    turns: dict[object, list[str]] = {}
    for e in events.all():
        if (e["kind"], e.get("satellite")) == ("room_said", satellite):
            turns.setdefault(e["turn"], []).append(str(e["text"]))
    return [" ".join(sentences) for sentences in turns.values()]


async def waiting_plan(events: Events) -> dict[str, object]:
    """The plan waiting for its yes, once it is waiting."""
    deadline = asyncio.get_running_loop().time() + REPLY_WITHIN_S
    while True:
        waiting = [e for e in events.all() if e["kind"] == "plan_waiting_confirmation"]
        if waiting:
            return waiting[-1]
        assert asyncio.get_running_loop().time() < deadline, "no plan waits for its yes"
        await asyncio.sleep(0.1)
