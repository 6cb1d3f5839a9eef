"""The paused-commands set (bench/paused/commands.yaml) spoken into one track with known times.

Each command is spoken by piper's joe at normal and fast rate (the voices the other benches use,
without generator noise, so every run hears the same audio), part by part with each part's own
leading and trailing silence cut, the drawn pause between parts, and `gap_s` between commands.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from voiced.audio.pcm import EAR_RATE, resample_band_limited, silence
from voiced.config import TtsConfig
from voiced.mouth.piper_tts import PiperSynthesizer
from voiced.yamlfile import load_yaml

HERE = Path(__file__).resolve().parent
VOICES = {"joe": 1.0, "joe-fast": 0.8}  # voice name → piper length scale
FRAME = EAR_RATE * 10 // 1000
QUIET_DBFS = -45.0  # quieter 10 ms frames at a part's ends are its silence


@dataclass(frozen=True)
class Said:
    """One command as spoken: where its parts begin and end in the track (seconds)."""

    text: str
    voice: str
    pauses_ms: tuple[int, ...]
    starts: tuple[float, ...]  # each part's first sound
    end: float  # the last part's last sound

    @property
    def last_part(self) -> float:
        return self.starts[-1]


def load(path: Path = HERE / "commands.yaml") -> tuple[int, tuple[int, int], list[str]]:
    raw = load_yaml(path)
    low, high = (int(v) for v in raw["pause_ms"])
    commands = [str(c) for c in raw["commands"]]
    for command in commands:
        if "|" not in command:
            raise ValueError(f"{path}: {command!r} has no pause (mark it with ' | ')")
    return int(raw["seed"]), (low, high), commands


def split(commands: list[str], seed: int) -> tuple[list[str], list[str]]:
    """A fixed-seed half for tuning, the other half held out."""
    order = list(commands)
    random.Random(seed).shuffle(order)
    half = len(order) // 2
    return order[:half], order[half:]


def pauses_for(command: str, voice: str, seed: int, pause_ms: tuple[int, int]) -> tuple[int, ...]:
    rng = random.Random(f"{seed}:{voice}:{command}")
    return tuple(10 * rng.randint(pause_ms[0] // 10, pause_ms[1] // 10) for _ in command.split("|")[1:])


def _trimmed(audio: np.ndarray) -> np.ndarray:
    frames = audio[: len(audio) // FRAME * FRAME].astype(np.float64).reshape(-1, FRAME)
    level = 20 * np.log10(np.sqrt(np.mean(frames**2, axis=1)) / 32768 + 1e-9)
    loud = np.flatnonzero(level > QUIET_DBFS)
    if not len(loud):
        raise ValueError("a part of the paused set synthesized to silence")
    return audio[loud[0] * FRAME : (loud[-1] + 1) * FRAME]


def speak(
    commands: list[str], seed: int, pause_ms: tuple[int, int], models: Path, *, gap_s: float = 1.2
) -> tuple[np.ndarray, list[Said]]:
    """Every command in every voice, one after another: the track (16 kHz int16) and its times."""
    chunks = [silence(0.5, EAR_RATE)]
    at = 0.5
    said: list[Said] = []
    for voice, scale in VOICES.items():
        tts = PiperSynthesizer(TtsConfig(noise_scale=0.0, noise_w_scale=0.0, length_scale=scale), models)
        for command in commands:
            pauses = pauses_for(command, voice, seed, pause_ms)
            starts = []
            for i, part in enumerate(p.strip() for p in command.split("|")):
                if i:
                    chunks.append(silence(pauses[i - 1] / 1000, EAR_RATE))
                    at += pauses[i - 1] / 1000
                audio = _trimmed(resample_band_limited(tts.synthesize(part), tts.sample_rate, EAR_RATE))
                starts.append(at)
                chunks.append(audio)
                at += len(audio) / EAR_RATE
            said.append(Said(command, voice, pauses, tuple(starts), at))
            chunks.append(silence(gap_s, EAR_RATE))
            at += gap_s
    return np.concatenate(chunks).astype(np.int16), said


def score(said: list[Said], closes: list[float]) -> tuple[list[Said], list[float]]:
    """`closes`: when each turn closed (seconds into the track). The commands cut before their last
    part (a premature end), and for the others the end of speech → turn closed times (seconds)."""
    premature, latencies = [], []
    for item in said:
        inside = [t for t in closes if item.starts[0] < t <= item.end + 1.0]
        if any(t < item.last_part for t in inside):
            premature.append(item)
        after = [t - item.end for t in inside if t >= item.end]
        if after and not any(t < item.last_part for t in inside):
            latencies.append(min(after))
    return premature, latencies
