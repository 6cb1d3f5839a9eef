"""An unsure request for every device of a kind, checked on the sound (voiced/ear/broad.py): a
room's reading that fits nearly as well makes the intents ask which was meant."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import numpy as np

from tests.speech_fixtures import spoken
from voiced.config import AsrConfig
from voiced.devices.registry import DeviceRegistry
from voiced.devices.vocabulary import HomeVocabulary
from voiced.ear.broad import BroadCheck, BroadRules, Fit, doubted, room_readings
from voiced.ear.transcriber import Hearing
from voiced.ear.whisper import WhisperTranscriber
from voiced.mouth.intents import LocalIntentAgent

REGISTRY = DeviceRegistry.load(Path(__file__).parent.parent / "devices")
ROOMS = HomeVocabulary.of(REGISTRY).rooms
# What tiny.en heard on the spoken bench for "Turn bedroom lamp red" (espeak, fast or in babble),
# sure enough of it (0.48-0.55) to turn every lamp red.
EVERY = Hearing("Turn every lamp red.", 0.49, (), ("Turn every bump, red.", "Turn every lamp, red."))


def home_agent() -> LocalIntentAgent:
    return LocalIntentAgent(
        REGISTRY, lambda _name: None, room="living room", now=lambda: datetime(2026, 11, 25, 9, 0)
    )


def test_a_broad_request_is_said_of_each_room_as_spoken_and_as_compared() -> None:
    assert room_readings("Turn every lamp red.", ["bedroom"]) == {
        "Turn bedroom lamp red.": "Turn bedroom lamp red."
    }
    assert room_readings("Turn off all the lights.", ["kitchen"]) == {
        "Turn off the kitchen lights.": "Turn off kitchen lights."
    }
    assert room_readings("Turn on the kitchen light.", ROOMS) == {}


def test_a_room_casts_doubt_only_when_it_fits_nearly_as_well() -> None:
    assert doubted(-6.0, {"Turn bedroom lamp red.": -10.0, "Turn kitchen lamp red.": -20.0}) == (
        "Turn bedroom lamp red."
    )
    # the bench's "dim every light to 15 percent": every room fit 11 or more worse
    assert doubted(-8.6, {"Dim bedroom light to 15%.": -19.8}) is None
    assert doubted(-8.6, {}) is None


def scripted(fits: dict[str, float]) -> Fit:
    def fit(audio: np.ndarray, sentences: Sequence[str]) -> list[float]:
        return [fits.get(s, -100.0) for s in sentences]

    return fit


def test_a_doubted_broad_request_is_asked_about_and_the_answer_acts() -> None:
    fits = {EVERY.text: -5.9, "Turn bedroom lamp red.": -7.4, "Turn kitchen lamp red.": -16.7}
    check = BroadCheck(scripted(fits), lambda: ROOMS, lambda h: True)
    audio = np.zeros(1600, np.int16)
    heard = check.checked(audio, EVERY)
    assert heard.alternatives[0] == "Turn bedroom lamp red." and heard.text == EVERY.text
    agent = home_agent()
    asked = agent.understand(heard.text, heard.doubtful, heard.alternatives)
    assert not asked.commands and "bedroom lamp" in asked.text and agent.waiting
    assert [c.device for c in agent.understand("the bedroom lamp").commands] == ["bedroom_light"]
    # without it, the same words act on every lamp (what the check is for)
    assert len(home_agent().understand(EVERY.text, (), EVERY.alternatives).commands) == 3
    # "all the lights" asks as well
    lights = Hearing("Turn off all the lights.", 0.5)
    fits = {lights.text: -6.0, "Turn off the kitchen lights.": -7.0}
    off = BroadCheck(scripted(fits), lambda: ROOMS, lambda h: True).checked(audio, lights)
    assert home_agent().understand(off.text, off.doubtful, off.alternatives).commands == ()


def test_only_an_unsure_broad_request_the_intents_would_act_on_is_weighed() -> None:
    asked: list[Sequence[str]] = []

    def fit(audio: np.ndarray, sentences: Sequence[str]) -> list[float]:
        asked.append(sentences)
        return [0.0] * len(sentences)

    audio = np.zeros(1600, np.int16)
    acting = BroadCheck(fit, lambda: ROOMS, lambda h: True)
    sure = Hearing("Turn every lamp red.", 0.9)
    one = Hearing("Turn the kitchen lamp red.", 0.5)
    assert acting.checked(audio, sure) is sure and acting.checked(audio, one) is one
    assert BroadCheck(fit, lambda: ROOMS, lambda h: False).checked(audio, EVERY) is EVERY
    assert asked == []

    def broken(audio: np.ndarray, sentences: Sequence[str]) -> list[float]:
        raise RuntimeError("CTranslate2 failed")

    assert BroadCheck(broken, lambda: ROOMS, lambda h: True).checked(audio, EVERY) is EVERY


@functools.cache
def tiny() -> WhisperTranscriber:
    return WhisperTranscriber(AsrConfig(), Path("models"), glances=False)


def test_real_speech_every_lamp_said_stands_and_a_room_heard_as_every_is_doubted() -> None:
    """tiny.en weighing piper's voice: "Turn every lamp red." fits far better than any room's
    reading; "Turn bedroom lamp red." taken as "every" (as tiny.en heard espeak) is doubted."""
    check = BroadCheck(tiny().fit, lambda: ROOMS, lambda h: True, BroadRules(below_sure=1.0))
    said = Hearing("Turn every lamp red.", 0.5)
    assert check.checked(spoken("Turn every lamp red."), said) is said
    misheard = check.checked(spoken("Turn bedroom lamp red."), said)
    assert misheard.alternatives[:1] == ("Turn bedroom lamp red.",)
