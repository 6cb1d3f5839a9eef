"""Real Wyoming satellites for the tests: `wyoming-satellite` (PyPI, in .venv-satellite, made by
scripts/setup.sh) on a free loopback port, its microphone a program that says what the test puts in
its inbox (tests/satellite_mic.py), its speaker a command that writes each reply to a file."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from tests.conftest import REPO, free_port, wait_for_port
from voiced.audio.pcm import EAR_RATE

SATELLITE_VENV = Path(os.environ.get("VOICED_SATELLITE_VENV", REPO / ".venv-satellite"))
SND_RATE = 22050  # the satellite's speaker (its --snd-command-rate)
UP_WITHIN_S = 20.0


class Satellite:
    """One wyoming-satellite process; `start` again after `kill` to bring it back on the same port."""

    def __init__(
        self,
        workdir: Path,
        name: str,
        port: int | None = None,
        *,
        timed: bool = False,
        mic_chunk: int = 0,
        echo_gain: float = 0.0,
        options: tuple[str, ...] = (),
    ) -> None:
        """`timed` (the benchmark): the microphone logs when each request ended (`said.log`), the
        speaker when each reply's first audio arrived (`reply-*.first`, wall clock, beside the .raw).
        `mic_chunk`: the satellite's --mic-command-samples-per-chunk (0: its default, 1024).
        `echo_gain`: the microphone hears what the speaker plays, times this (0: not at all); the
        speaker then plays at 16 kHz. `options`: more of wyoming-satellite's own (its --wake-uri)."""
        self.name = name
        self.timed = timed
        self.mic_chunk = mic_chunk
        self.echo_gain = echo_gain
        self.options = options
        self.port = port or free_port()
        self.folder = workdir / name
        self.inbox = self.folder / "inbox"
        self.replies = self.folder / "replies"
        self.inbox.mkdir(parents=True, exist_ok=True)
        self.replies.mkdir(exist_ok=True)
        self._proc: subprocess.Popen[bytes] | None = None
        self._said = 0

    @property
    def said_log(self) -> Path:
        return self.folder / "said.log"

    @property
    def uri(self) -> str:
        return f"tcp://127.0.0.1:{self.port}"

    def start(self) -> None:
        python = SATELLITE_VENV / "bin" / "python"
        if not python.exists():
            raise RuntimeError(f"{python} is missing: run scripts/setup.sh (it installs wyoming-satellite)")
        mic = f"{sys.executable} {REPO / 'tests' / 'satellite_mic.py'} {self.inbox}"
        # each reply is one run of the command (the satellite ends it at audio-stop): one file each
        snd = f"sh -c 'cat > {self.replies}/reply-$(date +%s%N).raw'"
        if self.timed or self.mic_chunk or self.echo_gain:
            mic += f" {self.said_log if self.timed else '-'} {self.mic_chunk}"
        if self.echo_gain:
            echo = self.folder / "echo.raw"  # all it played, one reply after another
            mic += f" {echo} {self.echo_gain}"
            snd = f"sh -c 'tee -a {echo} > {self.replies}/reply-$(date +%s%N).raw'"
        if self.timed:
            # dd takes the first two bytes as they come (a read of its own), then the time is noted
            first = f"f={self.replies}/reply-$(date +%s%N); dd bs=2 count=1 status=none > $f.part"
            snd = f"sh -c '{first}; date +%s.%N > $f.first; cat >> $f.part; mv $f.part $f.raw'"
        log = (self.folder / "satellite.log").open("ab")
        self._proc = subprocess.Popen(
            [
                str(python),
                "-m",
                "wyoming_satellite",
                "--uri",
                self.uri,
                "--name",
                self.name,
                "--no-zeroconf",  # no multicast beyond loopback
                "--mic-command",
                mic,
                "--snd-command",
                snd,
                "--snd-command-rate",
                str(EAR_RATE if self.echo_gain else SND_RATE),
                "--debug",
                *(["--mic-command-samples-per-chunk", str(self.mic_chunk)] if self.mic_chunk else []),
                *self.options,
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its group: the microphone and speaker commands go with it
        )
        wait_for_port(self.port, UP_WITHIN_S)

    def kill(self) -> None:
        """SIGKILL to the satellite and its commands: gone without a word, as a box that loses power."""
        if self._proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._proc.pid, signal.SIGKILL)
            self._proc.wait(timeout=10)
            self._proc = None

    def stop(self) -> None:
        if self._proc is not None:
            try:
                os.killpg(self._proc.pid, signal.SIGTERM)
                self._proc.wait(timeout=10)
            except ProcessLookupError:
                pass
            except subprocess.TimeoutExpired:
                self.kill()
            self._proc = None

    def say(self, samples: np.ndarray) -> None:
        """Speak into the satellite's microphone: 16 kHz mono int16 samples."""
        assert samples.dtype == np.int16
        self._said += 1
        staged = self.inbox / f"said-{self._said:03d}.tmp"
        staged.write_bytes(samples.tobytes())
        staged.rename(staged.with_suffix(".raw"))  # whole, or not at all

    def reply_files(self) -> list[Path]:
        return sorted(self.replies.glob("reply-*.raw"))

    def wait_reply(self, count: int, timeout_s: float) -> list[np.ndarray]:
        """The first `count` replies played on this satellite's speaker, once each is complete."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            files = self.reply_files()
            if len(files) >= count and self._settled(files[:count]):
                return [np.frombuffer(f.read_bytes(), dtype=np.int16) for f in files[:count]]
            time.sleep(0.1)
        raise TimeoutError(f"{self.name}: {len(self.reply_files())} replies after {timeout_s} s, not {count}")

    @staticmethod
    def _settled(files: list[Path]) -> bool:
        """Written and closed: a file that has not grown for a moment (the command ended)."""
        sizes = [f.stat().st_size for f in files]
        time.sleep(0.3)
        return all(size > 0 for size in sizes) and sizes == [f.stat().st_size for f in files]


def at_ear_rate(samples: np.ndarray, rate: int = SND_RATE) -> np.ndarray:
    from voiced.audio.pcm import resample_band_limited

    return resample_band_limited(samples, rate, EAR_RATE)
