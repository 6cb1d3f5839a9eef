"""Per-frame front end of the ear: is this frame the user speaking?

Without a speaker (file output) that is plain webrtcvad. With one, the frame first goes
through the echo canceller, and the EchoGate decides whether what is left is the user.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Protocol

import numpy as np
import webrtcvad

from voiced.audio.pcm import EAR_RATE, rms_dbfs
from voiced.ear.bargein import SILENT_DB, EchoGate
from voiced.ear.echo import (
    DelayEstimator,
    DelayLine,
    EchoPath,
    PlaybackReference,
    SpeexEchoCanceller,
    share_db,
    unexplained_db,
)

_LOGGER = logging.getLogger(__name__)
HISTORY_S = 8  # microphone and reference kept for the echo check of an utterance


class FrameClassifier(Protocol):
    def classify(self, frame: bytes) -> tuple[bytes, bool]:
        """The frame to keep (echo removed) and whether it is the user's speech."""
        ...

    def unexplained_db(self, frames: int, skip_last: int = 0) -> float | None:
        """Of `frames` microphone frames ending `skip_last` frames ago, the share our own echo
        does not explain (dB); None when that cannot be known."""
        ...


class PlainVad:
    def __init__(self, aggressiveness: int) -> None:
        self._vad = webrtcvad.Vad(aggressiveness)

    def classify(self, frame: bytes) -> tuple[bytes, bool]:
        return frame, self._vad.is_speech(frame, EAR_RATE)

    def unexplained_db(self, frames: int, skip_last: int = 0) -> float | None:
        return None


class EchoCancellingVad:
    """Reference aligned by a delay estimate, then speex with a short tail (fast to converge)."""

    ALIGN_MARGIN_MS = 20  # start the filter a little before the estimated echo

    def __init__(
        self,
        aggressiveness: int,
        reference: PlaybackReference,
        *,
        frame_ms: int,
        tail_ms: int = 200,
        margin_db: float = 10.0,
        echo_db: float = -10.0,
    ) -> None:
        self._vad = webrtcvad.Vad(aggressiveness)
        self._reference = reference
        self._canceller = SpeexEchoCanceller(EAR_RATE, tail_ms)
        self._tail = EAR_RATE * tail_ms // 1000
        self._frame_samples = EAR_RATE * frame_ms // 1000
        self._delay = DelayEstimator(EAR_RATE)
        self._line = DelayLine()
        self._aligned_to: int | None = None
        self._gate = EchoGate(margin_db=margin_db)
        self._echo_db = echo_db
        self._path = EchoPath()
        self._since_fit = 0
        self._since_user = EAR_RATE
        # One tuple, replaced whole: a worker thread must never see a new mic with an old reference.
        blank = np.zeros(HISTORY_S * EAR_RATE, dtype=np.int16)
        self._history: tuple[np.ndarray, np.ndarray] = (blank, blank)
        # Until the delay is known, judge against the loudest reference of the last 800 ms.
        self._recent_raw_db: deque[float] = deque(maxlen=max(1, 800 // frame_ms))
        self._recent_aligned_db: deque[float] = deque(maxlen=max(1, tail_ms // frame_ms))

    @property
    def playing(self) -> bool:
        return bool(self._reference.active or max(self._recent_raw_db, default=-120.0) > SILENT_DB)

    def classify(self, frame: bytes) -> tuple[bytes, bool]:
        mic = np.frombuffer(frame, dtype=np.int16)
        raw = self._reference.take(len(mic))
        old_mic, old_ref = self._history
        self._history = (
            np.concatenate([old_mic[len(mic) :], mic]),
            np.concatenate([old_ref[len(raw) :], raw]),
        )
        raw_db = rms_dbfs(raw)
        self._recent_raw_db.append(raw_db)
        # Only our own voice may teach the delay: no user speech in the estimator's 2 s window.
        delay = self._delay.feed(mic, raw, playing=raw_db > SILENT_DB and self._since_user >= 2 * EAR_RATE)
        if delay is not None and delay != self._aligned_to:
            self._align(delay)
        aligned = self._line.push(raw)
        self._recent_aligned_db.append(rms_dbfs(aligned))
        cleaned = self._canceller.process(mic, aligned)
        data = cleaned.tobytes()
        speech = self._vad.is_speech(data, EAR_RATE)
        window = self._recent_aligned_db if self._aligned_to is not None else self._recent_raw_db
        residual_db, reference_db = rms_dbfs(cleaned), max(window)
        if reference_db <= SILENT_DB or not speech:
            return data, speech
        not_echo_db = self._frame_not_echo_db(mic)
        if not_echo_db is not None:
            user = not_echo_db > self._echo_db
        else:  # no echo path fitted yet: judge by levels against the canceller's usual leak
            user = self._gate.is_user(vad_speech=speech, residual_db=residual_db, reference_db=reference_db)
        self._since_user = 0 if user else self._since_user + len(mic)
        _LOGGER.debug(
            "over playback: mic %.1f dB, left %.1f dB, reference %.1f dB, not echo %s dB -> %s",
            rms_dbfs(mic),
            residual_db,
            reference_db,
            "?" if not_echo_db is None else f"{not_echo_db:.1f}",
            "user" if user else "echo",
        )
        return data, user

    def _frame_not_echo_db(self, mic: np.ndarray) -> float | None:
        """This frame's share that the fitted echo path does not explain; refits every second."""
        delay = self._aligned_to
        if delay is None:
            return None
        mic_history, ref_history = self._history
        self._since_fit += len(mic)
        # Refit each second on playback alone: the user's voice in the window would bend the fit.
        quiet_user = self._since_user >= EAR_RATE
        if (self._path.weights is None or self._since_fit >= EAR_RATE) and quiet_user:
            self._since_fit = 0
            window = EAR_RATE
            if rms_dbfs(ref_history[-window - delay :]) > SILENT_DB:
                self._path.fit(mic_history[-window:], ref_history, delay)
        if self._path.weights is None:
            return None
        return share_db(self._path.residual(mic, ref_history, delay), mic)

    def unexplained_db(self, frames: int, skip_last: int = 0) -> float | None:
        """Runs in a worker thread, on snapshots of the histories."""
        delay = self._aligned_to
        if delay is None:
            return None
        mic, ref = self._history
        skip = skip_last * self._frame_samples
        if skip:
            mic, ref = mic[:-skip], ref[:-skip]
        samples = min(len(mic) - delay - 64, frames * self._frame_samples)
        if samples <= 0:
            return None
        return unexplained_db(mic[-samples:], ref, delay)

    def _align(self, delay: int) -> None:
        """Shift the reference only when the echo no longer fits the filter: shifting resets it."""
        first = self._aligned_to is None
        self._aligned_to = delay
        ms = delay * 1000 / EAR_RATE
        if self._line.delay <= delay <= self._line.delay + self._tail * 3 // 4:
            if first:
                _LOGGER.info("echo comes back %.0f ms after playback (within the filter)", ms)
            return
        _LOGGER.info("echo comes back %.0f ms after playback; re-aligning the reference", ms)
        self._line.set_delay(max(0, delay - self.ALIGN_MARGIN_MS * EAR_RATE // 1000))
        self._canceller.reset()

    def close(self) -> None:
        self._canceller.close()
