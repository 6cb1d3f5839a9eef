"""Replies rehearsed once are played by every speaker of the home (a satellite's room too)."""

from __future__ import annotations

import asyncio

import numpy as np

from tests.speech_fixtures import synthesizer
from voiced.audio.pcm import resample_band_limited
from voiced.bus import EventBus
from voiced.mouth.speech import Rehearsed, SpeechOutput


class RecordingSink:
    def __init__(self) -> None:
        self.played: list[tuple[np.ndarray, int]] = []

    async def play(self, samples: np.ndarray, rate: int) -> None:
        self.played.append((samples.copy(), rate))

    async def drain(self) -> None:
        return None

    def pause(self) -> None: ...

    def resume(self) -> None: ...

    def abort(self) -> None: ...

    def close(self) -> None: ...


def test_a_room_plays_what_the_daemon_rehearsed_at_its_own_rate() -> None:
    voice = synthesizer()
    rehearsed = Rehearsed()
    marker = (np.sin(np.arange(voice.sample_rate) / 7.0) * 3000).astype(np.int16)  # no voice says this
    assert rehearsed.keep("Turning on the kitchen light.", lambda _sentence: marker)

    async def scenario() -> RecordingSink:
        sink = RecordingSink()
        room = SpeechOutput(
            voice, sink, EventBus(), sentence_silence_s=0.0, output_rate=16000, rehearsed=rehearsed
        )
        await asyncio.wait_for(room.speak(1, "Turning on the kitchen light."), timeout=30)
        return sink

    sink = asyncio.run(scenario())
    played = np.concatenate([s for s, _ in sink.played])
    expected = resample_band_limited(marker, voice.sample_rate, 16000)
    assert all(rate == 16000 for _, rate in sink.played)
    assert len(played) >= len(expected) and np.array_equal(played[: len(expected)], expected)


def test_the_store_is_bounded_and_keeps_a_sentence_once() -> None:
    rehearsed = Rehearsed()
    calls: list[str] = []

    def synthesize(sentence: str) -> np.ndarray:
        calls.append(sentence)
        return np.zeros(10, np.int16)

    assert rehearsed.keep("Okay.", synthesize) and not rehearsed.keep("Okay.", synthesize)
    assert calls == ["Okay."] and len(rehearsed) == 1
