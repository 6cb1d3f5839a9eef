"""How late our own voice comes back into the microphone, found by cross-correlation.

A speaker restart (a pause, stop or reply start recalls what the device held) can move the echo
by tens of milliseconds: a stream that starts one PulseAudio tick late, or a recall that comes
after the ear had already paired the recalled samples with the microphone. Until the delay is
found again the echo path cannot be fitted, and speech over the reply is unknowable (it cannot
pause it). So after a restart the estimator looks early and often, at what followed the restart
only, and near the delay it had.
"""

from __future__ import annotations

import numpy as np

CONFIDENT = 0.6  # normalised correlation at the peak: below it, the estimate is not taken
QUIET_SPELL = 250  # ms without our voice: what follows is a new start (a resume, a reply)


class DelayEstimator:
    """Fed the raw microphone and the reference, frame by frame; re-estimates every `every_s`
    of real playback (and soon after a restart) and keeps an estimate only when the peak is clear.
    """

    def __init__(
        self,
        sample_rate: int = 16000,
        *,
        window_s: float = 2.0,
        max_delay_s: float = 0.8,
        every_s: float = 1.0,
        near_s: float = 0.06,
        min_window_s: float = 0.2,
        after_restart_s: tuple[float, ...] = (0.35, 0.5, 0.7, 1.0),
    ) -> None:
        self._rate = sample_rate
        self._size = int(window_s * sample_rate)
        self._max_lag = int(max_delay_s * sample_rate)
        self._every = int(every_s * sample_rate)
        self._near = int(near_s * sample_rate)
        self._min_window = int(min_window_s * sample_rate)
        self._after_restart = [int(s * sample_rate) for s in after_restart_s]
        self._mic = np.zeros(self._size + self._max_lag, dtype=np.float32)
        self._ref = np.zeros(self._size + self._max_lag, dtype=np.float32)
        self._since = 0  # playback since the last estimate
        self._since_restart = len(self._mic)  # samples (all) since the speaker restarted
        self._played_since_restart = 0
        self._looks: list[int] = []  # playback since the restart at which to look again
        # Samples since our voice began again after a quiet spell: after a pause, what came
        # before the resume is the user's voice over silence, which only hides the echo's peak.
        self._quiet = 0
        self._since_onset = 0
        self.delay: int | None = None  # samples
        self.confidence = 0.0
        # Whether `delay` was found on what followed the last restart (a restart may have moved it).
        self.fresh = False

    def restarted(self) -> None:
        """The microphone reached a point where the speaker restarted: what came before no
        longer tells where our echo is."""
        self._since_restart = 0
        self._played_since_restart = 0
        self._looks = list(self._after_restart)
        self.fresh = False

    def feed(self, mic: np.ndarray, reference: np.ndarray, *, playing: bool) -> int | None:
        count = len(mic)
        self._mic = np.concatenate([self._mic[count:], mic.astype(np.float32)])
        self._ref = np.concatenate([self._ref[count:], reference.astype(np.float32)])
        self._since_restart = min(self._since_restart + count, len(self._mic))
        self._since += count if playing else 0
        self._played_since_restart += count if playing else 0
        if playing and self._quiet >= QUIET_SPELL * self._rate // 1000:
            self._since_onset = 0
        self._quiet = 0 if playing else self._quiet + count
        self._since_onset += count
        look = bool(self._looks) and self._played_since_restart >= self._looks[0]
        if look:
            self._looks.pop(0)
        if look or self._since >= self._every:
            self._since = 0
            self._estimate()
        return self.delay

    def _lags(self, span: int) -> tuple[int, int] | None:
        """The lags to search with `span` samples: all of them when the span allows it, else
        those near the last delay (a restart moves the echo by milliseconds, not by half a second)."""
        if span - self._max_lag >= min(self._size, self._min_window * 3):
            return 0, self._max_lag
        if self.delay is None:
            return None
        low, high = max(0, self.delay - self._near), min(self._max_lag, self.delay + self._near)
        return (low, high) if span - high >= self._min_window else None

    def _estimate(self) -> None:
        total = len(self._mic)
        span = self._since_restart
        if span < total:  # since a restart: only since our voice came back
            span = min(span, self._since_onset)
        lags = self._lags(span)
        if lags is None:
            return
        low, high = lags
        # The reference since the restart whose echo (at any lag searched) is in already, against
        # the microphone from the smallest lag on.
        ref = self._ref[total - span : total - high]
        mic = self._mic[total - span + low :]
        if not ref.any() or not mic.any():
            return
        length = 1 << int(np.ceil(np.log2(len(mic) + len(ref))))
        spectrum = np.fft.rfft(mic, length) * np.conj(np.fft.rfft(ref, length))
        corr = np.fft.irfft(spectrum, length)[: high - low + 1]
        peak = int(np.argmax(np.abs(corr)))
        heard = mic[peak : peak + len(ref)]
        energy = float(np.sqrt(np.dot(ref, ref) * np.dot(heard, heard)))
        confidence = float(abs(corr[peak]) / energy) if energy > 0 else 0.0
        if confidence >= CONFIDENT:
            self.delay, self.confidence, self.fresh = low + peak, confidence, True
