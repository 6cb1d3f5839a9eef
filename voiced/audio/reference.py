"""What the speaker played, as the reference for our echo in the microphone.

The speaker's callback appends every block it plays; the ear takes as much reference as each
microphone frame it handles. The microphone's callback counts what it records, so the lead of
played audio is judged without the ear's backlog: an ear that runs seconds behind on a busy
CPU never makes the reference cut, and so never shifts our echo against its reference.
"""

from __future__ import annotations

import logging
import threading
from collections import deque

import numpy as np

_LOGGER = logging.getLogger(__name__)


class SampleFifo:
    """int16 samples in, any count out (zeros when short); not thread-safe on its own."""

    def __init__(self) -> None:
        self._chunks: deque[np.ndarray] = deque()
        self.queued = 0
        self.removed = 0  # samples ever taken or dropped from the front

    def push(self, samples: np.ndarray) -> None:
        if len(samples):
            self._chunks.append(np.asarray(samples, dtype=np.int16))
            self.queued += len(samples)

    def pop(self, count: int) -> np.ndarray:
        out = np.zeros(count, dtype=np.int16)
        filled = 0
        while filled < count and self._chunks:
            chunk = self._chunks[0]
            used = min(count - filled, len(chunk))
            out[filled : filled + used] = chunk[:used]
            filled += used
            if used == len(chunk):
                self._chunks.popleft()
            else:
                self._chunks[0] = chunk[used:]
        self.queued -= filled
        self.removed += filled
        return out

    def drop_oldest(self, keep: int) -> int:
        """Drop whole chunks from the front while more than `keep` samples stay; returns how many."""
        dropped = 0
        while self._chunks and self.queued - len(self._chunks[0]) >= keep:
            size = len(self._chunks.popleft())
            self.queued -= size
            dropped += size
        self.removed += dropped
        return dropped

    def clear(self) -> None:
        self.removed += self.queued
        self._chunks.clear()
        self.queued = 0

    def drop_newest(self, count: int) -> int:
        """Drop up to `count` of the most recently pushed samples; returns how many."""
        dropped = 0
        while dropped < count and self._chunks:
            chunk = self._chunks[-1]
            used = min(count - dropped, len(chunk))
            if used == len(chunk):
                self._chunks.pop()
            else:
                self._chunks[-1] = chunk[: len(chunk) - used]
            dropped += used
        self.queued -= dropped
        return dropped


class PlaybackReference:
    """Thread-safe: the speaker appends, the microphone counts, the ear takes (16 kHz int16).

    Microphone sample k is paired with played sample k + c: the n-th sample the ear handles
    takes the n-th sample of reference, so the echo keeps one delay, which the delay estimate
    finds. That pairing holds as long as nothing is cut, however far the ear lags behind (the
    played audio then waits here, as the recorded audio waits in the microphone's queue). Only
    the lead beyond that backlog is held under `max_lead_s`: speaker and microphone clocks
    never agree exactly, and the delay estimate follows the jump when it is cut.
    """

    HARD_LIMIT_S = 20.0  # nobody takes (echo handling off): keep no more than this

    def __init__(self, sample_rate: int = 16000, max_lead_s: float = 0.6) -> None:
        self._played = SampleFifo()
        self._max = int(sample_rate * max_lead_s)
        self._limit = int(sample_rate * self.HARD_LIMIT_S)
        self._rate = sample_rate
        self._recorded = 0  # samples the microphone has recorded (None of it counted: no microphone)
        self._handled = 0  # samples the ear has taken reference for
        self._counting = False
        self._lock = threading.Lock()
        self.cut = 0  # played samples cut to hold the lead (each cut shifts the echo delay)
        self._restarts: deque[int] = deque(maxlen=64)  # stream positions where the speaker restarted
        self._crossed = False
        self.short = 0  # samples of reference the ear wanted before the speaker had played them

    def append(self, samples: np.ndarray) -> None:
        with self._lock:
            self._played.push(samples)
            self.cut += self._played.drop_oldest(self._limit)

    def append_sent(self, samples: np.ndarray, *, restart: bool = False) -> None:
        """For a speaker we only send audio to while it plays (a satellite), with no device clock
        of ours behind it: the time it had nothing to play (between replies, a pause, a gap in
        what we sent) is made up with silence, up to the microphone's newest sample, so that
        `samples` pair with the microphone recorded from now on. `restart`: it plays again after
        such a gap, and its echo may have moved (as after `retract`)."""
        with self._lock:
            if self._counting:
                gap = self._recorded - self._handled - self._played.queued
                self._played.push(np.zeros(max(0, gap), dtype=np.int16))
            if restart:
                self._restarts.append(self._played.removed + self._played.queued)
            self._played.push(samples)
            self.cut += self._played.drop_oldest(self._limit)

    def retract(self, count: int) -> None:
        """The speaker took back its newest `count` samples unplayed (a pause or stop recalled
        them from the device): they will never reach the microphone, so they are no reference."""
        with self._lock:
            dropped = self._played.drop_newest(count)
            self._restarts.append(self._played.removed + self._played.queued)
        if dropped < count:  # the ear already paired them with the microphone: a small shift
            _LOGGER.info("reference retracted %d ms late", (count - dropped) * 1000 // self._rate)

    def restarted(self) -> bool:
        """Whether the reference taken since the last call reached a point where the speaker
        restarted (a pause, stop or reply start recalled what it held), or where it was cut or ran
        short (the speaker fell behind or ran ahead). The restart lands within
        a few milliseconds of where it is counted, so a path fitted across it is off (once and
        for all: the delay stays). Clears on reading."""
        with self._lock:
            crossed, self._crossed = self._crossed, False
        return crossed

    def capture(self, count: int) -> None:
        """From the microphone's callback: `count` samples were just recorded."""
        with self._lock:
            self._counting = True
            self._recorded += count

    def forget(self, count: int) -> None:
        """The microphone dropped its oldest `count` samples unheard: drop their reference too."""
        with self._lock:
            self._played.pop(count)
            self._handled += count

    def clear(self) -> None:
        with self._lock:
            self._played.clear()

    def take(self, count: int) -> np.ndarray:
        """The reference for the next `count` microphone samples the ear handles."""
        with self._lock:
            short = max(0, count - self._played.queued)
            out = self._played.pop(count)
            self._handled += count
            while self._restarts and self._restarts[0] <= self._played.removed:
                self._restarts.popleft()
                self._crossed = True
            backlog = max(0, self._recorded - self._handled) if self._counting else 0
            cut = self._played.drop_oldest(self._max + backlog)
        shifted = bool(short and self._played.queued == 0 and out.any())
        if shifted:
            self.short += short
            _LOGGER.info("reference ran %d ms short: the echo delay shifts", short * 1000 // self._rate)
        if cut:
            self.cut += cut
            _LOGGER.info("speaker ran %d ms ahead of the microphone: reference cut", cut * 1000 // self._rate)
        if shifted or cut:  # our echo moved against its reference from here on, as after a restart
            with self._lock:
                self._crossed = True
        return out
