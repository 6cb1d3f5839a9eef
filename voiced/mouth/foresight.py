"""Replies synthesized while the ear waits to be sure the turn has ended.

At a pause the ear transcribes what was said so far and judges it a whole request
(end_of_turn.py); from then until the silence closes the turn there are ~100-300 ms in which
nothing else needs the cores. A private copy of the local intents (its own conversation, no
device touched, the room's own "here") says what it would answer, and the first sentence of that
answer is synthesized and held. When the turn closes and the real reply begins with the same
sentence, its first audio is taken from here (and kept with the rehearsed replies, so that it
outlives the process); when the speaker goes on, or the real reply differs (a device's state
changed the words), only piper's time was spent, and nothing is kept.
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from voiced.mouth.sentences import SentenceSplitter

_LOGGER = logging.getLogger(__name__)
HELD = 8  # sentences synthesized ahead and not said yet, the oldest dropped first
WAIT_S = 1.0  # the longest a reply waits for its sentence being synthesized ahead (piper: ~0.1-0.3 s)


def first_sentence(text: str) -> str | None:
    splitter = SentenceSplitter()
    return next(iter([*splitter.feed(text), *splitter.flush()]), None)


@dataclass
class _Job:
    """One pause's words on their way to audio."""

    sentence: str | None = None
    known: threading.Event = field(default_factory=threading.Event)  # `sentence` decided (or none)
    done: threading.Event = field(default_factory=threading.Event)  # its audio held (or it failed)

    def finish(self) -> None:
        self.known.set()
        self.done.set()


class Foresight:
    def __init__(
        self,
        reply_of: Callable[[str], str | None],
        synthesize: Callable[[str], np.ndarray],
        said: Callable[[str, np.ndarray], None] = lambda _sentence, _audio: None,
        prepare: Callable[[], None] | None = None,
        *,
        wait_s: float = WAIT_S,
    ) -> None:
        """`reply_of`: what the private intents would answer words heard (None: they would not act
        on them as they stand), blocking. `synthesize`: piper, blocking. `said`: given a sentence
        taken for a reply, on the worker (off the reply's way): to keep it for good. `prepare`: run
        first, on the worker (building the private intents takes ~1 s: not at the first turn's
        pause). `wait_s`: the longest `take` waits for a sentence being synthesized."""
        self._reply_of = reply_of
        self._synthesize = synthesize
        self._said = said
        self._wait_s = wait_s
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="foresight")
        self._lock = threading.Lock()
        # the latest pause's job (queued or at work) and what stops it while queued
        self._latest: tuple[concurrent.futures.Future[None], _Job] | None = None
        self._held: OrderedDict[str, np.ndarray] = OrderedDict()
        self._closed = False
        self._prepare = prepare
        self.prepare()

    def prepare(self) -> None:
        """Run `prepare` on the worker (again: after the home's devices changed, say)."""
        with self._lock:
            if self._prepare is not None and not self._closed:
                self._pool.submit(self._safely, self._prepare)

    def foresee(self, text: str) -> None:
        """Words heard at a pause, judged a whole request (on the event loop: returns at once). A
        job still queued for earlier words is dropped: these are the utterance's latest."""
        with self._lock:
            if self._closed:
                return
            if self._latest is not None and self._latest[0].cancel():  # once at work, it finishes
                self._latest[1].finish()
            job = _Job()
            self._latest = (self._pool.submit(self._safely, lambda: self._ahead(text, job)), job)

    def take(self, sentence: str) -> np.ndarray | None:
        """The audio of `sentence` synthesized ahead, waiting (at most `wait_s`) while the latest
        pause's job is saying it or has yet to decide what to say (blocking: from the thread about to
        synthesize the reply, which would wait for piper all the same); None: not foreseen."""
        with self._lock:
            held = self._held.pop(sentence, None)
            job = self._latest[1] if self._latest is not None else None
        if held is None and job is not None and not job.done.is_set():
            if job.known.wait(self._wait_s) and job.sentence == sentence:
                job.done.wait(self._wait_s)
            with self._lock:
                held = self._held.pop(sentence, None)
        if held is not None:
            with self._lock:
                if not self._closed:
                    audio = held
                    self._pool.submit(self._safely, lambda: self._said(sentence, audio))
        return held

    def close(self) -> None:
        """Stop taking words; a job at work finishes on its own (nothing waits for it)."""
        with self._lock:
            self._closed = True
            if self._latest is not None:
                self._latest[1].finish()  # a reply does not wait for it
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _ahead(self, text: str, job: _Job) -> None:
        try:
            reply = self._reply_of(text)
            job.sentence = first_sentence(reply) if reply else None
            job.known.set()
            if job.sentence is None:
                return
            with self._lock:
                if job.sentence in self._held:
                    return
            audio = self._synthesize(job.sentence)
            with self._lock:
                self._held[job.sentence] = audio
                while len(self._held) > HELD:
                    self._held.popitem(last=False)
            _LOGGER.debug("synthesized ahead of the turn's end: %r", job.sentence)
        finally:
            job.finish()

    def _safely(self, work: Callable[[], None]) -> None:
        try:
            work()
        except Exception:  # a reply not ready ahead is synthesized when said
            _LOGGER.warning("a reply could not be synthesized ahead of time", exc_info=True)
