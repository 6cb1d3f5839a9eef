"""Spoken test input, synthesized at test time by the daemon's own TTS (no shipped WAVs)."""

from __future__ import annotations

import functools
from pathlib import Path

from voiced.config import TtsConfig
from voiced.demo import write_script_wav
from voiced.mouth.piper_tts import PiperSynthesizer


@functools.cache
def synthesizer() -> PiperSynthesizer:
    # Without generator noise the same words give the same audio in every run: no flaky hearing.
    return PiperSynthesizer(TtsConfig(noise_scale=0.0, noise_w_scale=0.0), Path("models"))


def spoken_wav(lines: list[str], path: Path, *, gap_s: float = 1.5) -> Path:
    write_script_wav(synthesizer(), lines, path, gap_s=gap_s)
    return path
