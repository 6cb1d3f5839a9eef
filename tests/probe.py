"""Listening in on the virtual devices: when did a voice begin, when did the speaker fall silent?

`MonitorRecorder` records a pulse monitor source (parec) and maps every sample to the monotonic
clock the daemon's events use. The analysis below it is pure: arrays and durations in, seconds out.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time

import numpy as np

from tests.pulse import PulseServer

RATE = 16000
BLOCK_S = 0.01


class StreamClock:
    """Maps sample indices of a live recording to the clock its chunks arrived by.

    A chunk arrives a little after its last sample was recorded, by a varying delay; the
    earliest arrival relative to the sample count is the tightest bound, so it sets the origin.
    """

    def __init__(self, rate: int = RATE) -> None:
        self.rate = rate
        self.origin: float | None = None

    def arrived(self, at: float, samples_so_far: int) -> None:
        start = at - samples_so_far / self.rate
        if self.origin is None or start < self.origin:
            self.origin = start

    def time_of(self, index: float) -> float:
        assert self.origin is not None, "nothing recorded yet"
        return self.origin + index / self.rate

    def index_at(self, t: float) -> int:
        assert self.origin is not None, "nothing recorded yet"
        return max(0, round((t - self.origin) * self.rate))


def blocks_db(samples: np.ndarray, rate: int = RATE, block_s: float = BLOCK_S) -> np.ndarray:
    """RMS level of each whole block, in dBFS."""
    size = max(1, int(rate * block_s))
    count = len(samples) // size
    blocks = samples[: count * size].astype(np.float64).reshape(count, size) / 32768.0
    return 10 * np.log10(np.maximum(np.mean(blocks**2, axis=1), 1e-12))


def voice_start(samples: np.ndarray, rate: int = RATE, below_peak_db: float = 30.0) -> float:
    """Seconds into `samples` where the voice begins: its first block within `below_peak_db` of its peak."""
    levels = blocks_db(samples, rate)
    loud = np.flatnonzero(levels >= levels.max() - below_peak_db)
    return float(loud[0]) * BLOCK_S if len(loud) else 0.0


def find(known: np.ndarray, recording: np.ndarray, *, min_match: float = 0.3) -> int | None:
    """Where `known` begins in `recording` (mixed with other sound), by normalised cross-correlation."""
    if len(recording) < len(known) // 2 or not known.any():
        return None
    a = recording.astype(np.float64)
    b = known.astype(np.float64)
    size = 1 << int(np.ceil(np.log2(len(a) + len(b))))
    corr = np.fft.irfft(np.fft.rfft(a, size) * np.conj(np.fft.rfft(b, size)), size)[: len(a)]
    lag = int(np.argmax(corr))
    segment = a[lag : lag + len(b)]
    energy = float(np.sqrt(np.dot(segment, segment) * np.dot(b[: len(segment)], b[: len(segment)])))
    if energy <= 0 or corr[lag] / energy < min_match:
        return None
    return lag


def last_sound(samples: np.ndarray, rate: int = RATE, threshold_db: float = -55.0) -> float | None:
    """Seconds into `samples` at which the last block louder than `threshold_db` ends; None: all quiet."""
    loud = np.flatnonzero(blocks_db(samples, rate) > threshold_db)
    return (float(loud[-1]) + 1) * BLOCK_S if len(loud) else None


def first_silence(samples: np.ndarray, rate: int = RATE, min_s: float = 0.05) -> float | None:
    """Seconds into `samples` where the first run of digital silence (a stopped speaker plays
    exact zeros; a voice never does for long) of at least `min_s` begins; None: there is none."""
    quiet = np.abs(samples.astype(np.int32)) <= 1
    need = max(1, int(rate * min_s))
    run = 0
    for index, still in enumerate(quiet):
        run = run + 1 if still else 0
        if run == need:
            return (index + 1 - need) / rate
    return None


def silent_run(samples: np.ndarray, rate: int = RATE, min_s: float = 0.3) -> tuple[int, int | None] | None:
    """The first run of digital silence of at least `min_s`: (first silent sample, first sample
    of sound after it, None if it lasts to the end); None: there is none."""
    quiet = np.abs(samples.astype(np.int32)) <= 1
    edges = np.flatnonzero(np.diff(np.concatenate([[0], quiet.astype(np.int8), [0]])))
    need = max(1, int(rate * min_s))
    for start, end in zip(edges[::2], edges[1::2], strict=True):
        if end - start >= need:
            return int(start), (int(end) if end < len(samples) else None)
    return None


class MonitorRecorder:
    """Records one pulse source for as long as it runs (16 kHz mono), with a StreamClock."""

    def __init__(self, pulse: PulseServer, source: str) -> None:
        self._pulse = pulse
        self._source = source
        self.clock = StreamClock(RATE)
        self._data = bytearray()
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._thread: threading.Thread | None = None

    def start(self, timeout: float = 10.0) -> None:
        command = ["parec", f"--device={self._source}", "--format=s16le", f"--rate={RATE}"]
        command += ["--channels=1", "--latency-msec=10", "--raw"]
        self._proc = subprocess.Popen(
            command, env=self._pulse.env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self._thread = threading.Thread(target=self._read, name=f"record-{self._source}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while self.clock.origin is None:
            if time.monotonic() > deadline or self._proc.poll() is not None:
                raise RuntimeError(f"parec on {self._source} recorded nothing")
            time.sleep(0.02)

    def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        while chunk := os.read(fd, 4096):
            now = time.monotonic()
            with self._lock:
                self._data += chunk
                self.clock.arrived(now, len(self._data) // 2)

    def between(self, start_t: float, end_t: float) -> tuple[np.ndarray, float]:
        """Samples recorded from `start_t` to `end_t` (monotonic), and the time of the first."""
        with self._lock:
            first = self.clock.index_at(start_t)
            last = self.clock.index_at(end_t)
            samples = np.frombuffer(bytes(self._data[2 * first : 2 * last]), dtype=np.int16)
        return samples, self.clock.time_of(first)

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(timeout=5)
            self._proc = None
        if self._thread is not None:
            self._thread.join(timeout=5)
