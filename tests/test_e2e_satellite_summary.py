"""The interview held from a satellite ends with its spoken summary at that satellite (issue 29): the
summary is no reply of a turn (the brain says it after the last answer's analysis, through the
narrator), so it goes to the room of the turn it is for. Real wyoming-satellite processes on
loopback, the whole daemon in this process (as in test_e2e_satellites.py), a real Mosquitto and the
device simulator; the daemon's own room is the bedroom.

What the home already knows of its people (rooms, routine, scents, music) is in the brain's state
file before the start, as earlier everyday turns would have left it: the interview begun by voice in
the kitchen then asks only about the lights, and the answer completes it."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from tests.conftest import Broker
from tests.home import SimulatedHome
from tests.satellites import Satellite, at_ear_rate
from tests.speech_fixtures import spoken
from tests.test_e2e_satellites import REPLY_WITHIN_S, Daemon, Events, engines, home, workdir, write_config
from voiced.brain.interview import QUESTIONS, WRAP_UP
from voiced.brain.state import ConversationState, Preferences, UserProfile
from voiced.brain.store import StateStore
from voiced.engines import Engines

pytestmark = pytest.mark.e2e
__all__ = ["engines", "home", "workdir"]  # the satellites' fixtures, used here by name
SUMMARY = "I've set up 4 scenes for you"  # the architect's summary begins so (test_e2e_brain.py)


def known_home(state_file: Path) -> None:
    """The brain's state as earlier turns left it: everything but the lights known."""
    state = ConversationState(
        session_id="earlier",
        processed_turns=4,
        user_profile=UserProfile(rooms=["kitchen", "living room"], wake_time="07:00", bed_time="23:00"),
        preferences=Preferences(scents=["lavender"], disliked_scents=["peppermint"], genres=["jazz"]),
    )
    StateStore(state_file).save(state)


async def said_in(events: Events, satellite: str, starts: str, timeout_s: float) -> dict[str, object]:
    """The home's `room_said` of `satellite` whose text starts with `starts`."""
    deadline = time.monotonic() + timeout_s
    while True:
        said = [e for e in events.all() if (e["kind"], e.get("satellite")) == ("room_said", satellite)]
        for event in said:
            if str(event["text"]).startswith(starts):
                return event
        assert time.monotonic() < deadline, f"{satellite} never said {starts!r}"
        await asyncio.sleep(0.1)


def test_an_interview_held_in_the_kitchen_ends_with_its_summary_at_the_kitchen_satellite_only(
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
        known_home(workdir / "state.sqlite")  # the state file the config names
        asyncio.run(asyncio.wait_for(_interview(workdir, config, kitchen, living, engines), 200))
    finally:
        for satellite in (kitchen, living):
            satellite.stop()


async def _interview(
    workdir: Path, config: Path, kitchen: Satellite, living: Satellite, engines: Engines
) -> None:
    daemon = Daemon(workdir, config, engines)
    daemon.start()
    events = daemon.events
    for satellite in (kitchen, living):
        await events.count("satellite_connected", satellite.name, 1, 60)

    kitchen.say(spoken("Let's set up my home."))
    await said_in(events, kitchen.name, QUESTIONS["lights"], REPLY_WITHIN_S)  # all it does not know yet
    await events.count("room_turn_finished", kitchen.name, 1, REPLY_WITHIN_S)
    await asyncio.to_thread(kitchen.wait_reply, 1, REPLY_WITHIN_S)  # heard whole before the answer

    kitchen.say(spoken("Warm and dim in the evening."))
    wrap_up = await said_in(events, kitchen.name, WRAP_UP.split(".")[0], REPLY_WITHIN_S)  # its first sentence
    summary = await said_in(events, kitchen.name, SUMMARY, REPLY_WITHIN_S + 20)
    assert summary["turn"] == wrap_up["turn"] and summary["room"] == "kitchen", (wrap_up, summary)
    # the wrap-up's reply, then the summary: each its own stream on the kitchen's speaker
    replies = await asyncio.to_thread(kitchen.wait_reply, 3, REPLY_WITHIN_S)
    assert engines.transcriber is not None
    heard = (await asyncio.to_thread(engines.transcriber.transcribe, at_ear_rate(replies[2]))).lower()
    assert "scenes" in heard and "lavender" in heard, heard
    await daemon.stop()

    assert (workdir / "scenes.yaml").is_file()  # the architect wrote the scenes the summary speaks of
    assert len(kitchen.reply_files()) == 3, kitchen.reply_files()  # nothing more came after
    assert living.reply_files() == []  # nothing said in the living room
    assert daemon.heard_locally_s() == 0.0  # nor on the daemon's own speaker, in the bedroom
    local = [e for e in events.all() if e["kind"] == "agent_text"]
    assert local == [], local  # the daemon's own speech said nothing at all
