"""A private PulseAudio server with two null sinks: a virtual microphone and a virtual speaker.

Clients reach it only through the env() it returns (PULSE_SERVER=unix:<socket>), so no other
pulse server on the machine is used or touched.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

MIC_SINK = "voiced_mic"  # what is played here, the daemon hears on voiced_mic.monitor
SPEAKER_SINK = "voiced_speaker"  # what the daemon says, we record from voiced_speaker.monitor


class PulseServer:
    def __init__(self, workdir: Path, *, echo_ms: int | None = None) -> None:
        """`echo_ms`: also loop the virtual speaker back into the virtual microphone, this late."""
        self.echo_ms = echo_ms
        self.workdir = workdir
        self.runtime = workdir / "pulse"
        self.socket = self.runtime / "native"
        self.log = workdir / "pulseaudio.log"
        self._proc: subprocess.Popen[bytes] | None = None

    def env(self) -> dict[str, str]:
        """The environment for any pulse client (or ALSA's pulse plugin) meant for this server."""
        env = dict(os.environ)
        env.update(
            PULSE_SERVER=f"unix:{self.socket}",
            PULSE_RUNTIME_PATH=str(self.runtime),
            PULSE_STATE_PATH=str(self.workdir / "pulse-state"),
            XDG_RUNTIME_DIR=str(self.workdir),
            HOME=str(self.workdir),
        )
        env.pop("PULSE_COOKIE", None)
        return env

    def start(self, timeout: float = 20.0) -> None:
        binary = shutil.which("pulseaudio")
        if binary is None or shutil.which("pactl") is None:
            raise RuntimeError(
                "pulseaudio / pactl not found: install the Debian packages pulseaudio and "
                "pulseaudio-utils (scripts/setup.sh does)"
            )
        self.runtime.mkdir(parents=True, exist_ok=True)
        script = self.workdir / "voiced-test.pa"
        script.write_text(
            f"load-module module-native-protocol-unix auth-anonymous=1 socket={self.socket}\n"
            f"load-module module-null-sink sink_name={MIC_SINK}\n"
            f"load-module module-null-sink sink_name={SPEAKER_SINK}\n"
            f"set-default-sink {SPEAKER_SINK}\n"
            f"set-default-source {MIC_SINK}.monitor\n"
        )
        if self.echo_ms is not None:
            # A real echo path: everything the daemon says comes back into its microphone. Both
            # null sinks run on one clock, so the loopback's rate is never adjusted (adjust_time=0):
            # left on, it hunts around its target latency and the echo delay wanders by tens of
            # samples a second, which no room does.
            with script.open("a") as out:
                out.write(
                    f"load-module module-loopback source={SPEAKER_SINK}.monitor sink={MIC_SINK} "
                    f"latency_msec={self.echo_ms} adjust_time=0 source_dont_move=true sink_dont_move=true\n"
                )
        # -n: no default.pa, so no hardware, no X11/D-Bus modules. Running as root only warns.
        args = [binary, "--daemonize=no", "-n", "--exit-idle-time=-1", "--disallow-exit"]
        args += ["--log-target=stderr", "--use-pid-file=no", "-F", str(script)]
        self._proc = subprocess.Popen(
            args, env=self.env(), stdout=subprocess.DEVNULL, stderr=self.log.open("ab"), cwd=self.workdir
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"pulseaudio exited with {self._proc.returncode}: {self.log.read_text()}")
            if self.socket.exists() and self.pactl("info", check=False).returncode == 0:
                return
            time.sleep(0.1)
        self.stop()
        raise TimeoutError(f"private pulseaudio not answering after {timeout} s: {self.log.read_text()}")

    def pactl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["pactl", *args], env=self.env(), capture_output=True, text=True, timeout=10, check=check
        )

    def source_outputs_of(self, source: str) -> int:
        """How many streams are recording from the named source right now."""
        sources = self.pactl("list", "short", "sources").stdout.splitlines()
        index = next((line.split("\t")[0] for line in sources if line.split("\t")[1] == source), None)
        outputs = self.pactl("list", "short", "source-outputs").stdout.splitlines()
        return sum(1 for line in outputs if line.split("\t")[1] == index)

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(timeout=10)
            self._proc = None
