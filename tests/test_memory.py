"""Memory settings: the `memory` section, asr.fit_batch and tts.memory_arena are read; sentences
weighed a few at a time score as when weighed all at once (real Whisper tiny.en); piper without its
arena says the same."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.conftest import REPO
from voiced.config import AsrConfig, load_config
from voiced.errors import ConfigError


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(f"devices_dir: {REPO / 'devices'}\n{text}")
    return path


def test_the_memory_settings_are_read(tmp_path: Path) -> None:
    default = load_config(_config(tmp_path, ""), {})
    assert default.memory.give_back_after_turn and default.memory.malloc_arenas is None
    assert default.asr.fit_batch == 8 and default.tts.memory_arena
    text = (
        "memory:\n  give_back_after_turn: false\n  malloc_arenas: 2\nasr:\n  fit_batch: 3\n"
        "tts:\n  memory_arena: false\n"
    )
    config = load_config(_config(tmp_path, text), {})
    assert not config.memory.give_back_after_turn
    assert config.memory.malloc_arenas == 2 and config.asr.fit_batch == 3
    assert not config.tts.memory_arena


@pytest.mark.parametrize("text", ["memory:\n  malloc_arenas: 0\n", "asr:\n  fit_batch: 0\n"])
def test_no_arena_or_empty_batch(tmp_path: Path, text: str) -> None:
    with pytest.raises(ConfigError):
        load_config(_config(tmp_path, text), {})


def test_sentences_weighed_a_few_at_a_time_score_as_all_at_once() -> None:
    from voiced.ear.whisper import WhisperTranscriber

    sentences = [f"turn on the {room} light" for room in ("kitchen", "bedroom", "hall", "office", "attic")]
    rng = np.random.default_rng(7)
    audio = (rng.standard_normal(16000 * 2) * 0.05).astype(np.float32)
    scores = {}
    for batch in (1, 2, 64):
        whisper = WhisperTranscriber(AsrConfig(fit_batch=batch), REPO / "models", glances=False)
        scores[batch] = whisper.fit(audio, sentences)
    assert len(scores[64]) == len(sentences)
    for batch in (1, 2):
        assert scores[batch] == pytest.approx(scores[64], abs=0.05)


def test_piper_without_its_memory_arena_says_the_same() -> None:
    from voiced.config import TtsConfig
    from voiced.mouth.piper_tts import PiperSynthesizer

    said = [
        PiperSynthesizer(
            TtsConfig(noise_scale=0.0, noise_w_scale=0.0, memory_arena=arena), REPO / "models"
        ).synthesize("Turning on the kitchen light.")
        for arena in (True, False)
    ]
    assert len(said[0]) > 10000 and np.array_equal(said[0], said[1])
