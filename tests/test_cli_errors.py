"""Missing audio devices and unreadable input files: exit status 3 and a message naming them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO


def voiced(tmp_path: Path, config_text: str, *args: str) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "config.yaml"
    config.write_text(f"devices_dir: {REPO / 'devices'}\n{config_text}")
    return subprocess.run(
        [sys.executable, "-m", "voiced", "-c", str(config), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_missing_microphone_exits_3_naming_the_device(tmp_path: Path) -> None:
    result = voiced(tmp_path, "audio:\n  input_device: no-such-mic\n", "run")
    assert result.returncode == 3
    assert "no-such-mic" in result.stderr and "microphone" in result.stderr


def test_missing_input_file_exits_3_naming_the_file(tmp_path: Path) -> None:
    result = voiced(tmp_path, "", "run", "--input", str(tmp_path / "nothing.wav"))
    assert result.returncode == 3
    assert "nothing.wav: audio file not found" in result.stderr


def test_input_that_is_not_a_wav_exits_3(tmp_path: Path) -> None:
    bogus = tmp_path / "notes.wav"
    bogus.write_text("these are not samples")
    result = voiced(tmp_path, "", "run", "--input", str(bogus))
    assert result.returncode == 3
    assert "notes.wav: not a readable WAV file" in result.stderr


def test_missing_model_exits_2_naming_the_field(tmp_path: Path) -> None:
    result = voiced(tmp_path, "asr:\n  model: huge-v9\n", "demo", "--fast")
    assert result.returncode == 2
    assert "asr.model" in result.stderr and "huge-v9" in result.stderr
