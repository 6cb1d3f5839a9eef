"""The floor lane in the daemon, on a real SpeechOutput (piper) and a sink that plays in real time:
speech over the reply pauses it at once, a backchannel resumes it with nothing lost, a request
cancels it and is the next turn, and a request once heard is never dropped by a later look."""

from __future__ import annotations

import asyncio
import time
from typing import Any, cast

from tests.speech_fixtures import RealTimeSink, synthesizer
from voiced.bus import EventBus
from voiced.daemon import Daemon
from voiced.ear.bargein import Evidence, Verdict
from voiced.events import BargeIn, BargeInIgnored, Event, ReplyPaused, ReplyResumed
from voiced.mouth.speech import SpeechOutput

SENTENCES = ["Here is the forecast for today.", "The morning starts cool and cloudy."]
REPLY = " ".join(SENTENCES)
GAP_S = 0.1
REQUEST = Evidence("Please turn on the kitchen light.", "", -3.0)  # not our echo, long enough
BURST = Evidence("Please.", "", -3.0, short=True)  # the same voice, looked at when it paused
UH_HUH = Evidence("Uh-huh.", "", -4.0, short=True)


class RecordingEar:
    def __init__(self) -> None:
        self.dropped: list[int] = []

    def drop(self, turn: int) -> None:
        self.dropped.append(turn)


def known(evidence: Evidence) -> asyncio.Task[Evidence]:
    async def have() -> Evidence:
        return evidence

    return asyncio.create_task(have())


async def until(condition: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)


def drained(queue: asyncio.Queue[Event]) -> list[Event]:
    events = []
    while not queue.empty():
        events.append(queue.get_nowait())
    return events


async def _room() -> tuple[Daemon, SpeechOutput, RealTimeSink, RecordingEar, asyncio.Queue[Event]]:
    bus = EventBus()
    queue = bus.subscribe()
    sink, ear = RealTimeSink(), RecordingEar()
    speech = SpeechOutput(synthesizer(), sink, bus, sentence_silence_s=GAP_S)
    daemon = Daemon(bus=bus, ear=cast(Any, ear), agent=cast(Any, None), speech=speech)
    return daemon, speech, sink, ear, queue


def test_a_backchannel_pauses_the_reply_then_resumes_it_with_nothing_lost() -> None:
    async def scenario() -> tuple[bool, float, float, list[Event], list[int]]:
        daemon, speech, sink, ear, queue = await _room()
        tts = synthesizer()  # deterministic: the same sentence gives the same samples
        whole = sum([len(tts.synthesize(text)) for text in SENTENCES]) / tts.sample_rate
        aside = asyncio.create_task(speech.speak_aside(7, REPLY))
        await until(lambda: speech.speaking and sink.played_s > 0.5)
        daemon.floor.voice_over(5)
        daemon.floor.acoustics(5, -4.0)
        assert sink.paused  # at once: no Whisper, no waiting
        held = sink.played_s
        await asyncio.sleep(0.5)
        still = sink.played_s - held
        daemon.floor.words(5, known(UH_HUH), "paused")  # "uh-" paused: the floor waits for its end
        await asyncio.sleep(0.2)
        assert sink.paused
        daemon.floor.words(5, known(UH_HUH), "final")
        await until(lambda: not sink.paused)
        outcome = await asyncio.wait_for(daemon.floor.outcome(5), 10)
        said_whole = await asyncio.wait_for(aside, 60)
        assert outcome is Verdict.BACKCHANNEL
        return said_whole, still, sink.played_s - whole - GAP_S, drained(queue), ear.dropped

    said_whole, still, extra, events, dropped = asyncio.run(scenario())
    assert said_whole
    assert still < 0.05  # nothing more reached the speaker while paused
    assert abs(extra) < 0.01  # every sample of the reply was played, once
    assert [type(e) for e in events if isinstance(e, ReplyPaused | ReplyResumed)] == [
        ReplyPaused,
        ReplyResumed,
    ]
    assert [e.verdict for e in events if isinstance(e, BargeInIgnored)] == ["backchannel"]
    assert not [e for e in events if isinstance(e, BargeIn)]
    assert dropped == [5]


def test_a_request_over_the_reply_cancels_it_and_a_later_short_look_does_not_drop_it() -> None:
    async def scenario() -> tuple[bool, Verdict, list[Event], list[int]]:
        daemon, speech, _sink, ear, queue = await _room()
        aside = asyncio.create_task(speech.speak_aside(7, REPLY))
        await until(lambda: speech.speaking)
        daemon.floor.voice_over(5)
        daemon.floor.acoustics(5, -3.0)
        daemon.floor.words(5, known(REQUEST), "early")
        said_whole = await asyncio.wait_for(aside, 10)
        daemon.floor.words(5, known(BURST), "paused")  # a look at less of it, finishing later
        daemon.floor.words(5, known(BURST), "final")
        outcome = await asyncio.wait_for(daemon.floor.outcome(5), 10)
        return said_whole, outcome, drained(queue), ear.dropped

    said_whole, outcome, events, dropped = asyncio.run(scenario())
    assert not said_whole
    assert outcome is Verdict.SPEECH  # the next turn
    assert [e.turn for e in events if isinstance(e, BargeIn)] == [7]
    assert not [e for e in events if isinstance(e, BargeInIgnored)]
    assert dropped == []


def test_an_utterance_given_up_unheard_gives_the_floor_back() -> None:
    """Muted (or restarted by the wake word) mid-utterance: no words will come, the reply resumes."""

    async def scenario() -> tuple[bool, bool, Verdict]:
        daemon, speech, sink, _ear, _queue = await _room()
        aside = asyncio.create_task(speech.speak_aside(7, REPLY))
        await until(lambda: speech.speaking)
        daemon.floor.voice_over(5)
        daemon.floor.acoustics(5, -2.0)
        paused = sink.paused
        daemon.floor.abandoned(5)
        outcome = await asyncio.wait_for(daemon.floor.outcome(5), 10)
        return paused, await asyncio.wait_for(aside, 60), outcome

    paused, said_whole, outcome = asyncio.run(scenario())
    assert paused and said_whole
    assert outcome is Verdict.BACKCHANNEL
