"""Replies rehearsed ahead of time: which, and only while nobody is talking to us."""

from __future__ import annotations

import asyncio
import threading
import time

from voiced.bus import EventBus
from voiced.devices.registry import DeviceRegistry
from voiced.events import AssistantState
from voiced.mouth.intents import LocalIntentAgent
from voiced.mouth.rehearsal import home_replies
from voiced.mouth.rehearsal import rehearse as rehearse_replies
from voiced.mouth.sentences import SentenceSplitter

REQUESTS = [
    "Dim the living room light.",
    "Make the kitchen light brighter.",
    "Turn the living room light blue.",
    "Make the bedroom light warm.",
    "Set the diffuser to lavender.",
    "Set the diffuser intensity to seventy percent.",
    "Play some classical music.",
    "Pause the music.",
    "Turn the music down.",
    "Set the volume to forty percent.",
    "Set the bedroom light to fifty percent.",
    "Turn off all the lights.",
    "Turn on the diffuser.",
]


def _sentences(text: str) -> list[str]:
    splitter = SentenceSplitter()
    return [*splitter.feed(text), *splitter.flush()]


def test_what_the_home_is_asked_most_is_answered_with_rehearsed_audio(registry: DeviceRegistry) -> None:
    rehearsed = list(home_replies(registry, 25, room=None, scent_limit=100))
    assert len(rehearsed) == len(set(rehearsed))
    daemon = LocalIntentAgent(registry, lambda _name: None, 25)  # as the daemon's own answers them
    for request in REQUESTS:
        reply = daemon.understand(request)
        assert reply.commands, request
        for sentence in _sentences(reply.text):
            assert sentence in rehearsed, (request, sentence)
    # a value nobody rounds is synthesized when it is asked for, not ahead of time
    odd = daemon.understand("set the kitchen light to thirty seven percent")
    assert odd.commands and not set(_sentences(odd.text)) & set(rehearsed)


class Recorder:
    """Keeps what it is given, from the rehearsal's worker thread, taking as long as piper would."""

    def __init__(self) -> None:
        self.kept: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, sentence: str) -> None:
        time.sleep(0.08)
        with self._lock:
            self.kept.append(sentence)

    def __len__(self) -> int:
        with self._lock:
            return len(self.kept)


async def _until(condition: object, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():  # type: ignore[operator]
            await asyncio.sleep(0.01)


def test_rehearsal_pauses_while_someone_speaks_to_us_and_goes_on_while_we_speak() -> None:
    async def scenario() -> tuple[list[str], list[str], int]:
        bus = EventBus()
        keep = Recorder()
        sentences = ["One.", "Two.", "Three.", "Four."]
        task = asyncio.create_task(rehearse_replies(bus, keep, iter(sentences)), name="rehearsal")
        await _until(lambda: len(keep) >= 1)  # idle at start: it begins at once
        bus.publish(AssistantState(state="listening", turn=1))
        await asyncio.sleep(0.3)
        held = list(keep.kept)
        bus.publish(AssistantState(state="thinking", turn=1))
        bus.publish(AssistantState(state="speaking", turn=1))
        done = await asyncio.wait_for(task, timeout=5)
        return held, keep.kept, done

    held, kept, done = asyncio.run(scenario())
    assert held in (["One."], ["One.", "Two."])  # the one under way when the user spoke may finish
    assert kept == ["One.", "Two.", "Three.", "Four."]
    assert done == 4


def test_rehearsal_waits_for_the_turn_to_end() -> None:
    async def scenario() -> tuple[int, int]:
        bus = EventBus()
        keep = Recorder()
        task = asyncio.create_task(rehearse_replies(bus, keep, iter(["A.", "B.", "C."])), name="rehearsal")
        await asyncio.sleep(0)  # it subscribes before the user speaks
        bus.publish(AssistantState(state="listening", turn=1))
        await asyncio.sleep(0.3)
        during = len(keep)
        bus.publish(AssistantState(state="idle", turn=1))
        await asyncio.wait_for(task, timeout=5)
        return during, len(keep)

    during, after = asyncio.run(scenario())
    assert during <= 1
    assert after == 3
