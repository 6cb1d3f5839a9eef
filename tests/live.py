"""A `voiced run` process on real (virtual) audio devices, driven and observed by a test."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from tests.conftest import REPO
from tests.pulse import MIC_SINK, SPEAKER_SINK, PulseServer
from tests.speech_fixtures import synthesizer
from voiced.audio.pcm import silence, write_wav

Event = dict[str, Any]


def spoken_request(path: Path, text: str, *, pitch: float = 1.0, lead_s: float = 0.0) -> Path:
    """`text` in the test voice; pitch > 1 makes it another, higher voice than the daemon's."""
    tts = synthesizer()
    rate = tts.sample_rate
    audio = np.concatenate([silence(lead_s, rate), tts.synthesize(text), silence(0.3, rate)])
    write_wav(path, audio, int(rate * pitch))
    return path


def spawn_collecting(command: list[str], output: list[str], **popen: Any) -> subprocess.Popen[str]:
    """Start `command` with its stdout and stderr gathered, line by line, into `output`."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **popen)
    stream = proc.stdout
    assert stream is not None
    threading.Thread(target=lambda: output.extend(stream), daemon=True).start()
    return proc


class LiveDaemon:
    def __init__(
        self, workdir: Path, pulse: PulseServer, config: dict[str, Any], *, log_level: str = "WARNING"
    ) -> None:
        self.log_level = log_level
        self.workdir = workdir
        self.pulse = pulse
        self.events_file = workdir / "events.jsonl"
        base = {
            "devices_dir": str(REPO / "devices"),
            "models_dir": str(REPO / "models"),
            "audio": {"input_device": "pulse", "output_device": "pulse"},
            "web": {"port": 0},  # tests run side by side: none takes the default port
        }
        for key, value in config.items():
            base[key] = {**base.get(key, {}), **value} if isinstance(value, dict) else value
        self.config_path = workdir / "config.yaml"
        self.config_path.write_text(yaml.safe_dump(base))
        self.output: list[str] = []
        self._events: list[Event] = []
        self._read_to = 0
        self._proc: subprocess.Popen[str] | None = None

    def start(self, timeout: float = 120) -> None:
        env = self.pulse.env()
        env.update(PULSE_SOURCE=f"{MIC_SINK}.monitor", PULSE_SINK=SPEAKER_SINK)
        command = [
            sys.executable,
            "-m",
            "voiced",
            "-c",
            str(self.config_path),
            "--log-level",
            self.log_level,
            "run",
        ]
        self._proc = spawn_collecting(
            [*command, "--events", str(self.events_file)], self.output, env=env, cwd=self.workdir
        )
        self.wait_for("ready", timeout=timeout)
        deadline = time.monotonic() + 15
        while self.pulse.source_outputs_of(f"{MIC_SINK}.monitor") == 0:
            if time.monotonic() > deadline:
                raise TimeoutError(f"daemon never opened the microphone\n{self.report()}")
            time.sleep(0.1)

    def events(self) -> list[Event]:
        """Every event so far (read incrementally: only new whole lines are parsed)."""
        if not self.events_file.exists():
            return list(self._events)
        with self.events_file.open("rb") as stream:
            stream.seek(self._read_to)
            data = stream.read()
        end = data.rfind(b"\n") + 1
        self._read_to += end
        self._events += [json.loads(line) for line in data[:end].splitlines() if line.endswith(b"}")]
        return list(self._events)

    def wait_for(
        self, kind: str, where: Callable[[Event], bool] = lambda _e: True, *, timeout: float = 30
    ) -> Event:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for event in self.events():
                if event["kind"] == kind and where(event):
                    return event
            if self._proc is not None and self._proc.poll() is not None:
                raise RuntimeError(f"daemon exited with {self._proc.returncode}\n{self.report()}")
            time.sleep(0.05)
        raise TimeoutError(f"no {kind} event within {timeout} s\n{self.report()}")

    def play(self, wav: Path) -> float:
        """Play into the virtual microphone; returns the monotonic time playback started."""
        started = time.monotonic()
        subprocess.Popen(
            ["paplay", f"--device={MIC_SINK}", str(wav)], env=self.pulse.env(), stderr=subprocess.DEVNULL
        )
        return started

    def report(self) -> str:
        kinds = [f"{e['t']:.2f} {e['kind']} {e.get('text', e.get('reason', ''))}" for e in self.events()]
        notable = [line for line in self.output if "DEBUG" not in line or "-> user" in line]
        return "daemon output:\n" + "".join(notable[-60:]) + "\nevents:\n" + "\n".join(kinds[-60:])

    def stop(self) -> int:
        if self._proc is None:
            return 0
        self._proc.send_signal(signal.SIGTERM)
        try:
            return self._proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(timeout=10)
            raise
        finally:
            self._proc = None
