"""Titles the ear was unsure of are read back before anything plays: the ear weighs each word of a
request to play (a forced decoding on the real Whisper model), and the understanding asks."""

from __future__ import annotations

import functools
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from tests.speech_fixtures import synthesizer
from voiced.audio.pcm import EAR_RATE, resample_band_limited
from voiced.config import AsrConfig
from voiced.devices.model import MusicSet
from voiced.devices.registry import DeviceRegistry
from voiced.ear.whisper import WhisperTranscriber
from voiced.mouth.intents import LocalIntentAgent
from voiced.mouth.understanding.titles import may_name_a_title, yes_or_no

REGISTRY = DeviceRegistry.load(Path(__file__).parent.parent / "devices")


def agent() -> LocalIntentAgent:
    return LocalIntentAgent(REGISTRY, {}.get, room="living room", now=lambda: datetime(2026, 11, 23, 15, 5))


def queries(reply: object) -> list[str | None]:
    return [c.query for c in getattr(reply, "commands", ()) if isinstance(c, MusicSet)]


def test_a_title_with_a_doubted_word_is_read_back_and_a_yes_plays_it() -> None:
    local = agent()
    asked = local.understand("play the song Claire to learn", doubtful={"claire", "learn"})
    assert asked.commands == ()
    assert '"claire to learn"' in asked.text
    assert not local.complete("yes")  # an answer waits for the whole of it
    played = local.understand("yes please")
    assert queries(played) == ["claire to learn"]


def test_a_no_plays_nothing_and_a_new_request_is_taken_as_it_is() -> None:
    local = agent()
    local.understand("play the song Claire to learn", doubtful={"claire"})
    refused = local.understand("no")
    assert refused.commands == () and "won't" in refused.text
    local.understand("play the song Claire to learn", doubtful={"claire"})
    again = local.understand("play the song Clair de Lune")
    assert queries(again) == ["clair de lune"]
    assert local.understand("yes").commands == ()  # nothing is waiting any more


def test_doubt_outside_the_title_changes_nothing() -> None:
    local = agent()
    assert queries(local.understand("play something by Miles Davis", doubtful={"play", "by"})) == [
        "miles davis"
    ]
    light = local.understand("turn on the kitchen light", doubtful={"kitchen"})  # a name, not a title
    assert light.commands


def test_yes_and_no_are_short_answers_only() -> None:
    assert yes_or_no("Yes.") is True
    assert yes_or_no("yeah, play it") is True
    assert yes_or_no("go ahead") is True
    assert yes_or_no("No, not that.") is False
    assert yes_or_no("play some jazz") is None
    assert yes_or_no("yes turn on the kitchen light please") is None


def test_only_requests_to_play_are_weighed() -> None:
    assert may_name_a_title("Play the song Claire to learn.")
    assert may_name_a_title("put on something by Adele")
    assert not may_name_a_title("turn on the kitchen light")
    assert not may_name_a_title("display the time")


@functools.cache
def ear() -> WhisperTranscriber:
    return WhisperTranscriber(AsrConfig(), Path("models"), weigh_words=may_name_a_title)


def spoken(text: str) -> np.ndarray:
    voice = synthesizer()
    speech = resample_band_limited(voice.synthesize(text), voice.sample_rate, EAR_RATE)
    return np.concatenate([np.zeros(EAR_RATE // 4, np.int16), speech, np.zeros(EAR_RATE // 4, np.int16)])


@pytest.mark.parametrize(
    ("said", "doubted"),
    [("play the song Clair de Lune", True), ("play something by Miles Davis", False)],
)
def test_the_ear_doubts_a_misheard_title_and_not_a_clear_one(said: str, doubted: bool) -> None:
    hearing = ear().transcribe_scored(spoken(said))
    title = hearing.text.lower().rstrip(".").split(" by ")[-1].removeprefix("play the song ").split()
    assert bool(set(title) & set(hearing.doubtful)) is doubted, (hearing.text, hearing.doubtful)


def test_other_requests_are_not_weighed() -> None:
    assert ear().transcribe_scored(spoken("turn on the kitchen light")).doubtful == ()
