"""Replies synthesized while the ear waits to be sure the turn has ended.

At a pause the ear transcribes what was said so far and judges it a whole request
(end_of_turn.py); from then until the silence closes the turn there are ~100-300 ms in which
nothing else needs the cores. A private copy of the local intents (its own conversation, no
device touched) says what it would answer, and the first sentence of that answer is synthesized
and kept with the rehearsed replies. When the turn closes and the real reply is the same
sentence, its first audio needs no synthesis; when the speaker goes on, or the real reply
differs (a device's state changed the words), the sentence is kept all the same and only piper's
time was spent. Replies learned this way outlive the process with the rehearsed ones.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import threading
from collections.abc import Callable

from voiced.mouth.sentences import SentenceSplitter

_LOGGER = logging.getLogger(__name__)


def first_sentence(text: str) -> str | None:
    splitter = SentenceSplitter()
    return next(iter([*splitter.feed(text), *splitter.flush()]), None)


class Foresight:
    def __init__(
        self,
        reply_of: Callable[[str], str | None],
        keep: Callable[[str], bool],
        prepare: Callable[[], None] | None = None,
    ) -> None:
        """`reply_of`: what the private intents would answer words heard (None: they would not act
        on them as they stand), blocking. `keep`: synthesize a sentence and keep it with the
        rehearsed replies (blocking; False when it was kept already). `prepare`: run first, on the
        worker (building the private intents takes ~1 s: not at the first turn's pause)."""
        self._reply_of = reply_of
        self._keep = keep
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="foresight")
        self._lock = threading.Lock()
        self._job: concurrent.futures.Future[None] | None = None
        self._closed = False
        if prepare is not None:
            self._job = self._pool.submit(self._safely, prepare)

    def foresee(self, text: str) -> None:
        """Words heard at a pause, judged a whole request (on the event loop: returns at once). A
        job still queued for earlier words is dropped: these are the utterance's latest."""
        with self._lock:
            if self._closed:
                return
            if self._job is not None:
                self._job.cancel()  # no effect once it runs: it finishes, and is kept
            self._job = self._pool.submit(self._safely, lambda: self._ahead(text))

    def settle(self, timeout_s: float) -> None:
        """Wait (at most `timeout_s`) for the reply being synthesized ahead, if any (blocking: from
        the thread about to synthesize a reply, which would wait for piper all the same)."""
        with self._lock:
            job = self._job
        if job is None or job.done():
            return
        with contextlib.suppress(concurrent.futures.TimeoutError, concurrent.futures.CancelledError):
            job.result(timeout=timeout_s)

    def close(self) -> None:
        with self._lock:
            self._closed = True
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _ahead(self, text: str) -> None:
        reply = self._reply_of(text)
        sentence = first_sentence(reply) if reply else None
        if sentence and self._keep(sentence):
            _LOGGER.debug("synthesized ahead of the turn's end: %r", sentence)

    def _safely(self, job: Callable[[], None]) -> None:
        try:
            job()
        except Exception:  # a reply not ready ahead is synthesized when said
            _LOGGER.warning("a reply could not be synthesized ahead of time", exc_info=True)
