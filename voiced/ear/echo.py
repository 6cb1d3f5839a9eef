"""Acoustic echo cancellation with libspeexdsp (Debian package libspeexdsp1), through ctypes.

The speaker sink appends what it plays to a PlaybackReference; the ear takes one frame of
that reference for every microphone frame, so the reference runs on the microphone's clock
and the echo arrives a roughly constant delay later, which the adaptive filter models.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
from collections import deque

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


class PlaybackReference:
    """What the speaker played, at 16 kHz, consumed one microphone frame at a time (thread-safe)."""

    def __init__(self) -> None:
        self._chunks: deque[np.ndarray] = deque()
        self._queued = 0
        self._lock = threading.Lock()

    def append(self, samples: np.ndarray) -> None:
        with self._lock:
            self._chunks.append(np.asarray(samples, dtype=np.int16))
            self._queued += len(samples)

    def clear(self) -> None:
        with self._lock:
            self._chunks.clear()
            self._queued = 0

    @property
    def active(self) -> bool:
        return self._queued > 0

    def take(self, count: int) -> np.ndarray:
        out = np.zeros(count, dtype=np.int16)
        filled = 0
        with self._lock:
            while filled < count and self._chunks:
                chunk = self._chunks[0]
                used = min(count - filled, len(chunk))
                out[filled : filled + used] = chunk[:used]
                filled += used
                if used == len(chunk):
                    self._chunks.popleft()
                else:
                    self._chunks[0] = chunk[used:]
            self._queued -= filled
        return out


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
