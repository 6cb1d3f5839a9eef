"""Rehearsed replies outlive a restart (tts.rehearsal_file), for the voice that said them only."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from voiced.config import load_config
from voiced.devices.registry import DeviceRegistry
from voiced.engines import load_engines
from voiced.mouth.rehearsal_file import RehearsalFile
from voiced.mouth.speech import Rehearsed

REPO = Path(__file__).resolve().parent.parent
SENTENCE = "Turning on the kitchen light."


def marker(_sentence: str) -> np.ndarray:
    return (np.sin(np.arange(4000) / 7.0) * 3000).astype(np.int16)


def refused(sentence: str) -> np.ndarray:
    raise AssertionError(f"synthesized {sentence!r} again")


def test_a_reply_kept_by_one_run_is_played_by_the_next_without_synthesis(tmp_path: Path) -> None:
    path = tmp_path / "voiced-rehearsed.sqlite"
    first = Rehearsed(RehearsalFile(path, "joe 1"))
    assert first.restore() == 0
    assert first.keep(SENTENCE, marker)
    first.close()

    again = Rehearsed(RehearsalFile(path, "joe 1"))
    assert again.restore() == 1
    kept = again.get(SENTENCE)
    assert kept is not None and np.array_equal(kept, marker(SENTENCE))
    assert not again.keep(SENTENCE, refused)
    again.close()


def test_another_voice_never_plays_them_and_they_are_deleted(tmp_path: Path) -> None:
    path = tmp_path / "voiced-rehearsed.sqlite"
    first = Rehearsed(RehearsalFile(path, "joe 1"))
    first.restore()
    first.keep(SENTENCE, marker)
    first.close()

    other = Rehearsed(RehearsalFile(path, "joe slower"))
    assert other.restore() == 0 and other.get(SENTENCE) is None
    other.close()
    back = Rehearsed(RehearsalFile(path, "joe 1"))
    assert back.restore() == 0  # deleted when the other voice opened the file
    back.close()


def test_a_damaged_file_is_moved_aside_and_rehearsing_starts_afresh(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "voiced-rehearsed.sqlite"
    path.write_bytes(b"not a database " * 500)
    rehearsed = Rehearsed(RehearsalFile(path, "joe 1"))
    with caplog.at_level(logging.ERROR):
        assert rehearsed.restore() == 0
    aside = list(tmp_path.glob("voiced-rehearsed.sqlite.damaged-*"))
    assert len(aside) == 1 and aside[0].read_bytes().startswith(b"not a database")
    assert any(
        "rehearsed replies" in r.getMessage() and "moved it aside" in r.getMessage() for r in caplog.records
    )
    assert rehearsed.keep(SENTENCE, marker)
    rehearsed.close()
    assert Rehearsed(RehearsalFile(path, "joe 1")).restore() == 1


def test_the_daemon_s_engines_keep_replies_beside_the_state_file(tmp_path: Path) -> None:
    """Real piper, the real config: a second start has the reply the first rehearsed; another pace
    is another voice."""
    config_file = tmp_path / "config.yaml"
    config_file.write_text(f"devices_dir: {REPO / 'devices'}\nmodels_dir: {REPO / 'models'}\n")
    config = load_config(config_file, {})
    assert config.tts.rehearsal_file == tmp_path / "voiced-rehearsed.sqlite"
    registry = DeviceRegistry.load(config.devices_dir)

    engines = load_engines(config, registry, whisper=False)
    assert engines.rehearsed.keep(SENTENCE, engines.synthesizer.synthesize)
    heard = engines.rehearsed.get(SENTENCE)
    engines.rehearsed.close()

    restarted = load_engines(config, registry, whisper=False)
    kept = restarted.rehearsed.get(SENTENCE)
    assert heard is not None and kept is not None and np.array_equal(kept, heard)
    restarted.rehearsed.close()

    config_file.write_text(config_file.read_text() + "tts:\n  length_scale: 1.2\n")
    slower = load_engines(load_config(config_file, {}), registry, whisper=False)
    assert slower.rehearsed.get(SENTENCE) is None
    slower.rehearsed.close()
