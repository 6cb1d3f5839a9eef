"""Replies synthesized while the ear waits for the turn's end: the reply the words heard at a pause
would get, kept before the turn closes, and played without a second synthesis."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

import numpy as np

from tests.speech_fixtures import synthesizer
from tests.test_rehearsed_shared import RecordingSink
from voiced.bus import EventBus
from voiced.config import Config
from voiced.devices.registry import DeviceRegistry
from voiced.engines import foresight
from voiced.mouth.foresight import Foresight, first_sentence
from voiced.mouth.speech import Rehearsed, SpeechOutput

WAIT_S = 30.0


class Voice:
    """Piper, counting what it is asked to say; `hold` makes each synthesis wait until released."""

    def __init__(self, *, hold: bool = False) -> None:
        self._voice = synthesizer()
        self.sample_rate = self._voice.sample_rate
        self.said: list[str] = []
        self.started = threading.Event()
        self.release = threading.Event()
        if not hold:
            self.release.set()

    def synthesize(self, text: str) -> np.ndarray:
        self.said.append(text)
        self.started.set()
        assert self.release.wait(WAIT_S)
        return self._voice.synthesize(text)


def _eventually(check: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + WAIT_S
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_the_first_sentence_of_a_reply() -> None:
    assert first_sentence("Turning on the kitchen light. It was off.") == "Turning on the kitchen light."
    assert first_sentence("Okay") == "Okay"
    assert first_sentence("") is None


def test_a_whole_request_gets_its_reply_ahead_and_words_that_would_not_act_get_none(
    registry: DeviceRegistry,
) -> None:
    voice, rehearsed = Voice(), Rehearsed()
    ahead, _home_changed = foresight(Config(), registry, voice, rehearsed, room=None, wait_s=WAIT_S)
    try:
        ahead.foresee("Turn on the kitchen light.")
        assert _eventually(lambda: len(voice.said) == 1)
        # a pause mid-request, and words not ours to act on, each taken up by the idle worker at
        # once (a later pause's words replace only those still queued): nothing to say
        for words in ("Turn on the", "What's the weather like?"):
            ahead.foresee(words)
            ahead.foresee("Set the diffuser to lavender.")
            assert _eventually(lambda: len(voice.said) == 2)
            assert ahead.take("Setting the diffuser to lavender.") is not None
            voice.said.pop()
        ahead.foresee("Set the diffuser to lavender.")
        assert _eventually(lambda: len(voice.said) == 2)
        assert voice.said == ["Turning on the kitchen light.", "Setting the diffuser to lavender."]
        assert ahead.take("Setting the diffuser to lavender.") is not None  # said: kept for good
        assert _eventually(lambda: rehearsed.get("Setting the diffuser to lavender.") is not None)
        assert ahead.take("Setting the diffuser to lavender.") is None  # taken once
        assert rehearsed.get("Turning on the kitchen light.") is None  # foreseen, never said: not kept
    finally:
        ahead.close()


def test_a_pause_s_words_replace_those_still_waiting_their_turn() -> None:
    voice = Voice(hold=True)
    ahead = Foresight(lambda text: f"Reply to {text}.", voice.synthesize, wait_s=WAIT_S)
    try:
        ahead.foresee("one")
        assert voice.started.wait(WAIT_S)  # "one" is being synthesized: it finishes
        ahead.foresee("two")  # waits behind it ...
        ahead.foresee("three")  # ... and is dropped for the utterance's later words
        voice.release.set()
        assert _eventually(lambda: ahead.take("Reply to three.") is not None)
    finally:
        ahead.close()
    assert voice.said == ["Reply to one.", "Reply to three."]


def test_a_failure_ahead_is_logged_and_the_next_pause_is_served() -> None:
    voice = Voice()

    def reply_of(text: str) -> str | None:
        if text == "bad":
            raise RuntimeError("the private intents broke")
        return "Fine."

    ahead = Foresight(reply_of, voice.synthesize, wait_s=WAIT_S)
    try:
        ahead.foresee("bad")
        ahead.foresee("good")
        assert _eventually(lambda: ahead.take("Fine.") is not None)
        assert voice.said == ["Fine."]
    finally:
        ahead.close()
    ahead.foresee("after close")  # ignored, not an error
    assert ahead.take("Reply.") is None


def test_the_reply_plays_what_was_synthesized_ahead_without_piper_again(registry: DeviceRegistry) -> None:
    voice, rehearsed = Voice(), Rehearsed()
    ahead, _home_changed = foresight(Config(), registry, voice, rehearsed, room=None, wait_s=WAIT_S)
    sink = RecordingSink()
    speech = SpeechOutput(
        voice, sink, EventBus(), sentence_silence_s=0.0, rehearsed=rehearsed, foresight=ahead
    )

    ahead.foresee("Turn on the kitchen light.")  # the private intents built, as before a first turn
    assert _eventually(lambda: voice.said == ["Turning on the kitchen light."])
    voice.said.clear()

    async def scenario() -> None:
        ahead.foresee("Turn the living room light blue.")
        # the turn closes while piper may still be saying it: the reply waits for that, not a second run
        await asyncio.wait_for(speech.speak(1, "Setting the living room light to blue."), timeout=WAIT_S)

    try:
        asyncio.run(scenario())
        assert voice.said == ["Setting the living room light to blue."]
        assert sum(len(samples) for samples, _rate in sink.played) > voice.sample_rate // 2
        assert _eventually(lambda: rehearsed.get("Setting the living room light to blue.") is not None)
    finally:
        ahead.close()
