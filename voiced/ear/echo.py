"""Acoustic echo cancellation with libspeexdsp (Debian package libspeexdsp1), through ctypes.

The speaker sink appends what it plays to a PlaybackReference (reference.py), which pairs it
with each microphone block as it is recorded; the ear takes one frame of that reference for
every microphone frame, so the echo arrives a roughly constant delay later, which the
adaptive filter models.
"""

from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np

_SET_SAMPLING_RATE = 24  # SPEEX_ECHO_SET_SAMPLING_RATE
_PREPROCESS_SET_ECHO_STATE = 24  # SPEEX_PREPROCESS_SET_ECHO_STATE
_PREPROCESS_SET_DENOISE = 0
_SUBFRAME = 160  # 10 ms at 16 kHz: speex works best on short frames


class EchoUnavailable(Exception):
    """libspeexdsp is not installed."""


def _load() -> ctypes.CDLL:
    name = ctypes.util.find_library("speexdsp") or "libspeexdsp.so.1"
    try:
        lib = ctypes.CDLL(name)
    except OSError as exc:
        raise EchoUnavailable(
            f"libspeexdsp not found ({exc}); install the Debian package libspeexdsp1"
        ) from None
    lib.speex_echo_state_init.restype = ctypes.c_void_p
    lib.speex_echo_state_init.argtypes = [ctypes.c_int, ctypes.c_int]
    lib.speex_echo_state_destroy.argtypes = [ctypes.c_void_p]
    lib.speex_echo_state_reset.argtypes = [ctypes.c_void_p]
    lib.speex_echo_ctl.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
    pcm = ctypes.POINTER(ctypes.c_int16)
    lib.speex_echo_cancellation.argtypes = [ctypes.c_void_p, pcm, pcm, pcm]
    lib.speex_preprocess_state_init.restype = ctypes.c_void_p
    lib.speex_preprocess_state_init.argtypes = [ctypes.c_int, ctypes.c_int]
    lib.speex_preprocess_state_destroy.argtypes = [ctypes.c_void_p]
    lib.speex_preprocess_ctl.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
    lib.speex_preprocess_run.argtypes = [ctypes.c_void_p, pcm]
    return lib


class SpeexEchoCanceller:
    def __init__(self, sample_rate: int = 16000, tail_ms: int = 400) -> None:
        self._lib = _load()
        self._echo = self._lib.speex_echo_state_init(_SUBFRAME, sample_rate * tail_ms // 1000)
        rate = ctypes.c_int(sample_rate)
        self._lib.speex_echo_ctl(self._echo, _SET_SAMPLING_RATE, ctypes.byref(rate))
        # The preprocessor removes the residual echo the linear filter leaves behind.
        self._pre = self._lib.speex_preprocess_state_init(_SUBFRAME, sample_rate)
        self._lib.speex_preprocess_ctl(self._pre, _PREPROCESS_SET_ECHO_STATE, ctypes.c_void_p(self._echo))
        off = ctypes.c_int(0)
        self._lib.speex_preprocess_ctl(self._pre, _PREPROCESS_SET_DENOISE, ctypes.byref(off))

    def process(self, mic: np.ndarray, reference: np.ndarray) -> np.ndarray:
        """Remove the echo of `reference` from `mic` (both int16, same length, multiple of 10 ms)."""
        mic = np.ascontiguousarray(mic, dtype=np.int16)
        reference = np.ascontiguousarray(reference, dtype=np.int16)
        out = np.empty_like(mic)
        pcm = ctypes.POINTER(ctypes.c_int16)
        for start in range(0, len(mic) - _SUBFRAME + 1, _SUBFRAME):
            rec = mic[start : start + _SUBFRAME]
            play = reference[start : start + _SUBFRAME]
            res = out[start : start + _SUBFRAME]
            self._lib.speex_echo_cancellation(
                self._echo, rec.ctypes.data_as(pcm), play.ctypes.data_as(pcm), res.ctypes.data_as(pcm)
            )
            self._lib.speex_preprocess_run(self._pre, res.ctypes.data_as(pcm))
        return out

    def reset(self) -> None:
        self._lib.speex_echo_state_reset(self._echo)

    def close(self) -> None:
        if self._echo:
            self._lib.speex_preprocess_state_destroy(self._pre)
            self._lib.speex_echo_state_destroy(self._echo)
            self._echo = None


class DelayLine:
    def __init__(self) -> None:
        self._buffer = np.zeros(0, dtype=np.int16)
        self._delay = 0

    @property
    def delay(self) -> int:
        return self._delay

    def set_delay(self, samples: int) -> None:
        if samples > self._delay:
            self._buffer = np.concatenate([np.zeros(samples - self._delay, dtype=np.int16), self._buffer])
        elif samples < self._delay:
            self._buffer = self._buffer[self._delay - samples :]
        self._delay = samples

    def push(self, samples: np.ndarray) -> np.ndarray:
        joined = np.concatenate([self._buffer, samples.astype(np.int16)])
        out, self._buffer = joined[: len(samples)], joined[len(samples) :]
        return out


class EchoPath:
    """The speaker-to-microphone path as a short filter around the known delay, fitted by least
    squares on recent playback. Unlike an adaptive canceller it is right from its first fit,
    so it can tell our echo from the user's voice frame by frame."""

    def __init__(self, taps: int = 128) -> None:
        self.taps = taps
        self.lead = taps // 4  # samples before the estimated delay
        self.weights: np.ndarray | None = None

    def _segment(self, reference: np.ndarray, delay: int, count: int, end_offset: int = 0) -> np.ndarray:
        """Reference samples that can reach the last `count` mic samples (ending `end_offset` ago)."""
        base = len(reference) - end_offset - count - delay - self.lead
        if base < 0:
            raise ValueError("reference history too short for this delay")
        segment = reference[base : base + count + self.taps - 1].astype(np.float64)
        # With an echo back within a few ms (a satellite that plays what it is sent at once), the
        # filter's earliest lags reach past the reference's end: audio not yet sent, silence.
        return np.pad(segment, (0, count + self.taps - 1 - len(segment)))

    def fit(self, mic: np.ndarray, reference: np.ndarray, delay: int) -> np.ndarray:
        """Fit on `mic` (the latest samples); `reference` ends at the same instant. Returns the residual."""
        segment = self._segment(reference, delay, len(mic))
        columns = np.lib.stride_tricks.sliding_window_view(segment, self.taps)
        target = mic.astype(np.float64)
        # The normal equations, a hair of ridge for silence in the reference: the same answer
        # as lstsq's SVD for a tall, well-posed fit, in a fifth to a seventh of the time.
        gram = columns.T @ columns
        gram[np.diag_indices(self.taps)] += 1e-9 * float(np.trace(gram)) / self.taps + 1e-9
        weights = np.linalg.solve(gram, columns.T @ target)
        self.weights = weights
        return target - columns @ weights

    def residual(self, mic: np.ndarray, reference: np.ndarray, delay: int, end_offset: int = 0) -> np.ndarray:
        if self.weights is None:
            return mic.astype(np.float64)
        segment = self._segment(reference, delay, len(mic), end_offset)
        return mic.astype(np.float64) - np.correlate(segment, self.weights, "valid")


def share_db(part: np.ndarray, whole: np.ndarray) -> float:
    """Energy of `part` relative to `whole`, in dB (0 when `whole` is silent)."""
    total = float(np.dot(whole.astype(np.float64), whole.astype(np.float64)))
    if total <= 0:
        return 0.0
    return 10 * float(np.log10(max(float(np.dot(part, part)), 1e-9) / total))


def unexplained_db(mic: np.ndarray, reference: np.ndarray, delay: int, taps: int = 128) -> float:
    """How much of `mic` is NOT our echo, in dB relative to `mic` (0: none of it, -30: all echo).

    A least-squares filter around the known delay is fitted on this very snippet, so the answer
    does not wait for any canceller to converge. `reference` ends at the same instant as `mic`.
    """
    if len(mic) < taps * 4:
        raise ValueError("snippet too short to judge")
    return share_db(EchoPath(taps).fit(mic, reference, delay), mic)
