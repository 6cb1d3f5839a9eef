"""Replies rehearsed ahead of time: which, and only while nobody is talking to us."""

from __future__ import annotations

import asyncio
import threading
import time

from voiced.bus import EventBus
from voiced.devices.registry import DeviceRegistry
from voiced.events import AssistantState, HomeLearned, ReplyResumed, SpeechStarted
from voiced.mouth.intents import LocalIntentAgent
from voiced.mouth.rehearsal import Quiet, home_replies
from voiced.mouth.rehearsal import rehearse as rehearse_replies
from voiced.mouth.sentences import SentenceSplitter
from voiced.tasks import cancel_and_wait

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

    def __call__(self, sentence: str) -> bool:
        with self._lock:
            if sentence in self.kept:
                return False
        time.sleep(0.08)
        with self._lock:
            self.kept.append(sentence)
        return True

    def __len__(self) -> int:
        with self._lock:
            return len(self.kept)


async def _until(condition: object, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():  # type: ignore[operator]
            await asyncio.sleep(0.01)


def _rehearsing(bus: EventBus, keep: Recorder, *lists: list[str]) -> asyncio.Task[None]:
    made = iter(lists)  # each time the list is made (at start, then when the home is learned anew)
    events = bus.subscribe("rehearsal")
    return asyncio.create_task(rehearse_replies(events, keep, lambda: iter(next(made))), name="rehearsal")


def test_rehearsal_pauses_while_someone_speaks_to_us_and_goes_on_while_we_speak() -> None:
    async def scenario() -> tuple[list[str], list[str]]:
        bus = EventBus()
        keep = Recorder()
        task = _rehearsing(bus, keep, ["One.", "Two.", "Three.", "Four."])
        try:
            await _until(lambda: len(keep) >= 1)  # idle at start: it begins at once
            bus.publish(AssistantState(state="listening", turn=1))
            await asyncio.sleep(0.3)
            held = list(keep.kept)
            bus.publish(AssistantState(state="thinking", turn=1))
            bus.publish(AssistantState(state="speaking", turn=1))
            await _until(lambda: len(keep) == 4)
        finally:
            await cancel_and_wait([task])
        return held, keep.kept

    held, kept = asyncio.run(scenario())
    assert held in (["One."], ["One.", "Two."])  # the one under way when the user spoke may finish
    assert kept == ["One.", "Two.", "Three.", "Four."]


def test_rehearsal_waits_for_the_turn_to_end() -> None:
    async def scenario() -> tuple[int, int]:
        bus = EventBus()
        keep = Recorder()
        task = _rehearsing(bus, keep, ["A.", "B.", "C."])
        try:
            await asyncio.sleep(0)  # it subscribes before the user speaks
            bus.publish(AssistantState(state="listening", turn=1))
            await asyncio.sleep(0.3)
            during = len(keep)
            bus.publish(AssistantState(state="idle", turn=1))
            await _until(lambda: len(keep) == 3)
        finally:
            await cancel_and_wait([task])
        return during, len(keep)

    during, after = asyncio.run(scenario())
    assert during == 0
    assert after == 3


def test_devices_learned_later_are_rehearsed_too() -> None:
    async def scenario() -> list[str]:
        bus = EventBus()
        keep = Recorder()
        task = _rehearsing(
            bus,
            keep,
            ["Turning on the kitchen light."],
            ["Turning on the kitchen light.", "Turning on the porch light."],
        )
        try:
            await _until(lambda: len(keep) == 1)
            await asyncio.sleep(0.2)  # done: it waits for the home to change
            bus.publish(HomeLearned(devices=("kitchen_light", "porch_light"), seconds=0.5))
            await _until(lambda: len(keep) == 2)
        finally:
            await cancel_and_wait([task])
        return keep.kept

    assert asyncio.run(scenario()) == ["Turning on the kitchen light.", "Turning on the porch light."]


def test_quiet_while_idle_or_speaking_but_not_while_someone_talks_over_the_reply() -> None:
    quiet = Quiet()
    assert quiet.now
    for state, expected in (("listening", False), ("thinking", False), ("speaking", True), ("muted", True)):
        quiet.hear(AssistantState(state=state, turn=1))  # type: ignore[arg-type]
        assert quiet.now is expected, state
    quiet.hear(AssistantState(state="speaking", turn=1))
    quiet.hear(SpeechStarted(turn=2, over_reply=True))  # the mode stays "speaking" while it is judged
    assert not quiet.now
    quiet.hear(ReplyResumed(turn=1, by_turn=2))  # an "uh-huh": the reply goes on
    assert quiet.now
    quiet.hear(SpeechStarted(turn=3, over_reply=True))
    quiet.hear(AssistantState(state="listening", turn=3))  # a request: the reply yielded
    assert not quiet.now
