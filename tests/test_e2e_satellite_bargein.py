"""Barge-in on a real satellite (`echo: cancel`): its microphone hears our reply coming back from its
speaker, and someone talking over it. The whole daemon runs in this process, as in
test_e2e_satellites.py, with a real Mosquitto and the device simulator."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import Broker
from tests.home import SimulatedHome
from tests.satellites import Satellite
from tests.speech_fixtures import spoken, synthesizer
from tests.test_e2e_satellites import REPLY_WITHIN_S, Events, engines, home, started, workdir, write_config
from voiced.audio.pcm import EAR_RATE, resample_band_limited
from voiced.engines import Engines

pytestmark = pytest.mark.e2e
__all__ = ["engines", "home", "workdir"]  # the satellites' fixtures, used here by name
ECHO_GAIN = 0.5  # our reply, as loud in the microphone as half of what the speaker plays
ASK = "What can you do?"  # a reply of five devices, what it does with them and an example: ~12 s
TALK_AFTER_S = 2.0  # of the reply played before someone talks over it
OTHER_VOICE = 1.15  # the person talking over it: the test voice, higher than the daemon's


def played_s(audio: np.ndarray) -> float:
    return len(audio) / EAR_RATE  # the satellite's speaker plays at the ear's rate here


def said_s(events: Events, turn_index: int) -> float:
    """The reply of the `turn_index`-th turn (from 0) said whole, in the test voice: about what it
    lasts in the daemon's (whose generator noise moves each sound a little)."""
    turns = sorted({e["turn"] for e in events.all() if e["kind"] == "room_said"})
    said = [e for e in events.all() if e["kind"] == "room_said"]
    sentences = [e["text"] for e in said if e["turn"] == turns[turn_index]]
    voice = synthesizer()
    return sum(len(voice.synthesize(s)) for s in sentences) / voice.sample_rate


def other_voice(text: str) -> np.ndarray:
    voice = synthesizer()
    speech = resample_band_limited(voice.synthesize(text), int(voice.sample_rate * OTHER_VOICE), EAR_RATE)
    return np.concatenate([speech, np.zeros(EAR_RATE // 2, np.int16)])


async def playing_for(satellite: Satellite, count: int, seconds: float, timeout_s: float) -> None:
    """The `count`-th reply has played `seconds` on the satellite's speaker."""
    deadline = time.monotonic() + timeout_s
    while True:
        files = satellite.reply_files()
        if len(files) >= count and files[count - 1].stat().st_size >= seconds * EAR_RATE * 2:
            return
        assert time.monotonic() < deadline, f"reply {count} did not play {seconds} s"
        await asyncio.sleep(0.05)


def test_talking_over_a_satellite_s_reply_stops_it_there_and_its_own_echo_does_not(
    workdir: Path, broker: Broker, home: SimulatedHome, engines: Engines
) -> None:
    kitchen = Satellite(workdir, "kitchen_satellite", echo_gain=ECHO_GAIN)
    kitchen.start()
    try:
        satellite = {"name": kitchen.name, "uri": kitchen.uri, "room": "kitchen", "echo": "cancel"}
        config = write_config(workdir, broker, [satellite])
        asyncio.run(asyncio.wait_for(_barge_in(workdir, config, kitchen, home, engines), 200))
    finally:
        kitchen.stop()


async def _barge_in(
    workdir: Path, config: Path, kitchen: Satellite, home: SimulatedHome, engines: Engines
) -> None:
    daemon, commands = await started(workdir, config, kitchen, home, engines)
    events = daemon.events

    # Our own echo alone: the reply plays to its end, and what came back is no turn.
    kitchen.say(spoken(ASK))
    await events.count("room_turn_finished", kitchen.name, 1, REPLY_WITHIN_S + 15)
    whole = played_s((await asyncio.to_thread(kitchen.wait_reply, 1, REPLY_WITHIN_S))[0])
    full = await asyncio.to_thread(said_s, events, 0)
    assert whole >= 0.85 * full > 8, (whole, full)
    assert len([e for e in events.all() if e["kind"] == "room_heard"]) == 1

    # Someone talks over it: the reply stops early, on this satellite, and the request is the next turn.
    kitchen.say(spoken(ASK))
    await playing_for(kitchen, 2, TALK_AFTER_S, REPLY_WITHIN_S)
    kitchen.say(other_voice("Turn on the kitchen light."))
    await commands.sent(("kitchen_light", "ON"))
    replies = await asyncio.to_thread(kitchen.wait_reply, 3, REPLY_WITHIN_S)
    cut = played_s(replies[1])
    assert cut < 0.6 * whole, (cut, whole)  # audio-stop came seconds before the reply's end
    assert engines.transcriber is not None
    answer = (await asyncio.to_thread(engines.transcriber.transcribe, replies[2])).lower()
    assert "kitchen light" in answer, answer
    await events.count("room_turn_finished", kitchen.name, 3, REPLY_WITHIN_S)
    await daemon.stop()
    heard = [e["text"].lower() for e in events.all() if e["kind"] == "room_heard"]
    assert len(heard) == 3 and "kitchen light" in heard[2], heard
    # the home hears of it, by room: the reply stopped (its echo before never did)
    stopped = [e for e in events.all() if e["kind"] == "room_barge_in" and e["stopped"]]
    assert [(e["room"], e["satellite"]) for e in stopped] == [("kitchen", kitchen.name)], stopped
