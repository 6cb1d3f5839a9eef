"""The Whisper queue: one call at a time, a barge-in check before finished utterances before guesses."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

from voiced.ear.asr_queue import AsrQueue, Priority
from voiced.ear.transcriber import Hearing


class GatedTranscriber:
    """Answers with the first sample of the audio; the first call waits until the gate opens."""

    def __init__(self) -> None:
        self.order: list[int] = []
        self.gate = threading.Event()
        self.started = threading.Event()

    def transcribe(self, samples: np.ndarray) -> str:
        return self.transcribe_scored(samples).text

    def transcribe_scored(self, samples: np.ndarray) -> Hearing:
        self.started.set()
        assert self.gate.wait(10)
        tag = int(samples[0])
        if tag < 0:
            raise RuntimeError("the model broke")
        self.order.append(tag)
        return Hearing(f"job {tag}", 0.9)

    def glance(self, samples: np.ndarray) -> Hearing:
        self.order.append(int(samples[0]))
        return Hearing(f"glance {int(samples[0])}")


def audio(tag: int) -> np.ndarray:
    return np.full(160, tag, dtype=np.int16)


async def until_started(model: GatedTranscriber) -> None:
    assert await asyncio.to_thread(model.started.wait, 10)


def test_the_most_urgent_job_goes_next_and_a_withdrawn_one_never_runs() -> None:
    async def scenario() -> tuple[list[int], list[str]]:
        model = GatedTranscriber()
        queue = AsrQueue(model)
        worker = asyncio.create_task(queue.run(), name="asr")
        guess = queue.submit(audio(1), Priority.SPECULATIVE)
        await until_started(model)  # the guess is running: nothing can stop that
        utterance = queue.submit(audio(2), Priority.UTTERANCE)
        later_guess = queue.submit(audio(3), Priority.SPECULATIVE)
        withdrawn = queue.submit(audio(4), Priority.UTTERANCE)
        barge_in = queue.submit(audio(5), Priority.BARGE_IN)
        withdrawn.cancel()
        model.gate.set()
        results = await asyncio.wait_for(asyncio.gather(guess, utterance, later_guess, barge_in), 10)
        await queue.drain()
        worker.cancel()
        await asyncio.wait([worker], timeout=5)
        return model.order, [hearing.text for hearing, _took in results]

    order, texts = asyncio.run(scenario())
    assert order == [1, 5, 2, 3]
    assert texts == ["job 1", "job 2", "job 3", "job 5"]


def test_a_glance_is_answered_at_once_beside_a_transcription_that_runs() -> None:
    async def scenario() -> tuple[list[int], str, bool]:
        model = GatedTranscriber()
        queue = AsrQueue(model)
        worker = asyncio.create_task(queue.run(), name="asr")
        guess = queue.submit(audio(1), Priority.SPECULATIVE)
        await until_started(model)  # running, and held there: a glance must not wait for it
        waiting = queue.submit(audio(2), Priority.BARGE_IN)
        quick, _took = await asyncio.wait_for(queue.submit(audio(3), Priority.BARGE_IN, glance=True), 10)
        still_running = not guess.done() and not waiting.done()
        model.gate.set()
        await asyncio.wait_for(asyncio.gather(guess, waiting), 10)
        worker.cancel()
        await asyncio.wait([worker], timeout=5)
        return model.order, quick.text, still_running

    order, text, still_running = asyncio.run(scenario())
    assert text == "glance 3" and still_running
    assert order == [3, 1, 2]


def test_a_failed_call_reaches_its_caller_and_the_queue_goes_on() -> None:
    async def scenario() -> tuple[str, str]:
        model = GatedTranscriber()
        model.gate.set()
        queue = AsrQueue(model)
        worker = asyncio.create_task(queue.run(), name="asr")
        broken = queue.submit(audio(-1), Priority.UTTERANCE)
        fine = queue.submit(audio(7), Priority.UTTERANCE)
        with pytest.raises(RuntimeError, match="the model broke"):
            await asyncio.wait_for(broken, 10)
        hearing, _took = await asyncio.wait_for(fine, 10)
        text = hearing.text
        worker.cancel()
        await asyncio.wait([worker], timeout=5)
        return text, "ok"

    assert asyncio.run(scenario()) == ("job 7", "ok")


def test_stopping_the_queue_cancels_what_waits_so_no_caller_hangs() -> None:
    async def scenario() -> tuple[bool, bool]:
        model = GatedTranscriber()
        queue = AsrQueue(model)
        worker = asyncio.create_task(queue.run(), name="asr")
        running = queue.submit(audio(1), Priority.UTTERANCE)
        await until_started(model)
        waiting = queue.submit(audio(2), Priority.UTTERANCE)
        worker.cancel()
        await asyncio.wait([worker], timeout=5)
        model.gate.set()  # the thread finishes on its own; nobody waits for it
        return running.cancelled(), waiting.cancelled()

    assert asyncio.run(scenario()) == (True, True)


class OnlyFirstGated(GatedTranscriber):
    """Job 1 waits for the gate; every other job answers at once."""

    def transcribe_scored(self, samples: np.ndarray) -> Hearing:
        if int(samples[0]) != 1:
            self.order.append(int(samples[0]))
            return Hearing(f"job {int(samples[0])}", 0.9)
        return super().transcribe_scored(samples)


def test_a_job_withdrawn_while_it_runs_does_not_hold_up_the_next() -> None:
    async def scenario() -> str:
        model = OnlyFirstGated()
        queue = AsrQueue(model)
        worker = asyncio.create_task(queue.run(), name="asr")
        guess = queue.submit(audio(1), Priority.SPECULATIVE)
        await until_started(model)
        guess.cancel()  # the speaker went on: that guess is worthless, though Whisper is still on it
        hearing, _took = await asyncio.wait_for(queue.submit(audio(2), Priority.UTTERANCE), 5)
        text = hearing.text
        model.gate.set()
        worker.cancel()
        await asyncio.wait([worker], timeout=5)
        return text

    assert asyncio.run(scenario()) == "job 2"


class SlowTranscriber:
    """Each call takes `seconds`, as Whisper does on a busy CPU."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.heard: list[int] = []

    def transcribe(self, samples: np.ndarray) -> str:
        return self.transcribe_scored(samples).text

    def transcribe_scored(self, samples: np.ndarray) -> Hearing:
        threading.Event().wait(self.seconds)
        self.heard.append(int(samples[0]))
        return Hearing(f"job {samples[0]}", 0.9)

    def glance(self, samples: np.ndarray) -> Hearing:
        return self.transcribe_scored(samples)


def test_draining_a_long_queue_loses_nothing_while_it_moves() -> None:
    """A file read faster than real time queues many utterances: all are heard, however long the
    whole takes, as long as each finishes within the limit; a queue that stops moving is given up."""

    async def scenario() -> tuple[list[int], int]:
        model = SlowTranscriber(0.15)
        queue = AsrQueue(model)
        worker = asyncio.create_task(queue.run(), name="asr")
        jobs = [queue.submit(audio(tag), Priority.UTTERANCE) for tag in range(8)]  # 1.2 s in all
        await asyncio.wait_for(queue.drain(stall_s=0.5), 10)
        heard = list(model.heard)
        stuck = AsrQueue(SlowTranscriber(3.0))
        stuck_worker = asyncio.create_task(stuck.run(), name="asr-stuck")
        stuck.submit(audio(1), Priority.UTTERANCE)
        stuck.submit(audio(2), Priority.UTTERANCE)
        await asyncio.wait_for(stuck.drain(stall_s=0.3), 10)  # gives up, it does not hang
        left = stuck.pending
        for task in (worker, stuck_worker):
            task.cancel()
        await asyncio.wait([worker, stuck_worker], timeout=5)
        assert all(job.done() for job in jobs)
        return heard, left

    heard, left = asyncio.run(scenario())
    assert heard == list(range(8))
    assert left == 1


def test_the_memory_is_tidied_after_each_job_once_its_answer_is_given() -> None:
    async def scenario() -> tuple[list[tuple[int, int]], list[str]]:
        model = GatedTranscriber()
        model.gate.set()
        futures: list[asyncio.Future[tuple[Hearing, float]]] = []
        tidied: list[tuple[int, int]] = []  # at each tidy: jobs run, answers given
        answered = lambda: sum(f.done() for f in futures)  # noqa: E731
        queue = AsrQueue(model, tidy=lambda: tidied.append((len(model.order), answered())))
        worker = asyncio.create_task(queue.run(), name="asr")
        heard = []
        for tag in (1, 2):
            futures.append(queue.submit(audio(tag), Priority.UTTERANCE))
            heard.append((await futures[-1])[0].text)
        for _ in range(200):  # the tidy runs in a thread after the answer
            if len(tidied) == 2:
                break
            await asyncio.sleep(0.01)
        worker.cancel()
        with pytest.raises(asyncio.CancelledError):
            await worker
        return tidied, heard

    assert asyncio.run(scenario()) == ([(1, 1), (2, 2)], ["job 1", "job 2"])
