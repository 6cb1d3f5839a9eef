"""One Whisper for the whole home: every room's jobs on one worker, one at a time, fairly.

The model answers one call at a time anyway (CTranslate2 queues them in arrival order), so a room
whose ear asks first, or asks often (a guess at every pause, a long utterance), would hold every
other room's finished command behind its own. Here the rooms (each satellite, the daemon's own
microphone) put their jobs in one list and the next is chosen by asr_order.py: the most urgent
first, and within a priority room by room. Each room talks to it through its own `AsrQueue`
(asr_queue.py); the worker runs while at least one room's queue runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from voiced.ear.asr_order import Priority, Waiting, next_up
from voiced.ear.transcriber import Hearing, Transcriber
from voiced.tasks import cancel_and_wait

_LOGGER = logging.getLogger(__name__)

Result = tuple[Hearing, float]  # what was heard, seconds Whisper took
Reconsider = Callable[[np.ndarray, Hearing], Hearing]  # a second ear (second_opinion.py), blocking
MICROPHONE = "microphone"  # the daemon's own room, among the satellites' ("satellite <name>")


@dataclass(eq=False)
class Job:
    waiting: Waiting
    samples: np.ndarray
    future: asyncio.Future[Result]
    reconsider: Reconsider | None  # the asking room's second ear
    tidy: Callable[[], None] | None  # run in a thread once it has answered (memory.give_back)


class HomeAsr:
    def __init__(self, transcriber: Transcriber) -> None:
        self.transcriber = transcriber
        self._jobs: list[Job] = []
        self._arrivals = itertools.count()
        self._starts = itertools.count()
        self._served: dict[str, int] = {}  # each room's last job's place in the order of starts
        self._wake = asyncio.Event()
        self._running: Job | None = None
        self.finished = 0  # jobs run to their end: how a room's drain sees the queue move
        self._worker: asyncio.Task[None] | None = None
        self._rooms = 0  # the rooms' queues running (`serving`)

    def add(
        self,
        samples: np.ndarray,
        priority: Priority,
        room: str,
        reconsider: Reconsider | None = None,
        tidy: Callable[[], None] | None = None,
    ) -> asyncio.Future[Result]:
        """Queue a job for `room`; cancel the future to withdraw it (if it has not started)."""
        future: asyncio.Future[Result] = asyncio.get_running_loop().create_future()
        waiting = Waiting(priority, room, next(self._arrivals))
        self._jobs.append(Job(waiting, samples, future, reconsider, tidy))
        self._wake.set()
        return future

    def pending(self, room: str) -> int:
        """`room`'s jobs waiting their turn."""
        return sum(1 for job in self._jobs if job.waiting.room == room and not job.future.done())

    def owes(self, room: str) -> bool:
        """Whether `room` still waits for an answer: a job queued, or one running."""
        running = self._running
        return self.pending(room) > 0 or (
            running is not None and running.waiting.room == room and not running.future.done()
        )

    def withdraw(self, room: str) -> None:
        """Cancel every job of `room`'s, the one running too: the worker moves on at once."""
        for job in self._jobs:
            if job.waiting.room == room:
                job.future.cancel()
        self._jobs = [job for job in self._jobs if job.waiting.room != room]
        if self._running is not None and self._running.waiting.room == room:
            self._running.future.cancel()

    @contextlib.asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        """The worker runs while at least one room is in this block; the last to leave stops it."""
        self._rooms += 1
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._work(), name="asr-home")
            self._worker.add_done_callback(_report)
        try:
            yield
        finally:
            self._rooms -= 1
            if self._rooms == 0 and self._worker is not None:
                worker, self._worker = self._worker, None
                await cancel_and_wait([worker])

    async def _work(self) -> None:
        """Work through the jobs until cancelled; whatever is left is cancelled with it."""
        try:
            while True:
                self._jobs = [job for job in self._jobs if not job.future.done()]  # withdrawn
                if not self._jobs:
                    self._wake.clear()
                    await self._wake.wait()
                    continue
                job = self._jobs.pop(next_up([job.waiting for job in self._jobs], self._served))
                self._served[job.waiting.room] = next(self._starts)
                self._running = job
                await self._transcribe(job)
                self._running = None
                self.finished += 1
                if job.tidy is not None:
                    await self._tidy(job.tidy)
        finally:
            for job in self._jobs:
                job.future.cancel()
            self._jobs.clear()
            if self._running is not None:
                self._running.future.cancel()
                self._running = None

    @staticmethod
    async def _tidy(tidy: Callable[[], None]) -> None:
        try:
            await asyncio.to_thread(tidy)
        except Exception:  # the next room's job must not wait on memory that was not given back
            _LOGGER.exception("tidying up after a Whisper job failed")

    async def _transcribe(self, job: Job) -> None:
        """Run one job; if its caller withdraws it meanwhile, move on at once: the thread cannot be
        stopped, but nothing needs to wait for a result nobody wants. The second ear is a step of
        its own, so a job withdrawn during the first never reaches it; never for a barge-in, which
        must be decided at once."""
        started = time.monotonic()
        samples, future = job.samples, job.future
        first = functools.partial(self.transcriber.transcribe_scored, samples)
        hearing = await self._step(first, future)
        reconsider = job.reconsider
        if hearing is not None and reconsider is not None and job.waiting.priority is not Priority.BARGE_IN:
            hearing = await self._step(functools.partial(reconsider, samples, hearing), future)
        if hearing is not None:
            future.set_result((hearing, time.monotonic() - started))

    @staticmethod
    async def _step(work: Callable[[], Hearing], future: asyncio.Future[Result]) -> Hearing | None:
        """`work` in a thread; None when the job was withdrawn meanwhile, or failed (then `future`
        holds the error: the one waiting for it decides what a failed hearing means)."""
        call = asyncio.create_task(asyncio.to_thread(work), name="asr-step")
        try:
            watched: list[asyncio.Future[Any]] = [call, future]
            await asyncio.wait(watched, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            await cancel_and_wait([call])  # the thread finishes on its own; its task ends at once
            raise
        if not call.done():
            call.add_done_callback(_forget)
            return None
        if future.done():
            return None
        error = call.exception()
        if error is not None:
            future.set_exception(error)
            return None
        return call.result()


def _report(worker: asyncio.Task[None]) -> None:
    """The worker stopped: say so if it was by a fault of ours (its jobs were cancelled with it)."""
    if not worker.cancelled() and worker.exception() is not None:
        _LOGGER.error("the home's Whisper queue stopped", exc_info=worker.exception())


def _forget(call: asyncio.Future[Hearing]) -> None:
    """A withdrawn job's thread has finished: its result (or failure) is not wanted."""
    if not call.cancelled():
        call.exception()
