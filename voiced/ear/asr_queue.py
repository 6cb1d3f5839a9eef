"""Whisper calls one at a time, the most urgent first, and room by room.

The model answers one call at a time anyway (CTranslate2 queues them in arrival order), so a
check on speech over our reply used to wait behind a speculative early transcript and a finished
utterance, while the reply went on playing over the user. Here the order is ours: what decides
a barge-in first, then finished utterances, then guesses at a pause (asr_order.py); and every room
shares one Whisper (asr_home.py), whose jobs of one priority are taken room by room, so one room's
guesses and long utterances do not hold up another's command. An `AsrQueue` is one room's way in.
A glance (the first words of a burst over our reply) does not queue at all: it runs at once in a
thread of its own, on a model instance of its own, beside whatever transcription is running.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from voiced.ear.asr_home import MICROPHONE, HomeAsr, Reconsider, Result
from voiced.ear.asr_order import Priority
from voiced.ear.transcriber import Transcriber

__all__ = ["DRAIN_TIMEOUT_S", "AsrQueue", "HomeAsr", "Priority", "Reconsider", "Result"]

_LOGGER = logging.getLogger(__name__)
DRAIN_TIMEOUT_S = 60.0


class AsrQueue:
    def __init__(
        self,
        transcriber: Transcriber,
        reconsider: Reconsider | None = None,
        tidy: Callable[[], None] | None = None,
        *,
        home: HomeAsr | None = None,
        room: str = MICROPHONE,
    ) -> None:
        """`reconsider`: a second hearing of a turn's words the first would leave unacted on; never
        for a barge-in, which must be decided at once. `tidy`: run (in a thread) after each job, once
        its answer is given: memory.give_back, so one model's freed buffers are not kept while the
        next runs. `home`: the Whisper every room shares, `transcriber` its model; None: a Whisper
        queue of this room's alone. `room`: who asks, told apart from the other rooms of `home`."""
        if home is not None and home.transcriber is not transcriber:
            raise ValueError("a room's Whisper queue must use the home's transcriber")
        self._transcriber = transcriber
        self._home = home if home is not None else HomeAsr(transcriber)
        self._room = room
        self._reconsider = reconsider
        self._tidy = tidy
        self._glances = ThreadPoolExecutor(1, thread_name_prefix="asr-glance")

    def submit(
        self, samples: np.ndarray, priority: Priority, *, glance: bool = False
    ) -> asyncio.Future[Result]:
        """Queue a transcription; cancel the future to withdraw it (if it has not started).
        `glance`: only a quick look at the first words, for a barge-in, run at once beside the queue."""
        if glance:
            return asyncio.create_task(self._glance(samples), name="asr-glance")
        return self._home.add(samples, priority, self._room, self._reconsider, self._tidy)

    async def _glance(self, samples: np.ndarray) -> Result:
        started = time.monotonic()
        loop = asyncio.get_running_loop()
        hearing = await loop.run_in_executor(self._glances, self._transcriber.glance, samples)
        return hearing, time.monotonic() - started

    @property
    def pending(self) -> int:
        """This room's jobs waiting their turn."""
        return self._home.pending(self._room)

    async def run(self) -> None:
        """Work through the queue until cancelled (with the home's other rooms, when it is shared);
        whatever of this room's is left is cancelled with it."""
        try:
            async with self._home.serving():
                try:
                    await asyncio.get_running_loop().create_future()  # until cancelled
                finally:
                    self._home.withdraw(self._room)
        finally:
            self._glances.shutdown(wait=False, cancel_futures=True)

    async def drain(self, stall_s: float = DRAIN_TIMEOUT_S) -> None:
        """Until every job still wanted has its answer (the audio ended; its last words count). A
        long input read faster than real time (`--fast`) queues many: the limit is on a queue that
        stops moving (this room's jobs, or any room's finished), not on the whole."""
        deadline = time.monotonic() + stall_s
        moved = (self.pending, self._home.finished)
        while self._home.owes(self._room):
            if (self.pending, self._home.finished) != moved:
                moved, deadline = (self.pending, self._home.finished), time.monotonic() + stall_s
            if time.monotonic() > deadline:
                _LOGGER.error("speech recognition made no progress for %.1f s", stall_s)
                return
            await asyncio.sleep(0.01)
