"""Voices and listening conditions for the spoken benchmark, and the WAV each one makes.

A condition is a voice (piper's joe, the daemon's own voice, here without generator noise so
that every run hears the very same audio; or espeak-ng), a speaking rate and optionally
background noise at the condition's SNR against the speech: seeded pink noise under the whole
track, gaps included, or babble (six espeak-ng talkers saying other sentences at once) under
each sentence only, from BABBLE_MARGIN_S before it to BABBLE_MARGIN_S after. Continuous babble
keeps webrtcvad hearing speech in every gap (even at 30 dB SNR), so the ear would never close an
utterance and the run would measure only that. Every sentence is spoken at the same level
(-23 dBFS RMS) and followed by GAP_S of silence, so the ear closes each utterance.
"""

from __future__ import annotations

import fnmatch
import os
import random
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from voiced.audio.pcm import EAR_RATE, read_wav, resample_band_limited, silence, write_wav
from voiced.config import TtsConfig
from voiced.mouth.piper_tts import PiperSynthesizer

SPEECH_DBFS = -23.0
LEAD_S = 1.0
GAP_S = 2.5
BABBLE_TALKERS = 6
BABBLE_MARGIN_S = 0.3
RAMP_S = 0.05
# Other people: none of them is one of the conditions' own voices (en-us, en-gb+f3).
BABBLE_VOICES = (
    "en-gb-x-rp+f4",
    "en-029+m2",
    "en-us+f2",
    "en-gb-scotland+m4",
    "en-gb-x-gbclan+f1",
    "en-us+m6",
)
NOISE_SEED = 7


@dataclass(frozen=True)
class Voice:
    engine: Literal["piper", "espeak"]
    name: str  # piper: the voice; espeak-ng: the voice and variant, e.g. en-gb+f3
    rate: str  # "normal" or "fast"
    length_scale: float = 1.0  # piper
    wpm: int = 175  # espeak-ng

    @property
    def label(self) -> str:
        return f"{self.engine} {self.name}"

    @property
    def rate_label(self) -> str:
        return (
            f"{self.rate} ({self.length_scale:g})" if self.engine == "piper" else f"{self.rate} ({self.wpm})"
        )


@dataclass(frozen=True)
class Condition:
    name: str
    voice: Voice
    noise: Literal["none", "pink", "babble"] = "none"
    snr_db: float = 0.0

    @property
    def noise_label(self) -> str:
        return "clean" if self.noise == "none" else f"{self.noise} {self.snr_db:g} dB"


JOE = "en_US-joe-medium"
_PIPER = Voice("piper", JOE, "normal")
_PIPER_FAST = Voice("piper", JOE, "fast", length_scale=0.8)
_US = Voice("espeak", "en-us", "normal")
_US_FAST = Voice("espeak", "en-us", "fast", wpm=230)
_GB_F = Voice("espeak", "en-gb+f3", "normal")
_GB_F_FAST = Voice("espeak", "en-gb+f3", "fast", wpm=230)

CONDITIONS = (
    Condition("piper", _PIPER),
    Condition("piper-fast", _PIPER_FAST),
    Condition("espeak-us", _US),
    Condition("espeak-us-fast", _US_FAST),
    Condition("espeak-gb-f", _GB_F),
    Condition("espeak-gb-f-fast", _GB_F_FAST),
    Condition("piper+babble", _PIPER, "babble", 12.0),
    Condition("piper-fast+pink", _PIPER_FAST, "pink", 10.0),
    Condition("espeak-us+babble", _US, "babble", 12.0),
)


def pick_conditions(patterns: str | None) -> list[Condition]:
    """Comma-separated names or globs ('piper*,espeak-us'); None = all."""
    if not patterns:
        return list(CONDITIONS)
    wanted = [p.strip() for p in patterns.split(",") if p.strip()]
    chosen = [c for c in CONDITIONS if any(fnmatch.fnmatchcase(c.name, p) for p in wanted)]
    unknown = [p for p in wanted if not any(fnmatch.fnmatchcase(c.name, p) for c in CONDITIONS)]
    if unknown or not chosen:
        names = ", ".join(c.name for c in CONDITIONS)
        raise SystemExit(f"bench: no condition matches {', '.join(unknown) or patterns}; there are: {names}")
    return chosen


def ensure_espeak() -> str:
    """The espeak-ng binary, installed with apt-get (as scripts/setup.sh installs its packages)."""
    found = shutil.which("espeak-ng")
    if found:
        return found
    print("bench: installing the Debian package espeak-ng (the benchmark's second voice)", flush=True)
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    install = [*sudo, "apt-get", "install", "-y", "-q", "--no-install-recommends", "espeak-ng"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    if subprocess.run(install, env=env, check=False).returncode != 0:
        subprocess.run([*sudo, "apt-get", "update", "-q"], env=env, check=True)
        subprocess.run(install, env=env, check=True)
    found = shutil.which("espeak-ng")
    if not found:
        raise SystemExit("bench: espeak-ng is still missing after apt-get install")
    return found


class Speaker:
    """Speaks single sentences as 16 kHz int16 at the benchmark's level; piper voices are cached."""

    def __init__(self, models_dir: Path) -> None:
        self._models_dir = models_dir
        self._piper: dict[tuple[str, float], PiperSynthesizer] = {}
        self._espeak: str | None = None
        self._tmp = Path(tempfile.mkdtemp(prefix="voiced-espeak-"))

    def close(self) -> None:
        shutil.rmtree(self._tmp, ignore_errors=True)

    def say(self, voice: Voice, text: str) -> np.ndarray:
        spoken = self._raw(voice, _for_speaking(text))
        return _at_level(spoken, SPEECH_DBFS)

    def _raw(self, voice: Voice, text: str) -> np.ndarray:
        if voice.engine == "piper":
            synth = self._piper.get((voice.name, voice.length_scale))
            if synth is None:
                # No generator noise: the same sentence is the same audio in every run, so two runs
                # (say beam 1 and beam 5) hear exactly the same thing.
                config = TtsConfig(
                    voice=voice.name, length_scale=voice.length_scale, noise_scale=0.0, noise_w_scale=0.0
                )
                synth = PiperSynthesizer(config, self._models_dir)
                self._piper[voice.name, voice.length_scale] = synth
            return resample_band_limited(synth.synthesize(text), synth.sample_rate, EAR_RATE)
        if self._espeak is None:
            self._espeak = ensure_espeak()
        out = self._tmp / "sentence.wav"
        subprocess.run(
            [self._espeak, "-v", voice.name, "-s", str(voice.wpm), "-w", str(out), text],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        samples, rate = read_wav(out)
        return resample_band_limited(samples, rate, EAR_RATE)


def _for_speaking(text: str) -> str:
    """A sentence as a person would say it: ended, with a question's rise when it is one."""
    text = text.strip()
    if text and text[-1] in ".?!":
        return text
    first = text.split(maxsplit=1)[0].lower() if text else ""
    questions = {"is", "are", "what", "what's", "which", "who", "how", "can", "could", "do", "does", "will"}
    return f"{text}?" if first in questions else f"{text}."


def _rms(samples: np.ndarray) -> float:
    return float(np.sqrt(np.mean(samples.astype(np.float64) ** 2))) if len(samples) else 0.0


def _at_level(samples: np.ndarray, dbfs: float) -> np.ndarray:
    rms = _rms(samples)
    if rms == 0:
        return samples.astype(np.int16)
    gain = 32768.0 * 10 ** (dbfs / 20) / rms
    peak = float(np.max(np.abs(samples))) * gain
    if peak > 32000:  # never clip: a little quieter instead
        gain *= 32000 / peak
    return np.clip(np.round(samples * gain), -32768, 32767).astype(np.int16)


@dataclass(frozen=True)
class Track:
    path: Path
    spans: tuple[tuple[int, int], ...]  # each sentence's speech, in samples from the start
    seconds: float


def build_track(
    speaker: Speaker, condition: Condition, lines: list[str], path: Path, babble_lines: list[str]
) -> Track:
    """One WAV with every sentence of `lines` in order, each followed by GAP_S of silence."""
    parts = [silence(LEAD_S, EAR_RATE)]
    spans = []
    position = len(parts[0])
    for line in lines:
        spoken = speaker.say(condition.voice, line)
        spans.append((position, position + len(spoken)))
        parts += [spoken, silence(GAP_S, EAR_RATE)]
        position += len(spoken) + int(GAP_S * EAR_RATE)
    track = np.concatenate(parts)
    if condition.noise != "none":
        speech = np.concatenate([track[a:b] for a, b in spans])
        if condition.noise == "babble":
            envelope = _under(spans, len(track))
            noise = _babble(speaker, babble_lines, len(track)) * envelope
            present = noise[envelope > 0.5]
        else:
            noise = present = _pink(len(track), NOISE_SEED)
        noise_rms = _rms(speech) / 10 ** (condition.snr_db / 20)
        mixed = track.astype(np.float64) + noise * (noise_rms / max(_rms(present), 1e-9))
        track = np.clip(np.round(mixed), -32768, 32767).astype(np.int16)
    write_wav(path, track, EAR_RATE)
    return Track(path, tuple(spans), len(track) / EAR_RATE)


def _pink(length: int, seed: int) -> np.ndarray:
    """Seeded pink (1/f) noise: white noise shaped in the frequency domain."""
    white = np.random.default_rng(seed).standard_normal(length)
    spectrum = np.fft.rfft(white)
    freqs = np.fft.rfftfreq(length, 1 / EAR_RATE)
    spectrum[1:] /= np.sqrt(freqs[1:] / freqs[1])
    spectrum[0] = 0
    return np.fft.irfft(spectrum, length)


def _under(spans: tuple[tuple[int, int], ...] | list[tuple[int, int]], length: int) -> np.ndarray:
    """1 under each span (widened by BABBLE_MARGIN_S), 0 elsewhere, with short raised-cosine ramps."""
    envelope = np.zeros(length)
    margin = int(BABBLE_MARGIN_S * EAR_RATE)
    ramp = int(RAMP_S * EAR_RATE)
    rise = 0.5 - 0.5 * np.cos(np.linspace(0, np.pi, ramp))
    for start, end in spans:
        a, b = max(0, start - margin), min(length, end + margin)
        envelope[a:b] = 1.0
        up = min(ramp, b - a)
        envelope[a : a + up] = rise[:up]
        envelope[b - up : b] = rise[:up][::-1]
    return envelope


def _babble(speaker: Speaker, lines: list[str], length: int) -> np.ndarray:
    """BABBLE_TALKERS espeak-ng voices, each saying `lines` in its own seeded order without pause."""
    rng = random.Random(NOISE_SEED)
    total = np.zeros(length)
    for index in range(BABBLE_TALKERS):
        name = BABBLE_VOICES[index % len(BABBLE_VOICES)]
        voice = Voice("espeak", name, "normal", wpm=150 + 15 * index)
        order = list(lines)
        rng.shuffle(order)
        stream: list[np.ndarray] = []
        have = 0
        while have < length:
            for line in order:
                spoken = speaker.say(voice, line)
                stream.append(spoken)
                have += len(spoken)
                if have >= length:
                    break
        talker = np.concatenate(stream).astype(np.float64)
        start = rng.randrange(len(talker) - length + 1) if len(talker) > length else 0
        total += talker[start : start + length]
    return total
