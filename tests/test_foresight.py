"""Replies synthesized while the ear waits for the turn's end: the reply the words heard at a pause
would get, kept before the turn closes, and played without a second synthesis."""

from __future__ import annotations

import asyncio
import threading

import numpy as np

from tests.speech_fixtures import synthesizer
from tests.test_rehearsed_shared import RecordingSink
from voiced.bus import EventBus
from voiced.config import Config
from voiced.devices.registry import DeviceRegistry
from voiced.engines import foresight
from voiced.mouth.foresight import Foresight, first_sentence
from voiced.mouth.speech import Rehearsed, SpeechOutput

WAIT_S = 30


class Keeper:
    """Keeps the sentences it is given; `hold` makes each keep wait until released."""

    def __init__(self, *, hold: bool = False) -> None:
        self.kept: list[str] = []
        self.started = threading.Event()
        self.release = threading.Event()
        if not hold:
            self.release.set()

    def __call__(self, sentence: str) -> bool:
        self.started.set()
        assert self.release.wait(WAIT_S)
        if sentence in self.kept:
            return False
        self.kept.append(sentence)
        return True


def test_the_first_sentence_of_a_reply() -> None:
    assert first_sentence("Turning on the kitchen light. It was off.") == "Turning on the kitchen light."
    assert first_sentence("Okay") == "Okay"
    assert first_sentence("") is None


def test_a_whole_request_gets_its_reply_ahead_and_words_that_would_not_act_get_none(
    registry: DeviceRegistry,
) -> None:
    keeper = Keeper()
    ahead, _home_changed = foresight(Config(), registry, keeper)
    try:
        ahead.foresee("Turn on the kitchen light.")
        ahead.settle(WAIT_S)
        ahead.foresee("Turn on the")  # a pause mid-request: nothing to say yet
        ahead.settle(WAIT_S)
        ahead.foresee("What's the weather like?")  # not ours to act on
        ahead.settle(WAIT_S)
        ahead.foresee("Set the diffuser to lavender.")
        ahead.settle(WAIT_S)
    finally:
        ahead.close()
    assert keeper.kept == ["Turning on the kitchen light.", "Setting the diffuser to lavender."]


def test_a_pause_s_words_replace_those_still_waiting_their_turn() -> None:
    keeper = Keeper(hold=True)
    ahead = Foresight(lambda text: f"Reply to {text}.", keeper)
    try:
        ahead.foresee("one")
        assert keeper.started.wait(WAIT_S)  # "one" is being synthesized: it finishes
        ahead.foresee("two")  # waits behind it ...
        ahead.foresee("three")  # ... and is dropped for the utterance's later words
        keeper.release.set()
        ahead.settle(WAIT_S)
    finally:
        ahead.close()
    assert keeper.kept == ["Reply to one.", "Reply to three."]


def test_a_failure_ahead_is_logged_and_the_next_pause_is_served() -> None:
    keeper = Keeper()

    def reply_of(text: str) -> str | None:
        if text == "bad":
            raise RuntimeError("the private intents broke")
        return "Fine."

    ahead = Foresight(reply_of, keeper)
    try:
        ahead.foresee("bad")
        ahead.settle(WAIT_S)
        ahead.foresee("good")
        ahead.settle(WAIT_S)
    finally:
        ahead.close()
    assert keeper.kept == ["Fine."]
    ahead.foresee("after close")  # ignored, not an error


class CountingVoice:
    """Piper, counting what it is asked to say."""

    def __init__(self) -> None:
        self._voice = synthesizer()
        self.said: list[str] = []
        self.sample_rate = self._voice.sample_rate

    def synthesize(self, text: str) -> np.ndarray:
        self.said.append(text)
        return self._voice.synthesize(text)


def test_the_reply_plays_what_was_synthesized_ahead_without_piper_again(registry: DeviceRegistry) -> None:
    voice = CountingVoice()
    rehearsed = Rehearsed()
    ahead, _home_changed = foresight(Config(), registry, lambda s: rehearsed.keep(s, voice.synthesize))
    sink = RecordingSink()
    speech = SpeechOutput(
        voice, sink, EventBus(), sentence_silence_s=0.0, rehearsed=rehearsed, foresight=ahead
    )

    async def scenario() -> None:
        ahead.settle(WAIT_S)  # the private intents built, as before the daemon's first turn
        ahead.foresee("Turn the living room light blue.")
        # the turn closes while piper may still be saying it: the reply waits for that, not a second run
        await asyncio.wait_for(speech.speak(1, "Setting the living room light to blue."), timeout=WAIT_S)

    try:
        asyncio.run(scenario())
    finally:
        ahead.close()
    assert voice.said == ["Setting the living room light to blue."]
    assert sum(len(samples) for samples, _rate in sink.played) > voice.sample_rate // 2
