"""Spoken test input, synthesized at test time by the daemon's own TTS (no shipped WAVs)."""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path

import numpy as np

from voiced.audio.pcm import EAR_RATE, resample_band_limited
from voiced.config import TtsConfig
from voiced.demo import write_script_wav
from voiced.mouth.piper_tts import PiperSynthesizer


@functools.cache
def synthesizer() -> PiperSynthesizer:
    # Without generator noise the same words give the same audio in every run: no flaky hearing.
    return PiperSynthesizer(TtsConfig(noise_scale=0.0, noise_w_scale=0.0), Path("models"))


def spoken(text: str) -> np.ndarray:
    """`text` in the daemon's voice at the ear's rate, with a quarter second of silence each side."""
    voice = synthesizer()
    speech = resample_band_limited(voice.synthesize(text), voice.sample_rate, EAR_RATE)
    quiet = np.zeros(EAR_RATE // 4, np.int16)
    return np.concatenate([quiet, speech, quiet])


def spoken_wav(lines: list[str], path: Path, *, gap_s: float = 1.5) -> Path:
    write_script_wav(synthesizer(), lines, path, gap_s=gap_s)
    return path


class RealTimeSink:
    """Plays nothing, but takes as long as the audio would: a speaker without the noise."""

    def __init__(self) -> None:
        self.played_s = 0.0
        self.aborted = 0
        self.paused = False
        self.pauses = 0

    async def play(self, samples: np.ndarray, rate: int) -> None:
        while self.paused:  # a paused speaker takes nothing more (time passes, nothing plays)
            await asyncio.sleep(0.01)
        self.played_s += len(samples) / rate
        await asyncio.sleep(len(samples) / rate)

    async def drain(self) -> None:
        await asyncio.sleep(0)

    def abort(self) -> None:
        self.aborted += 1
        self.paused = False

    def pause(self) -> None:
        self.paused = True
        self.pauses += 1

    def resume(self) -> None:
        self.paused = False

    def close(self) -> None:
        pass
