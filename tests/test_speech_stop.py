"""Stopping a reply: however often it is cancelled, it reports once that it stopped.

A barge-in can be decided twice over the same reply (an early check and the whole utterance);
the second cancel used to land while the first was being cleaned up and left the mouth
"speaking" for good, with no `tts_stopped` for the reply that was talked over. Speech outside
a turn (a scene's closing line) is cut by a barge-in too, without cancelling the scene.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

from tests.speech_fixtures import RealTimeSink, synthesizer
from voiced.bus import EventBus, Subscription
from voiced.daemon import Daemon
from voiced.events import BargeIn, Event, TtsStarted, TtsStopped
from voiced.mouth.speech import SpeechOutput

LONG_REPLY = (
    "Here is the forecast for today. The morning starts cool and cloudy. "
    "By noon the clouds break up and the sun comes out for a few hours."
)


async def _events_until_started(queue: Subscription) -> list[Event]:
    seen: list[Event] = []
    while not any(isinstance(e, TtsStarted) for e in seen):
        seen.append(await asyncio.wait_for(queue.get(), timeout=30))
    return seen


def _drained(queue: Subscription) -> list[Event]:
    events = []
    while not queue.empty():
        events.append(queue.get_nowait())
    return events


def test_a_reply_cancelled_again_while_stopping_still_reports_it_stopped() -> None:
    async def scenario() -> tuple[SpeechOutput, list[Event], list[Event]]:
        bus = EventBus()
        queue = bus.subscribe()
        speech = SpeechOutput(synthesizer(), RealTimeSink(), bus, sentence_silence_s=0.1)
        reply = asyncio.create_task(speech.speak(7, LONG_REPLY), name="reply")
        first = await _events_until_started(queue)
        await asyncio.sleep(0.3)
        for _ in range(5):  # each cancel lands at whatever the reply is awaiting by then
            reply.cancel()
            await asyncio.sleep(0)
        done, _pending = await asyncio.wait([reply], timeout=10)
        assert reply in done and reply.cancelled()
        # The next reply starts as a new one: it is announced, and stops once.
        after = await asyncio.wait_for(speech.speak(8, "Turning on the kitchen light."), timeout=30)
        assert after.text == "Turning on the kitchen light."
        return speech, first, _drained(queue)

    speech, first, rest = asyncio.run(scenario())
    assert not speech.speaking
    stops = [e for e in [*first, *rest] if isinstance(e, TtsStopped)]
    starts = [e for e in [*first, *rest] if isinstance(e, TtsStarted)]
    assert [e.turn for e in starts] == [7, 8]
    assert [e.turn for e in stops] == [7, 8]
    assert 0.2 < stops[0].audio_s < 3.0  # only what was played before the cancel


def test_a_reply_left_alone_reports_all_it_played() -> None:
    async def scenario() -> tuple[list[Event], float]:
        bus = EventBus()
        queue = bus.subscribe()
        sink = RealTimeSink()
        speech = SpeechOutput(synthesizer(), sink, bus, sentence_silence_s=0.1)
        await asyncio.wait_for(speech.speak(3, "The lights are on."), timeout=30)
        return _drained(queue), sink.played_s

    events, played_s = asyncio.run(scenario())
    stops = [e for e in events if isinstance(e, TtsStopped)]
    assert len(stops) == 1 and stops[0].turn == 3
    assert abs(stops[0].audio_s - played_s) < 0.05


def test_a_barge_in_over_a_narration_cuts_the_line_but_not_the_scene_that_said_it() -> None:
    async def scenario() -> tuple[bool, bool, list[Event], RealTimeSink]:
        bus = EventBus()
        queue = bus.subscribe()
        sink = RealTimeSink()
        speech = SpeechOutput(synthesizer(), sink, bus, sentence_silence_s=0.1)
        daemon = Daemon(bus=bus, ear=cast(Any, None), agent=cast(Any, None), speech=speech)

        async def scene() -> bool:  # a vibe task whose last step is its closing line
            spoken = await speech.speak_aside(4, LONG_REPLY)
            await asyncio.sleep(0)  # and it goes on after the line
            return spoken

        task = asyncio.create_task(scene(), name="vibe-task")
        seen = await _events_until_started(queue)
        await asyncio.sleep(0.3)
        daemon.interrupt("heard 'stop' (stop)")
        daemon.interrupt("heard 'stop' (stop)")  # the whole utterance confirms it: no second cut
        spoken = await asyncio.wait_for(task, timeout=10)
        return spoken, task.cancelled(), [*seen, *_drained(queue)], sink

    spoken, cancelled, events, sink = asyncio.run(scenario())
    assert not spoken and not cancelled
    assert sink.aborted == 1
    assert [type(e).__name__ for e in events if isinstance(e, (BargeIn, TtsStopped))] == [
        "BargeIn",
        "TtsStopped",
    ]
    stop = next(e for e in events if isinstance(e, TtsStopped))
    barge_in = next(e for e in events if isinstance(e, BargeIn))
    assert stop.turn == barge_in.turn == 4 and stop.audio_s < 3.0  # the line's own turn


def test_with_nothing_playing_an_interrupt_does_nothing() -> None:
    async def scenario() -> list[Event]:
        bus = EventBus()
        queue = bus.subscribe()
        speech = SpeechOutput(synthesizer(), RealTimeSink(), bus, sentence_silence_s=0.1)
        daemon = Daemon(bus=bus, ear=cast(Any, None), agent=cast(Any, None), speech=speech)
        assert await speech.speak_aside(5, "The relax scene is ready.")
        daemon.interrupt("heard 'stop' (stop)")
        return _drained(queue)

    events = asyncio.run(scenario())
    assert not [e for e in events if isinstance(e, BargeIn)]
    assert [e.turn for e in events if isinstance(e, TtsStopped)] == [5]


class CountingSynthesizer:
    """The real piper voice, counting what it is asked to say."""

    def __init__(self) -> None:
        self._voice = synthesizer()
        self.sample_rate = self._voice.sample_rate
        self.asked: list[str] = []

    def synthesize(self, text: str) -> Any:
        self.asked.append(text)
        return self._voice.synthesize(text)


def test_a_familiar_reply_is_not_synthesized_again() -> None:
    async def scenario() -> CountingSynthesizer:
        bus = EventBus()
        voice = CountingSynthesizer()
        speech = SpeechOutput(voice, RealTimeSink(), bus, sentence_silence_s=0.1)
        await asyncio.to_thread(speech.warm, ["Turning on the kitchen light."])
        for turn in (1, 2):
            await asyncio.wait_for(speech.speak(turn, "Turning on the kitchen light. It is on."), timeout=30)
        return voice

    voice = asyncio.run(scenario())
    assert voice.asked == ["Turning on the kitchen light.", "It is on."]
