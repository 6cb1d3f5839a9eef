"""The real speaker (PortAudio through PulseAudio's ALSA plugin) falls silent at once when paused
or stopped, a paused reply resumes with nothing lost, a reply after silence is heard at once,
and the echo reference stays in step with what was heard."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from tests.probe import RATE, MonitorRecorder, find, first_silence, silent_run
from tests.pulse import SPEAKER_SINK, PulseServer

REPO = Path(__file__).resolve().parent.parent
SIGNAL_S = 3.0
LOOKUP_S = 0.25  # of the heard sound each side of the pause, placed in the signal


def noise_signal() -> np.ndarray:
    """Noise below 4 kHz: every stretch of it is unlike every other, so it can be placed."""
    noise = np.random.default_rng(7).standard_normal(int(SIGNAL_S * RATE))
    smooth = np.convolve(noise, np.ones(4) / 4, mode="same")
    return (smooth / np.abs(smooth).max() * 12000).astype(np.int16)


def play(pulse: PulseServer, tmp_path: Path, mode: str) -> tuple[dict[str, float], np.ndarray, float]:
    signal = noise_signal()
    np.save(tmp_path / "signal.npy", signal)
    monitor = MonitorRecorder(pulse, f"{SPEAKER_SINK}.monitor")
    monitor.start()
    try:
        begun = time.monotonic()
        rig = [sys.executable, "-m", "tests.speaker_rig", str(tmp_path / "signal.npy")]
        rig += [str(tmp_path / "out.json")]
        subprocess.run([*rig, mode], env=pulse.env(), cwd=REPO, check=True, timeout=60)
        heard, first_t = monitor.between(begun, time.monotonic())
    finally:
        monitor.stop()
    return json.loads((tmp_path / "out.json").read_text()), heard, first_t


def test_a_paused_speaker_falls_silent_at_once_and_resumes_where_it_stopped(
    pulse: PulseServer, tmp_path: Path
) -> None:
    times, heard, first_t = play(pulse, tmp_path, "pause")
    begins = int(np.flatnonzero(np.abs(heard.astype(np.int32)) > 1)[0])
    heard, first_t = heard[begins:], first_t + begins / RATE
    gap = silent_run(heard, min_s=0.3)
    assert gap is not None and gap[1] is not None, "no pause was heard"
    silent_t = first_t + gap[0] / RATE
    # Before, the device played out the 0.2 s it held; now it is dropped.
    late = silent_t - times["call_t"]
    assert late < 0.1, f"sound went on {late:.3f} s after the pause"
    signal = noise_signal()
    span = int(LOOKUP_S * RATE)
    before = find(heard[gap[0] - span : gap[0]], signal, min_match=0.5)
    after = find(heard[gap[1] : gap[1] + span], signal, min_match=0.5)
    assert before is not None and after is not None, "the heard sound is not the signal"
    broke_off, came_back = before + span, after
    assert came_back <= broke_off, f"{(came_back - broke_off) / RATE:.3f} s of the signal were lost"
    assert broke_off - came_back < 0.02 * RATE, f"{(broke_off - came_back) / RATE:.3f} s were played twice"
    played_on = first_silence(heard[gap[1] :], min_s=0.3)
    assert played_on is not None and played_on > 0.5 * (SIGNAL_S - 1.0), "it did not play on to the end"
    # The echo reference holds what was heard, once: the recalled audio was retracted from it.
    assert abs(times["reference_sound"] - np.count_nonzero(signal)) < 0.02 * RATE


def test_a_stopped_speaker_falls_silent_at_once(pulse: PulseServer, tmp_path: Path) -> None:
    times, heard, first_t = play(pulse, tmp_path, "stop")
    start = max(0, round((times["call_t"] - first_t) * RATE))
    assert np.abs(heard[start - int(0.1 * RATE) : start]).max() > 1000, "nothing played before the stop"
    silent = first_silence(heard[start - int(0.05 * RATE) :], min_s=0.3)
    assert silent is not None
    assert silent - 0.05 < 0.1, f"sound went on {silent - 0.05:.3f} s after the stop"
    assert times["reference_sound"] < (times["call_t"] - first_t) * RATE + 0.05 * RATE


def sound_runs(samples: np.ndarray, min_gap_s: float = 0.3) -> list[tuple[int, int]]:
    """(first, end) of each stretch of sound, split where exact zeros last `min_gap_s`."""
    loud = np.flatnonzero(np.abs(samples.astype(np.int32)) > 1)
    runs: list[tuple[int, int]] = []
    for index in loud:
        if runs and index - runs[-1][1] < min_gap_s * RATE:
            runs[-1] = (runs[-1][0], int(index) + 1)
        else:
            runs.append((int(index), int(index) + 1))
    return runs


def test_a_reply_after_silence_is_heard_at_once_and_its_echo_reference_keeps_the_gap(
    pulse: PulseServer, tmp_path: Path
) -> None:
    times, heard, first_t = play(pulse, tmp_path, "after-silence")
    runs = sound_runs(heard)
    assert len(runs) == 2, f"expected a blip and a reply, heard {len(runs)} stretches of sound"
    late = first_t + runs[1][0] / RATE - times["call_t"]
    # Before, it waited behind the 0.2 s of silence the device held.
    assert late < 0.1, f"the reply was heard {late:.3f} s after it was played"
    reference = sound_runs(np.load(tmp_path / "out.npy"))
    assert len(reference) == 2
    heard_gap = runs[1][0] - runs[0][1]
    reference_gap = reference[1][0] - reference[0][1]
    # The echo canceller pairs microphone and reference sample by sample: the silence between
    # them must be the same length in both, or the echo moves under it. Left in the reference,
    # the recalled silence would make it 0.2 s too long; PulseAudio starts the restarted stream
    # on its next ~10 ms tick, which the canceller's delay estimate follows.
    assert abs(heard_gap - reference_gap) < 0.015 * RATE, (heard_gap, reference_gap)
