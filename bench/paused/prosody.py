"""How the voice ended before a pause: the pitch and loudness of its last few hundred milliseconds.

A speaker who is done lets the pitch fall to the bottom of their range; one who means to go on
holds it level or lifts it ("turn on the kitchen light, … and the bedroom one"). This is the cue
bench/calibrate_prosody.py tried on the paused-commands set for the end-of-turn rule (issue 27,
item 1); it did not separate pauses from ends there, so the daemon does not use it. Pure and
clock-free: 16 kHz int16 samples in, numbers out. Pitch is the normalised cross-correlation
peak of 20 ms windows every 10 ms (numpy only, a few milliseconds for a second of audio).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

RATE = 16000
HOP = RATE // 100  # 10 ms
WINDOW = 2 * HOP  # 20 ms compared with itself a period later
F0_LOW, F0_HIGH = 60.0, 400.0
VOICED_CORR = 0.5  # normalised autocorrelation peak of a voiced frame
QUIET_DB = 35.0  # frames this far under the loudest are silence, voiced or not


@dataclass(frozen=True)
class Ending:
    """The last voiced stretch before a pause, against the voice before it."""

    drop_st: float  # how far the pitch ends under the voice's median, semitones (+: fell under it)
    slope_st_s: float  # the pitch's slope over the last stretch, semitones per second (-: falling)
    decay_db: float  # loudness of the last stretch's end under its start, dB (+: fading)
    lengthening: float  # the last voiced run against the median run before it (+: drawn out)
    voiced_ms: int  # voiced audio found in the last stretch

    def finality(self) -> float:
        """One number: higher sounds more like the end (a fall to the bottom of the range)."""
        return self.drop_st - self.slope_st_s / 20.0


def pitch_track(samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per 10 ms frame: F0 in Hz (0: unvoiced or quiet) and level in dB. The normalised
    cross-correlation of a 20 ms window with the audio a lag later; the shortest lag whose peak
    comes near the best one is the period (a multiple of it would halve the pitch)."""
    x = np.asarray(samples, dtype=np.float64)
    lo, hi = int(RATE / F0_HIGH), int(RATE / F0_LOW) + 1
    span = WINDOW + hi
    count = max(0, (len(x) - span) // HOP + 1)
    if not count:
        return np.zeros(0), np.zeros(0)
    frames = np.lib.stride_tricks.sliding_window_view(x, span)[::HOP][:count]
    frames = frames - frames[:, :WINDOW].mean(axis=1, keepdims=True)
    head = frames[:, :WINDOW]
    energy = np.sum(head**2, axis=1)
    level = 10 * np.log10(energy / WINDOW + 1e-9)
    squares = np.cumsum(np.pad(frames**2, ((0, 0), (1, 0))), axis=1)
    corr = np.empty((count, hi - lo + 1))
    for i, lag in enumerate(range(lo, hi + 1)):
        later = frames[:, lag : lag + WINDOW]
        later_energy = squares[:, lag + WINDOW] - squares[:, lag]
        corr[:, i] = np.einsum("ij,ij->i", head, later) / np.sqrt(energy * later_energy + 1e-9)
    best = corr.max(axis=1)
    inner = (corr[:, 1:-1] >= corr[:, :-2]) & (corr[:, 1:-1] >= corr[:, 2:])
    near = inner & (corr[:, 1:-1] >= 0.9 * best[:, None])
    first = np.where(near.any(axis=1), np.argmax(near, axis=1) + 1, np.argmax(corr, axis=1))
    rows = np.arange(count)
    peak = corr[rows, first]
    left = corr[rows, np.maximum(first - 1, 0)]
    right = corr[rows, np.minimum(first + 1, corr.shape[1] - 1)]
    bend = left - 2 * peak + right
    shift = np.where(bend < -1e-12, 0.5 * (left - right) / np.where(bend < -1e-12, bend, -1.0), 0.0)
    f0 = RATE / (lo + first + np.clip(shift, -0.5, 0.5))
    loud = level > level.max() - QUIET_DB
    return np.where((peak > VOICED_CORR) & loud, f0, 0.0), level


def ending(samples: np.ndarray, tail_ms: int = 300) -> Ending | None:
    """How the voice in `samples` (the utterance up to the pause, trailing silence cut or not)
    ended: its last `tail_ms` of voiced frames against the median pitch of all of it. None: too
    little voice to tell."""
    f0, level = pitch_track(samples)
    voiced = np.flatnonzero(f0 > 0)
    if len(voiced) < 5:
        return None
    semitones = 12 * np.log2(f0[voiced] / 100.0)
    # octave slips: a frame 9 semitones or more off the voice's median is dropped
    median = np.median(semitones)
    keep = np.abs(semitones - median) < 9
    voiced, semitones = voiced[keep], semitones[keep]
    if len(voiced) < 5:
        return None
    last = voiced[-1]
    in_tail = voiced > last - tail_ms // 10
    tail_frames, tail_st = voiced[in_tail], semitones[in_tail]
    if len(tail_frames) < 3:
        return None
    slope = float(np.polyfit(tail_frames / 100.0, tail_st, 1)[0])
    end_st = float(np.median(tail_st[-max(3, len(tail_st) // 4) :]))
    tail_level = level[tail_frames]
    third = max(1, len(tail_level) // 3)
    decay = float(np.mean(tail_level[:third]) - np.mean(tail_level[-third:]))
    return Ending(
        drop_st=float(np.median(semitones)) - end_st,
        slope_st_s=slope,
        decay_db=decay,
        lengthening=_last_run(f0 > 0),
        voiced_ms=10 * len(tail_frames),
    )


def _last_run(voiced: np.ndarray) -> float:
    """The last run of voiced frames (a syllable's vowel, roughly) over the median run."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], voiced.astype(np.int8), [0]])))
    runs = edges[1::2] - edges[::2]
    runs = runs[runs >= 3]
    return float(runs[-1] / np.median(runs)) if len(runs) else 0.0
