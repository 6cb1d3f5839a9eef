"""The bus: bounded subscriber queues with a stated overflow policy, wall-clock time on events."""

from __future__ import annotations

import asyncio
import time

import pytest

from voiced.assistant_state import next_mode
from voiced.bus import EventBus, SubscriptionClosed
from voiced.events import (
    AssistantMode,
    BargeIn,
    Event,
    InputEnded,
    SpeechEnded,
    SpeechStarted,
    Transcript,
    TtsStarted,
    TtsStopped,
    TurnFinished,
)


def test_events_carry_wall_clock_time_and_monotonic_time() -> None:
    before = time.time()
    event = InputEnded()
    assert before <= event.at <= time.time()
    assert event.to_dict()["at"] == event.at and "t" in event.to_dict()


def test_a_slow_part_of_the_daemon_keeps_the_newest_events_and_counts_the_dropped() -> None:
    async def scenario() -> None:
        bus = EventBus()
        slow = bus.subscribe("slow", limit=3)
        for turn in range(10):
            bus.publish(TurnFinished(turn=turn))
        assert slow.dropped == 7 and not slow.closed
        assert [(await slow.get()).turn for _ in range(3)] == [7, 8, 9]  # type: ignore[attr-defined]
        assert bus.subscribers == 1

    asyncio.run(scenario())


def test_a_web_client_that_falls_behind_is_disconnected_and_never_grows() -> None:
    async def scenario() -> None:
        bus = EventBus()
        client = bus.subscribe("web", limit=5, overflow="disconnect")
        healthy = bus.subscribe("console")
        for turn in range(1000):
            bus.publish(TurnFinished(turn=turn))
        assert client.closed and client.qsize() == 6  # five events and the close mark
        assert bus.subscribers == 1 and healthy.qsize() == 1000
        got = [await client.get() for _ in range(5)]
        assert [e.turn for e in got] == [0, 1, 2, 3, 4]  # type: ignore[attr-defined]
        with pytest.raises(SubscriptionClosed):
            await asyncio.wait_for(client.get(), timeout=1)

    asyncio.run(scenario())


def test_unsubscribing_wakes_a_waiting_reader() -> None:
    async def scenario() -> None:
        bus = EventBus()
        sub = bus.subscribe("reader")
        reader = asyncio.create_task(sub.get())
        await asyncio.sleep(0)
        bus.unsubscribe(sub)
        with pytest.raises(SubscriptionClosed):
            await asyncio.wait_for(reader, timeout=1)
        bus.publish(InputEnded())  # nobody left to deliver to
        assert bus.subscribers == 0

    asyncio.run(scenario())


def _modes(events: list[Event], start: AssistantMode = "idle") -> list[AssistantMode]:
    modes, mode = [], start
    for event in events:
        mode = next_mode(mode, event)
        modes.append(mode)
    return modes


def test_a_turn_goes_listening_thinking_speaking_idle() -> None:
    turn = [
        SpeechStarted(turn=1),
        SpeechEnded(turn=1, duration_s=1.0, voice_end_t=0.0),
        Transcript(turn=1, text="lights on"),
        TtsStarted(turn=1),
        TtsStopped(turn=1, audio_s=1.0),
        TurnFinished(turn=1),
    ]
    assert _modes(turn) == ["listening", "thinking", "thinking", "speaking", "thinking", "idle"]


def test_speech_over_a_reply_keeps_speaking_until_the_reply_yields() -> None:
    events = [TtsStarted(turn=1), SpeechStarted(turn=2, over_reply=True), BargeIn(turn=1, reason="stop")]
    assert _modes(events) == ["speaking", "speaking", "listening"]
    # an ignored backchannel: the reply went on, and its words do not make us "thinking"
    events = [TtsStarted(turn=1), SpeechStarted(turn=2, over_reply=True), Transcript(turn=2, text="uh-huh")]
    assert _modes(events) == ["speaking", "speaking", "speaking"]


def test_a_narration_after_its_turn_ends_idle_not_thinking() -> None:
    """A scene's closing line is spoken for a turn that has finished: no TurnFinished follows it."""
    mode: AssistantMode = "idle"
    for event in (TtsStarted(turn=3), TtsStopped(turn=3, audio_s=1.0)):
        mode = next_mode(mode, event, finished_turn=3)
    assert mode == "idle"
    assert next_mode("speaking", TtsStopped(turn=4, audio_s=1.0), finished_turn=3) == "thinking"


def test_muted_stays_muted_whatever_is_heard() -> None:
    assert _modes([SpeechStarted(turn=1), TtsStarted(turn=1)], start="muted") == ["muted", "muted"]
