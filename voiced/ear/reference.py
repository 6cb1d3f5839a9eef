"""What the speaker played, paired with what the microphone recorded at the same moment.

The speaker's callback appends every block it plays. The microphone's callback calls
`capture()` for every block it records: that moves the same amount of reference aside, paired
with that block, at the moment both happened. The ear, which may run seconds behind when the
CPU is busy, then `take()`s the paired reference with each frame, so a late ear never shifts our
echo against its reference. Without a capturing microphone (tests, WAV input) `take()` reads
the played audio directly, as it arrives.
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
        return out

    def drop_oldest(self, keep: int) -> int:
        """Drop whole chunks from the front while more than `keep` samples stay; returns how many."""
        dropped = 0
        while self._chunks and self.queued - len(self._chunks[0]) >= keep:
            size = len(self._chunks.popleft())
            self.queued -= size
            dropped += size
        return dropped

    def clear(self) -> None:
        self._chunks.clear()
        self.queued = 0


class PlaybackReference:
    """Thread-safe: the speaker appends, the microphone captures, the ear takes (16 kHz int16).

    Speaker and microphone clocks never agree exactly, so the played audio waiting for the
    microphone is held under `max_lead_s`; the delay estimate follows the jump when it is cut.
    """

    def __init__(self, sample_rate: int = 16000, max_lead_s: float = 0.6) -> None:
        self._played = SampleFifo()
        self._paired = SampleFifo()
        self._capturing = False
        self._max = int(sample_rate * max_lead_s)
        self._lock = threading.Lock()
        self.dropped = 0  # played samples cut to hold the lead (each cut shifts the echo delay)

    def append(self, samples: np.ndarray) -> None:
        with self._lock:
            self._played.push(samples)
            cut = self._played.drop_oldest(self._max)
        if cut:
            self.dropped += cut
            _LOGGER.info("speaker ran %d ms ahead of the microphone: reference cut", cut * 1000 // 16000)

    def capture(self, count: int) -> None:
        """From the microphone's callback: `count` samples were just recorded."""
        with self._lock:
            self._capturing = True
            self._paired.push(self._played.pop(count))

    def forget(self, count: int) -> None:
        """The microphone dropped its oldest `count` samples unheard: drop their reference too."""
        with self._lock:
            self._paired.pop(count)

    def clear(self) -> None:
        with self._lock:
            self._played.clear()
            self._paired.clear()

    def take(self, count: int) -> np.ndarray:
        """The reference for the next `count` microphone samples the ear handles."""
        with self._lock:
            return (self._paired if self._capturing else self._played).pop(count)
