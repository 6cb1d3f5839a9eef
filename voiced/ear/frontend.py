"""Per-frame front end of the ear: is this frame the user speaking?

Without a speaker (file output) that is plain webrtcvad. With one, the frame first goes
through the echo canceller, and the EchoGate decides whether what is left is the user.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Protocol

import numpy as np
import webrtcvad
from threadpoolctl import threadpool_limits

from voiced.audio.pcm import EAR_RATE, rms_dbfs
from voiced.audio.reference import PlaybackReference
from voiced.config import AudioConfig, VadConfig
from voiced.ear.bargein import SILENT_DB, EchoGate
from voiced.ear.delay import DelayEstimator
from voiced.ear.echo import (
    DelayLine,
    EchoPath,
    SpeexEchoCanceller,
    share_db,
    unexplained_db,
)

_LOGGER = logging.getLogger(__name__)
HISTORY_S = 8  # microphone and reference kept for the echo check of an utterance
# A frame the fitted echo path leaves louder than it found it: the path no longer matches the
# room or the alignment (a correct path only ever removes energy). It is dropped and refitted.
STALE_PATH_DB = 3.0
PATH_ADDS_DB = 0.5  # a path's share above this over an onset: it added energy (a voice alone reads 0)
FIT_KEEP_DB = -15.0  # a fit that leaves more of its second unexplained was bent by the user's voice
NO_SOUND_DB = -90.0  # digital silence (a real microphone's own noise is far above it)
JUDGED_KEPT = 16  # frames whose echo share, as classified, is kept for the onset of speech
MIN_FIT_SAMPLES = EAR_RATE * 3 // 10  # after a speaker restart, fit once this much has followed it
DELAY_SLACK = 16  # samples: a smaller change in the estimate is jitter, which the echo path absorbs
DRIFT = EAR_RATE // 10  # how far a snippet's check looks for our echo around the estimated delay
# Until the echo path is fitted again (a restart may have moved our echo), a frame is the user's only if
# the microphone is this much louder than our echo at its loudest coupling (bench/calibrate_echo_coupling.py).
COUPLING_MARGIN_DB = 6.0
COUPLING_KEPT = 200  # frames of our echo, as the fitted path judged them, for its coupling
COUPLING_WORST = 0.9  # the share of those frames whose coupling the user must beat


class FrameClassifier(Protocol):
    def classify(self, frame: bytes) -> tuple[bytes, bool]:
        """The frame to keep (echo removed) and whether it is the user's speech."""
        ...

    def echo_check(self, frames: int, skip_last: int = 0) -> Callable[[], float | None]:
        """Of `frames` microphone frames ending `skip_last` frames ago (taken now), a job for a
        worker thread: the share our own echo does not explain (dB); None when unknowable."""
        ...

    def judged_share(self, frames: int) -> float | None:
        """Of the last `frames` frames, the share the fitted echo path did not explain as each
        was classified (dB; no work left to do); None unless every one was judged that way."""
        ...


class PlainVad:
    def __init__(self, aggressiveness: int) -> None:
        self._vad = webrtcvad.Vad(aggressiveness)

    def classify(self, frame: bytes) -> tuple[bytes, bool]:
        return frame, self._vad.is_speech(frame, EAR_RATE)

    def echo_check(self, frames: int, skip_last: int = 0) -> Callable[[], float | None]:
        return lambda: None

    def judged_share(self, frames: int) -> float | None:
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
        coupling_margin_db: float = COUPLING_MARGIN_DB,
    ) -> None:
        # numpy's BLAS threads thrash on a busy CPU (an echo check of 150 ms took 0.6 s, not
        # 7 ms, beside Whisper): one thread each; the checks run in threads of their own anyway.
        threadpool_limits(1, user_api="blas")
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
        self._since_restart = HISTORY_S * EAR_RATE  # microphone samples since the speaker restarted
        # Microphone samples since our voice came back after the last restart (None: not yet, or
        # the delay has been found on it since): until then only what came before it is judged.
        self._moved_for: int | None = None
        self._restart_unheard = False
        # The least-squares fit (tens of ms of numpy) runs off the event loop, one at a time.
        self._fitter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="echo-path-fit")
        self._fitting: Future[tuple[np.ndarray, int, float]] | None = None
        self.stale_paths = 0
        # One tuple, replaced whole: a worker thread must never see a new mic with an old reference.
        blank = np.zeros(HISTORY_S * EAR_RATE, dtype=np.int16)
        self._history: tuple[np.ndarray, np.ndarray] = (blank, blank)
        # Until the delay is known, judge against the loudest reference of the last 800 ms.
        self._recent_raw_db: deque[float] = deque(maxlen=max(1, 800 // frame_ms))
        self._recent_aligned_db: deque[float] = deque(maxlen=max(1, tail_ms // frame_ms))
        # Per frame, as classified: (energy the echo path left, the microphone's energy); None
        # when the frame was not judged by a fitted path.
        self._judged: deque[tuple[float, float] | None] = deque(maxlen=JUDGED_KEPT)
        # How loud our echo reaches the microphone against the reference (dB), from frames the fitted
        # path found ours: a restart moves the echo, not the speaker's volume or the room.
        self._coupling: deque[float] = deque(maxlen=COUPLING_KEPT)
        self._coupling_margin = coupling_margin_db

    @property
    def playing(self) -> bool:
        """Our voice played within the last 800 ms (so its echo may still be in the room)."""
        return bool(max(self._recent_raw_db, default=-120.0) > SILENT_DB)

    def classify(self, frame: bytes) -> tuple[bytes, bool]:
        mic = np.frombuffer(frame, dtype=np.int16)
        raw = self._reference.take(len(mic))
        if self._reference.restarted():
            # Our echo may have moved by a few milliseconds under the fitted path, which then
            # takes it for a voice: fit again, on what follows the restart only.
            self._path.weights = None
            self._fitting = None  # a fit under way spans the restart: its answer is not wanted
            self._since_restart = 0
            self._moved_for, self._restart_unheard = None, True
            self._delay.restarted()  # and the echo may have moved by tens of ms: look again soon
        self._since_restart += len(mic)
        if self._moved_for is not None:
            self._moved_for += len(mic)
        old_mic, old_ref = self._history
        self._history = (
            np.concatenate([old_mic[len(mic) :], mic]),
            np.concatenate([old_ref[len(raw) :], raw]),
        )
        raw_db = rms_dbfs(raw)
        self._recent_raw_db.append(raw_db)
        if self._restart_unheard and raw_db > SILENT_DB:
            self._moved_for, self._restart_unheard = 0, False
        # The user's voice cannot move the correlation peak, only lower it below the estimator's
        # bar; and a delay that moved must be found even while the moved echo passes for the user.
        delay = self._delay.feed(mic, raw, playing=raw_db > SILENT_DB)
        if delay is not None and (self._aligned_to is None or abs(delay - self._aligned_to) > DELAY_SLACK):
            self._align(delay)
        aligned = self._line.push(raw)
        self._recent_aligned_db.append(rms_dbfs(aligned))
        cleaned = self._canceller.process(mic, aligned)
        data = cleaned.tobytes()
        speech = self._vad.is_speech(data, EAR_RATE)
        window = self._recent_aligned_db if self._aligned_to is not None else self._recent_raw_db
        residual_db, reference_db = rms_dbfs(cleaned), max(window)
        # A microphone this quiet holds no one's voice, whatever the canceller leaves of it (its
        # leftovers can pass the VAD), and a share of nothing is no evidence: on a digital echo
        # path a reply that starts, pauses or resumes meets exact zeros until its echo is back.
        mic_db = rms_dbfs(mic)
        self._judged.append(None)
        if mic_db <= NO_SOUND_DB or (reference_db > SILENT_DB and mic_db <= SILENT_DB):
            return data, False
        if reference_db <= SILENT_DB or not speech:
            return data, speech
        not_echo_db = self._frame_not_echo_db(mic)
        if not_echo_db is not None:
            user = not_echo_db > self._echo_db
            if not user:
                self._coupling.append(mic_db - reference_db)
        elif self._coupling:  # the path is being fitted again: louder than our echo can be, or not the user
            # Until the delay is found again, our echo may come from anywhere in the last 800 ms.
            loudest = max(self._recent_raw_db) if self._delay_unsure() else reference_db
            user = mic_db > loudest + self._coupling_db() + self._coupling_margin
        else:  # no echo path fitted yet: judge by levels against the canceller's usual leak
            user = self._gate.is_user(vad_speech=speech, residual_db=residual_db, reference_db=reference_db)
        _LOGGER.debug(
            "over playback: mic %.1f dB, left %.1f dB, reference %.1f dB, not echo %s dB -> %s",
            rms_dbfs(mic),
            residual_db,
            reference_db,
            "?" if not_echo_db is None else f"{not_echo_db:.1f}",
            "user" if user else "echo",
        )
        return data, user

    def _delay_unsure(self) -> bool:
        """Our voice came back after a restart, and the delay has not been found on it yet."""
        return self._moved_for is not None and not self._delay.fresh

    def _coupling_db(self) -> float:
        ordered = sorted(self._coupling)
        return ordered[min(len(ordered) - 1, int(len(ordered) * COUPLING_WORST))]

    def _frame_not_echo_db(self, mic: np.ndarray) -> float | None:
        """This frame's share that the fitted echo path does not explain; refits every second.
        None until the delay is found on what followed the last restart: at the old one neither
        a path nor a fit explains our own voice."""
        delay = self._aligned_to
        if delay is None or self._delay_unsure():
            return None
        mic_history, ref_history = self._history
        self._adopt_fit()
        self._since_fit += len(mic)
        # Refit each second; a fit is kept only if it explains its second of microphone, so one
        # bent by the user's voice is thrown away, and one that replaces a stale path is not.
        due = self._path.weights is None or self._since_fit >= EAR_RATE
        # Only microphone whose echo is of what followed the restart: before it, the echo had its old delay.
        window = min(EAR_RATE, self._since_restart - delay)
        ready = due and self._fitting is None and window >= MIN_FIT_SAMPLES
        if ready and rms_dbfs(ref_history[-window - delay :]) > SILENT_DB:
            self._since_fit = 0
            self._fitting = self._fitter.submit(_fit_path, mic_history[-window:], ref_history, delay)
        if self._path.weights is None:
            return None
        residual = self._path.residual(mic, ref_history, delay)
        share = share_db(residual, mic)
        if share > STALE_PATH_DB:
            self.stale_paths += 1
            _LOGGER.info("the echo path went stale (%.1f dB more than the microphone): refitting", share)
            self._path.weights = None
            return None
        whole = mic.astype(np.float64)
        self._judged[-1] = (float(np.dot(residual, residual)), float(np.dot(whole, whole)))
        return share

    def judged_share(self, frames: int) -> float | None:
        recent = list(self._judged)[-frames:]
        if len(recent) < frames or any(judged is None for judged in recent):
            return None
        left = sum(judged[0] for judged in recent if judged is not None)
        whole = sum(judged[1] for judged in recent if judged is not None)
        share = 10 * float(np.log10(max(left, 1e-9) / whole)) if whole > 0 else None
        # A path that added energy to these frames no longer matches our echo (it moved): it does
        # not judge them; the check on the snippet itself, which looks for the echo, does.
        return None if share is None or share > PATH_ADDS_DB else share

    def _adopt_fit(self) -> None:
        job = self._fitting
        if job is None or not job.done():
            return
        self._fitting = None
        try:
            weights, delay, share = job.result()
        except Exception:
            _LOGGER.exception("fitting the echo path failed")
            return
        # Else the alignment moved while it ran, or the second held more than our echo.
        if delay == self._aligned_to and share <= FIT_KEEP_DB:
            self._path.weights = weights
        else:
            _LOGGER.debug("echo path fit not kept (%.1f dB unexplained, delay %d)", share, delay)

    def echo_check(self, frames: int, skip_last: int = 0) -> Callable[[], float | None]:
        """The histories are taken now, on the loop: by the time a worker thread runs the job,
        an ear catching up on a backlog may have moved them on by seconds."""
        delay = self._aligned_to
        mic, ref = self._history
        skip = skip_last * self._frame_samples
        if self._delay_unsure() and self._moved_for is not None and skip < self._moved_for:
            return lambda: None  # it reaches our voice since the restart, whose echo may have moved
        if skip:
            mic, ref = mic[:-skip], ref[:-skip]
        samples = 0 if delay is None else min(len(mic) - delay - 64, frames * self._frame_samples)
        if delay is None or samples <= 0:
            return lambda: None
        return lambda: _unexplained_db(mic[-samples:], ref, delay)

    def _align(self, delay: int) -> None:
        """Shift the reference only when the echo no longer fits the filter: shifting resets it."""
        self._aligned_to = delay
        self._path.weights = None  # fitted for the old delay
        self._since_fit = EAR_RATE  # refit as soon as the user is quiet
        ms = delay * 1000 / EAR_RATE
        if self._line.delay <= delay <= self._line.delay + self._tail * 3 // 4:
            _LOGGER.info("echo comes back %.0f ms after playback (within the filter)", ms)
            return
        _LOGGER.info("echo comes back %.0f ms after playback; re-aligning the reference", ms)
        self._line.set_delay(max(0, delay - self.ALIGN_MARGIN_MS * EAR_RATE // 1000))
        self._canceller.reset()

    def close(self) -> None:
        self._fitter.shutdown(wait=True, cancel_futures=True)
        self._canceller.close()


def echo_front(reference: PlaybackReference, vad: VadConfig, audio: AudioConfig) -> EchoCancellingVad:
    """The front end that tells our echo in `reference` from a voice, as `audio.echo` configures it
    (for the daemon's microphone and a satellite's alike); close it when done."""
    return EchoCancellingVad(
        vad.aggressiveness,
        reference,
        frame_ms=vad.frame_ms,
        tail_ms=audio.echo_tail_ms,
        margin_db=audio.echo_margin_db,
        echo_db=audio.echo_unexplained_db,
    )


def _fit_path(mic: np.ndarray, reference: np.ndarray, delay: int) -> tuple[np.ndarray, int, float]:
    """In the fitter's thread: the echo path from `mic` and the `reference` that ends with it,
    and how much of `mic` it leaves unexplained (dB)."""
    path = EchoPath()
    residual = path.fit(mic, reference, delay)
    assert path.weights is not None
    return path.weights, delay, share_db(residual, mic)


def _unexplained_db(mic: np.ndarray, reference: np.ndarray, delay: int) -> float | None:
    """In a checker's thread: how much of `mic` our echo does not explain; None for a silent
    microphone (there is nothing to explain, and it is no one's voice either). Our echo is looked
    for at the estimated delay and where the snippet itself puts it, within DRIFT of it: on a
    loaded box the audio stack's latency moves by tens of ms before the estimate follows."""
    if rms_dbfs(mic) <= SILENT_DB:
        return None
    share = unexplained_db(mic, reference, delay)
    moved = _echo_lag(mic, reference, delay)
    if moved is not None and abs(moved - delay) > DELAY_SLACK:
        share = min(share, unexplained_db(mic, reference, moved))
    return share


def _echo_lag(mic: np.ndarray, reference: np.ndarray, delay: int) -> int | None:
    """The lag within DRIFT of `delay` at which `reference` best matches `mic` (both end now)."""
    low, high = max(0, delay - DRIFT), delay + DRIFT
    start = len(reference) - len(mic) - high - EchoPath().lead
    if start < 0:
        return None
    window = reference[start + EchoPath().lead : len(reference) - low].astype(np.float64)
    size = 1 << int(np.ceil(np.log2(len(window) + len(mic))))
    spectrum = np.fft.rfft(window, size) * np.conj(np.fft.rfft(mic.astype(np.float64), size))
    corr = np.fft.irfft(spectrum, size)[: high - low + 1]
    return high - int(np.argmax(np.abs(corr)))
