"""Shared fixtures: a real Mosquitto broker on a free port, the repo's device registry."""

from __future__ import annotations

import logging
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.openai_server import ScriptedServer
from tests.pulse import PulseServer
from voiced.config import MqttConfig
from voiced.devices.registry import DeviceRegistry

REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listening on 127.0.0.1:{port} after {timeout} s")


class Broker:
    def __init__(
        self, workdir: Path, port: int | None = None, *, auth: str = "allow_anonymous true\n"
    ) -> None:
        """`auth`: mosquitto.conf lines for access (default: anyone may do anything)."""
        self.port = port or free_port()
        self._conf = workdir / "mosquitto.conf"
        self._conf.write_text(
            f"listener {self.port} 127.0.0.1\n{auth}persistence false\nset_tcp_nodelay true\n"
        )
        self._log = workdir / "mosquitto.log"
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        binary = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
        self._proc = subprocess.Popen(
            [binary, "-c", str(self._conf)], stdout=self._log.open("ab"), stderr=subprocess.STDOUT
        )
        wait_for_port(self.port)

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait(timeout=10)
            self._proc = None

    def kill(self) -> None:
        """SIGKILL: no goodbye to its clients, nothing flushed."""
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait(timeout=10)
            self._proc = None

    def mqtt_config(self, client_id: str = "voiced-test") -> MqttConfig:
        return MqttConfig(port=self.port, client_id=client_id, connect_timeout_s=5)


@pytest.fixture(autouse=True)
def _root_logging_as_it_was() -> Iterator[None]:
    """A test that runs `voiced.cli.main` in-process configures the root logger with a handler on
    pytest's captured stderr, which is closed after that test: later tests' warnings would fail to
    print ("I/O operation on closed file") and count as tracebacks. Put the root logger back."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    server = Broker(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def pulse(tmp_path: Path) -> Iterator[PulseServer]:
    """A private PulseAudio server: a virtual microphone and speaker (tests/pulse.py)."""
    server = PulseServer(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def registry() -> DeviceRegistry:
    return DeviceRegistry.load(REPO / "devices")


@pytest.fixture
def llm() -> Iterator[ScriptedServer]:
    """A scripted OpenAI-compatible server over real HTTP."""
    server = ScriptedServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()
