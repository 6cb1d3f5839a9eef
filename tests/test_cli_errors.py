"""Missing audio devices and unreadable input files: exit status 3 and a message naming them."""

from __future__ import annotations

import os
import subprocess
import sys
import wave
from pathlib import Path

from tests.conftest import REPO, free_port
from voiced.audio.pcm import read_wav, silence, write_wav


def voiced(
    tmp_path: Path, config_text: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "config.yaml"
    web_off = "" if "web:" in config_text else "web:\n  port: 0\n"  # tests run side by side
    config.write_text(f"devices_dir: {REPO / 'devices'}\n{web_off}{config_text}")
    return subprocess.run(
        [sys.executable, "-m", "voiced", "-c", str(config), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def test_missing_microphone_exits_3_naming_the_device(tmp_path: Path) -> None:
    result = voiced(tmp_path, "audio:\n  input_device: no-such-mic\n", "run")
    assert result.returncode == 3
    assert "no-such-mic" in result.stderr and "microphone" in result.stderr
    assert "audio.input_device" in result.stderr and "--input FILE.wav or --text FILE" in result.stderr


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


def test_missing_second_model_is_named_by_check_config(tmp_path: Path) -> None:
    result = voiced(tmp_path, "asr:\n  second_model: large-v9\n", "check-config")
    assert result.returncode == 2
    assert "asr.second_model" in result.stderr and "large-v9" in result.stderr
    assert "'base'" in result.stderr  # what it could be instead


def test_output_in_a_missing_folder_exits_3_before_anything_runs(tmp_path: Path) -> None:
    wav = tmp_path / "in.wav"
    write_wav(wav, silence(1.0, 16000), 16000)
    result = voiced(tmp_path, "", "run", "--input", str(wav), "--output", str(tmp_path / "no" / "out.wav"))
    assert result.returncode == 3
    assert "folder" in result.stderr and "does not exist" in result.stderr
    assert "loading models" not in result.stderr


def test_eight_bit_wav_is_refused_with_the_reason(tmp_path: Path) -> None:
    wav = tmp_path / "old.wav"
    with wave.open(str(wav), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(1)
        out.setframerate(8000)
        out.writeframes(bytes(8000))
    result = voiced(tmp_path, "", "run", "--input", str(wav), "--output", str(tmp_path / "o.wav"))
    assert result.returncode == 3
    assert "expected 16-bit PCM, got 8-bit" in result.stderr


def test_silence_says_no_speech_heard_and_still_writes_the_output(tmp_path: Path) -> None:
    wav = tmp_path / "quiet.wav"
    write_wav(wav, silence(2.0, 16000), 16000)
    out = tmp_path / "replies.wav"
    port = free_port()
    result = voiced(
        tmp_path, f"mqtt:\n  port: {port}\n", "run", "--input", str(wav), "--output", str(out), "--fast"
    )
    assert result.returncode == 0, result.stderr
    assert f"no speech heard in {wav}" in result.stdout
    assert f"spoken replies written to {out} (0.0 s)" in result.stdout
    assert read_wav(out)[0].size == 0


def test_devices_with_no_broker_exits_1_saying_where_it_looked_and_what_to_check(tmp_path: Path) -> None:
    port = free_port()  # nothing listens there
    result = voiced(tmp_path, f"mqtt:\n  port: {port}\n  connect_timeout_s: 1\n", "devices")
    assert result.returncode == 1, result.stderr
    assert f"MQTT broker 127.0.0.1:{port} not reachable" in result.stderr, result.stderr
    assert "mqtt.host and mqtt.port in the config" in result.stderr, result.stderr
