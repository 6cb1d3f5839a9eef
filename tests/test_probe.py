"""The bench's measurements of onset and silence, on made-up recordings: arrays in, seconds out."""

from __future__ import annotations

import numpy as np

from tests.probe import RATE, StreamClock, find, first_silence, last_sound, silent_run, voice_start


def noise(seconds: float, level: float, seed: int) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(int(seconds * RATE)) * level).astype(np.int16)


def test_the_earliest_arrival_sets_the_clock() -> None:
    clock = StreamClock(RATE)
    clock.arrived(10.05, 1600)  # 100 ms of audio, 50 ms late
    clock.arrived(10.11, 3200)  # 10 ms late: the tightest bound
    clock.arrived(10.40, 4800)  # a stall in delivery
    assert abs(clock.time_of(0) - 9.91) < 1e-9
    assert abs(clock.time_of(RATE) - 10.91) < 1e-9
    assert clock.index_at(10.41) == 8000


def test_a_known_voice_is_found_under_another_sound() -> None:
    voice = noise(0.8, 3000, seed=1)
    recording = noise(3.0, 1500, seed=2)  # our echo, as loud as the voice give or take
    at = int(1.234 * RATE)
    recording[at : at + len(voice)] += voice
    assert find(voice, recording) == at
    assert find(voice, noise(3.0, 1500, seed=3)) is None  # not there at all


def test_voice_start_skips_the_quiet_lead_in() -> None:
    samples = np.concatenate([noise(0.12, 3, seed=4), noise(0.5, 5000, seed=5)])
    assert abs(voice_start(samples) - 0.12) <= 0.01


def test_last_sound_is_where_the_speaker_fell_silent() -> None:
    samples = np.concatenate([noise(0.73, 4000, seed=6), np.zeros(RATE, dtype=np.int16)])
    assert abs((last_sound(samples) or 0) - 0.73) <= 0.01
    assert last_sound(np.zeros(RATE, dtype=np.int16)) is None


def test_first_silence_finds_the_stopped_speaker_not_a_pause_between_words() -> None:
    voice = noise(0.4, 3000, seed=7)
    pause = noise(0.2, 2, seed=8)  # quiet, but never the exact zeros of a stopped speaker
    samples = np.concatenate([voice, pause, voice, np.zeros(RATE // 2, dtype=np.int16), voice])
    assert abs((first_silence(samples) or 0) - 1.0) <= 0.001
    assert first_silence(voice) is None


def test_a_pause_is_found_with_where_sound_came_back() -> None:
    voice = noise(1.0, 3000, seed=9)
    gap = np.zeros(int(0.15 * RATE), dtype=np.int16)  # between two sentences: too short
    samples = np.concatenate([voice, gap, voice, np.zeros(RATE // 2, dtype=np.int16), voice])
    assert silent_run(samples) == (int(2.15 * RATE), int(2.65 * RATE))
    assert silent_run(np.concatenate([voice, np.zeros(RATE, dtype=np.int16)])) == (RATE, None)
    assert silent_run(voice) is None
