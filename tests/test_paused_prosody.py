"""The prosody cue tried for the end-of-turn rule (bench/paused/prosody.py): the pitch tracker hears
a voice's pitch and which way it went at the end. Plain asserts on synthetic voices, no clock."""

from __future__ import annotations

import numpy as np

from bench.paused.prosody import ending, pitch_track

RATE = 16000


def voice(f0_start: float, f0_end: float, seconds: float = 1.0) -> np.ndarray:
    """A buzz with harmonics whose pitch glides from `f0_start` to `f0_end` Hz."""
    f0 = np.linspace(f0_start, f0_end, int(seconds * RATE))
    phase = 2 * np.pi * np.cumsum(f0) / RATE
    buzz = np.sum([np.sin(k * phase) / k for k in range(1, 6)], axis=0)
    return (6000 * buzz).astype(np.int16)


def test_the_pitch_of_a_steady_voice_is_found_not_an_octave_off() -> None:
    for hz in (80.0, 120.0, 220.0, 330.0):
        f0, _level = pitch_track(voice(hz, hz))
        assert (f0 > 0).mean() > 0.95
        assert abs(np.median(f0[f0 > 0]) - hz) < 0.02 * hz


def test_noise_and_silence_have_no_pitch() -> None:
    noise = (np.random.default_rng(1).standard_normal(RATE) * 2000).astype(np.int16)
    assert (pitch_track(noise)[0] > 0).mean() < 0.05
    assert ending(np.zeros(RATE, dtype=np.int16)) is None
    assert ending(voice(120, 120, seconds=0.03)) is None  # too little voice to tell


def test_a_fall_sounds_final_and_a_rise_does_not() -> None:
    fall, rise = ending(voice(180, 110)), ending(voice(110, 180))
    assert fall is not None and rise is not None
    assert fall.slope_st_s < -5 and fall.drop_st > 2
    assert rise.slope_st_s > 5 and rise.drop_st < -2
    assert fall.finality() > rise.finality()


def test_a_fading_end_is_decay() -> None:
    steady = voice(130, 130)
    fading = (steady * np.linspace(1.0, 0.1, len(steady))).astype(np.int16)
    said = ending(fading)
    assert said is not None and said.decay_db > 3
    held = ending(steady)
    assert held is not None and abs(held.decay_db) < 1
