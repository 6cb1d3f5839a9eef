"""`voiced demo`: a short scripted conversation, spoken by the daemon's own TTS into its ear."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from voiced.audio.pcm import EAR_RATE, resample, silence, write_wav
from voiced.mouth.synthesizer import Synthesizer

DEMO_SCRIPT = (
    "Turn on the kitchen light.",
    "Set the bedroom light to fifty percent and play some jazz.",
    "Help me relax.",
    "What is the capital of France?",
    "Good night.",
)


def speak_script(
    synthesizer: Synthesizer, lines: tuple[str, ...] | list[str], *, gap_s: float = 2.5
) -> np.ndarray:
    """The user's side of the conversation as 16 kHz audio, lines separated by silence."""
    parts = [silence(1.0, EAR_RATE)]
    for line in lines:
        spoken = synthesizer.synthesize(line)
        parts.append(resample(spoken, synthesizer.sample_rate, EAR_RATE))
        parts.append(silence(gap_s, EAR_RATE))
    return np.concatenate(parts)


def write_script_wav(
    synthesizer: Synthesizer, lines: tuple[str, ...] | list[str], path: Path, *, gap_s: float = 2.5
) -> float:
    audio = speak_script(synthesizer, lines, gap_s=gap_s)
    write_wav(path, audio, EAR_RATE)
    return len(audio) / EAR_RATE
