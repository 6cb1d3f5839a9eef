"""One Whisper for every room (issue 29): within a priority the jobs are taken room by room, so one
room's long utterances and guesses do not hold up another room's short command."""

from __future__ import annotations

import asyncio
import itertools
import threading
from pathlib import Path

import numpy as np
import pytest

from tests.speech_fixtures import spoken
from voiced.config import AsrConfig
from voiced.ear.asr_order import NEVER, Priority, Waiting, next_up
from voiced.ear.asr_queue import AsrQueue, HomeAsr, Result
from voiced.ear.transcriber import Hearing
from voiced.ear.whisper import WhisperTranscriber

UTTERANCE, SPECULATIVE, BARGE_IN = Priority.UTTERANCE, Priority.SPECULATIVE, Priority.BARGE_IN


def taken(waiting: list[Waiting], served: dict[str, int]) -> list[tuple[str, int]]:
    """The order the jobs are run in, each start recorded as the worker records it."""
    served, left, order = dict(served), list(waiting), []
    starts = itertools.count(max(served.values(), default=NEVER) + 1)
    while left:
        job = left.pop(next_up(left, served))
        served[job.room] = next(starts)
        order.append((job.room, job.order))
    return order


def test_a_room_that_just_had_a_job_goes_behind_another_rooms_waiting_one() -> None:
    # A's job 0 is running; A queued four more (utterances and guesses), then B one command
    waiting = [
        Waiting(UTTERANCE, "A", 1),
        Waiting(SPECULATIVE, "A", 2),
        Waiting(UTTERANCE, "A", 3),
        Waiting(SPECULATIVE, "A", 4),
        Waiting(UTTERANCE, "B", 5),
    ]
    assert waiting[next_up(waiting, {"A": 0})] == Waiting(UTTERANCE, "B", 5)
    assert taken(waiting, {"A": 0}) == [("B", 5), ("A", 1), ("A", 3), ("A", 2), ("A", 4)]


def test_urgency_comes_before_fairness() -> None:
    # a barge-in decides whether a reply goes on playing over someone: it goes first, whoever asks;
    # and a room's guess never goes before another room's finished utterance
    waiting = [Waiting(SPECULATIVE, "B", 1), Waiting(UTTERANCE, "A", 2), Waiting(BARGE_IN, "A", 3)]
    assert taken(waiting, {"A": 0}) == [("A", 3), ("A", 2), ("B", 1)]


def test_rooms_take_turns_and_one_room_alone_is_first_come_first_served() -> None:
    three = [Waiting(UTTERANCE, room, order) for order, room in enumerate("AABBCC", start=1)]
    assert [room for room, _ in taken(three, {"A": 0})] == list("BCABCA")
    assert [room for room, _ in taken(three, {})] == list("ABCABC")  # never served: who came first
    alone = [Waiting(SPECULATIVE, "A", 1), Waiting(UTTERANCE, "A", 2), Waiting(UTTERANCE, "A", 3)]
    assert taken(alone, {"A": 0}) == [("A", 2), ("A", 3), ("A", 1)]


@pytest.fixture(scope="module")
def whisper() -> WhisperTranscriber:
    return WhisperTranscriber(AsrConfig(), Path("models"))


def test_a_short_command_from_one_room_is_answered_before_another_rooms_queue(
    whisper: WhisperTranscriber,
) -> None:
    """The real tiny.en, shared: the kitchen is heard at length (a long utterance, a guess at its
    pause, another utterance, another guess); the bedroom's command, said while the kitchen's first
    is transcribed, is answered next, before the rest of the kitchen's queue."""
    story = spoken(
        "Tell me about the lights in the kitchen, the music in the bedroom, the scent in the "
        "living room, and then set the whole house for a quiet evening with some soft jazz."
    )
    command = spoken("Turn on the kitchen light.")

    async def scenario() -> tuple[list[str], str]:
        home = HomeAsr(whisper)
        kitchen = AsrQueue(whisper, home=home, room="satellite kitchen")
        bedroom = AsrQueue(whisper, home=home, room="satellite bedroom")
        workers = [
            asyncio.create_task(queue.run(), name=f"asr-{n}") for n, queue in enumerate((kitchen, bedroom))
        ]
        answered: list[str] = []

        def answer(name: str, job: asyncio.Future[Result]) -> asyncio.Future[Result]:
            job.add_done_callback(lambda _job: answered.append(name))
            return job

        jobs = [
            answer("kitchen 1", kitchen.submit(story, UTTERANCE)),
            answer("kitchen guess 2", kitchen.submit(story[: len(story) // 2], SPECULATIVE)),
            answer("kitchen 3", kitchen.submit(story, UTTERANCE)),
            answer("kitchen guess 4", kitchen.submit(story[: len(story) // 3], SPECULATIVE)),
        ]
        for _ in range(5000):  # until the kitchen's first is taken: Whisper is on it
            if kitchen.pending == 3:
                break
            await asyncio.sleep(0.001)
        assert kitchen.pending == 3 and not jobs[0].done()
        short = answer("bedroom", bedroom.submit(command, UTTERANCE))
        heard, _took = await asyncio.wait_for(short, 120)
        await asyncio.wait_for(asyncio.gather(*jobs), 300)
        for worker in workers:
            worker.cancel()
        await asyncio.wait(workers, timeout=5)
        return answered, heard.text

    answered, text = asyncio.run(scenario())
    assert answered == ["kitchen 1", "bedroom", "kitchen 3", "kitchen guess 2", "kitchen guess 4"]
    assert text.rstrip(".").lower() == "turn on the kitchen light"


class HeldTranscriber:
    """Answers with the first sample of the audio; audio tagged 1 waits until the gate opens."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.started = threading.Event()

    def transcribe(self, samples: np.ndarray) -> str:
        return self.transcribe_scored(samples).text

    def transcribe_scored(self, samples: np.ndarray) -> Hearing:
        if int(samples[0]) == 1:
            self.started.set()
            assert self.gate.wait(10)
        return Hearing(f"job {int(samples[0])}")

    def glance(self, samples: np.ndarray) -> Hearing:
        return self.transcribe_scored(samples)


def test_a_room_that_stops_withdraws_only_its_own_jobs_and_the_last_stops_the_worker() -> None:
    async def scenario() -> tuple[bool, bool, str, bool]:
        model = HeldTranscriber()
        home = HomeAsr(model)
        kitchen, bedroom = (
            AsrQueue(model, home=home, room="kitchen"),
            AsrQueue(model, home=home, room="bedroom"),
        )
        kitchen_run = asyncio.create_task(kitchen.run(), name="asr-kitchen")
        bedroom_run = asyncio.create_task(bedroom.run(), name="asr-bedroom")
        running = kitchen.submit(np.full(160, 1, np.int16), UTTERANCE)
        assert await asyncio.to_thread(model.started.wait, 10)
        waiting = kitchen.submit(np.full(160, 2, np.int16), UTTERANCE)
        other = bedroom.submit(np.full(160, 3, np.int16), UTTERANCE)
        kitchen_run.cancel()  # the kitchen's satellite went away: its jobs with it, not the bedroom's
        await asyncio.wait([kitchen_run], timeout=5)
        heard, _took = await asyncio.wait_for(other, 5)  # not held by the kitchen's thread either
        model.gate.set()
        bedroom_run.cancel()
        await asyncio.wait([bedroom_run], timeout=5)
        worker_left = any(task.get_name() == "asr-home" for task in asyncio.all_tasks())
        return running.cancelled(), waiting.cancelled(), heard.text, worker_left

    assert asyncio.run(scenario()) == (True, True, "job 3", False)


def test_a_rooms_queue_uses_the_homes_whisper() -> None:
    with pytest.raises(ValueError, match="home's transcriber"):
        AsrQueue(HeldTranscriber(), home=HomeAsr(HeldTranscriber()))
