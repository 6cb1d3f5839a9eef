"""Whisper calls one at a time, the most urgent first.

The model answers one call at a time anyway (CTranslate2 queues them in arrival order), so a
check on speech over our reply used to wait behind a speculative early transcript and a finished
utterance, while the reply went on playing over the user. Here the order is ours: what decides
a barge-in first, then finished utterances, then guesses at a pause. A glance (the first words
of a burst over our reply) does not queue at all: it runs at once in a thread of its own, on a
model instance of its own, beside whatever transcription is running.
"""

from __future__ import annotations

import asyncio
import functools
import heapq
import itertools
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from enum import IntEnum
from typing import Any

import numpy as np

from voiced.ear.transcriber import Hearing, Transcriber
from voiced.tasks import cancel_and_wait

_LOGGER = logging.getLogger(__name__)
DRAIN_TIMEOUT_S = 60.0

Result = tuple[Hearing, float]  # what was heard, seconds Whisper took
Reconsider = Callable[[np.ndarray, Hearing], Hearing]  # a second ear (second_opinion.py), blocking


class Priority(IntEnum):
    BARGE_IN = 0  # speech over our reply: the reply plays on until this is decided
    UTTERANCE = 1  # a finished utterance: the user waits for the answer
    SPECULATIVE = 2  # the speaker paused: a guess that may be thrown away


class AsrQueue:
    def __init__(
        self,
        transcriber: Transcriber,
        reconsider: Reconsider | None = None,
        tidy: Callable[[], None] | None = None,
    ) -> None:
        """`reconsider`: a second hearing of a turn's words the first would leave unacted on; never
        for a barge-in, which must be decided at once. `tidy`: run (in a thread) after each job, once
        its answer is given: memory.give_back, so one model's freed buffers are not kept while the
        next runs."""
        self._transcriber = transcriber
        self._reconsider = reconsider
        self._tidy = tidy
        self._jobs: list[tuple[int, int, np.ndarray, asyncio.Future[Result]]] = []
        self._glances = ThreadPoolExecutor(1, thread_name_prefix="asr-glance")
        self._order = itertools.count()  # first come, first served within a priority
        self._wake = asyncio.Event()
        self._running: asyncio.Future[Result] | None = None

    def submit(
        self, samples: np.ndarray, priority: Priority, *, glance: bool = False
    ) -> asyncio.Future[Result]:
        """Queue a transcription; cancel the future to withdraw it (if it has not started).
        `glance`: only a quick look at the first words, for a barge-in, run at once beside the queue."""
        if glance:
            return asyncio.create_task(self._glance(samples), name="asr-glance")
        future: asyncio.Future[Result] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._jobs, (int(priority), next(self._order), samples, future))
        self._wake.set()
        return future

    async def _glance(self, samples: np.ndarray) -> Result:
        started = time.monotonic()
        loop = asyncio.get_running_loop()
        hearing = await loop.run_in_executor(self._glances, self._transcriber.glance, samples)
        return hearing, time.monotonic() - started

    @property
    def pending(self) -> int:
        return sum(1 for *_rest, future in self._jobs if not future.done())

    async def run(self) -> None:
        """Work through the queue until cancelled; whatever is left is cancelled with it."""
        try:
            while True:
                while not self._jobs:
                    self._wake.clear()
                    await self._wake.wait()
                priority, _order, samples, future = heapq.heappop(self._jobs)
                if future.done():  # withdrawn before its turn
                    continue
                self._running = future
                await self._transcribe(samples, future, Priority(priority))
                self._running = None
                if self._tidy is not None:
                    await asyncio.to_thread(self._tidy)
        finally:
            for *_rest, future in self._jobs:
                future.cancel()
            self._jobs.clear()
            if self._running is not None:
                self._running.cancel()
            self._glances.shutdown(wait=False, cancel_futures=True)

    async def drain(self, stall_s: float = DRAIN_TIMEOUT_S) -> None:
        """Until every job still wanted has its answer (the audio ended; its last words count). A
        long input read faster than real time (`--fast`) queues many: the limit is on a queue that
        stops moving, not on the whole."""
        deadline = time.monotonic() + stall_s
        left = self.pending
        while self.pending or (self._running is not None and not self._running.done()):
            if self.pending != left:
                left, deadline = self.pending, time.monotonic() + stall_s
            if time.monotonic() > deadline:
                _LOGGER.error("speech recognition made no progress for %.1f s", stall_s)
                return
            await asyncio.sleep(0.01)

    async def _transcribe(
        self, samples: np.ndarray, future: asyncio.Future[Result], priority: Priority
    ) -> None:
        """Run one job; if its caller withdraws it meanwhile, move on at once: the thread cannot be
        stopped, but nothing needs to wait for a result nobody wants. The second ear is a step of
        its own, so a job withdrawn during the first never reaches it."""
        started = time.monotonic()
        hearing = await self._step(functools.partial(self._transcriber.transcribe_scored, samples), future)
        if hearing is not None and self._reconsider is not None and priority is not Priority.BARGE_IN:
            hearing = await self._step(functools.partial(self._reconsider, samples, hearing), future)
        if hearing is not None:
            future.set_result((hearing, time.monotonic() - started))

    async def _step(self, work: Callable[[], Hearing], future: asyncio.Future[Result]) -> Hearing | None:
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


def _forget(call: asyncio.Future[Hearing]) -> None:
    """A withdrawn job's thread has finished: its result (or failure) is not wanted."""
    if not call.cancelled():
        call.exception()
