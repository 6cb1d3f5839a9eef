"""The barge-in lane's verdicts on one utterance: a request once heard is never dropped later."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from tests.speech_fixtures import RealTimeSink, synthesizer
from voiced.bus import EventBus
from voiced.daemon import Daemon
from voiced.ear.bargein import Evidence
from voiced.events import BargeInIgnored, Event
from voiced.mouth.speech import SpeechOutput

REQUEST = Evidence("Please turn on the kitchen light.", "", 0.0)  # not our echo, long enough
BURST = Evidence("Please.", "", 0.0, short=True)  # the same voice, checked at its first pause


class RecordingEar:
    def __init__(self) -> None:
        self.dropped: list[int] = []

    def drop(self, turn: int) -> None:
        self.dropped.append(turn)


async def _judged(daemon: Daemon, turn: int, evidence: Evidence) -> None:
    async def known() -> Evidence:
        return evidence

    daemon.check(turn, asyncio.create_task(known()))
    for _ in range(20):  # the check runs as a task of its own
        await asyncio.sleep(0)


def _verdicts(order: list[Evidence]) -> tuple[list[int], list[Event]]:
    async def scenario() -> tuple[list[int], list[Event]]:
        bus = EventBus()
        queue = bus.subscribe()
        ear = RecordingEar()
        speech = SpeechOutput(synthesizer(), RealTimeSink(), bus, sentence_silence_s=0.1)
        daemon = Daemon(bus=bus, ear=cast(Any, ear), agent=cast(Any, None), speech=speech)
        for evidence in order:
            await _judged(daemon, 5, evidence)
        events = []
        while not queue.empty():
            events.append(queue.get_nowait())
        return ear.dropped, events

    return asyncio.run(scenario())


def test_a_short_check_that_finishes_after_the_request_was_heard_does_not_drop_it() -> None:
    dropped, events = _verdicts([REQUEST, BURST])
    assert dropped == []
    assert not [e for e in events if isinstance(e, BargeInIgnored)]


def test_a_burst_judged_alone_is_a_backchannel_and_is_dropped() -> None:
    dropped, events = _verdicts([BURST])
    assert dropped == [5]
    assert [e.verdict for e in events if isinstance(e, BargeInIgnored)] == ["backchannel"]
