"""systemd's notify protocol for real: a datagram socket of our own as NOTIFY_SOCKET, the real program."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, Broker
from tests.home import voiced
from tests.test_e2e_wav import write_config
from voiced.cli import load_all
from voiced.systemd import notify_settings


def test_settings_come_from_systemds_variables_and_ignore_a_watchdog_meant_for_another_process() -> None:
    settings = notify_settings({"NOTIFY_SOCKET": "/run/x", "WATCHDOG_USEC": "30000000"})
    assert settings.socket_path == "/run/x" and settings.watchdog_s == 30.0
    other = notify_settings({"NOTIFY_SOCKET": "/run/x", "WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"})
    assert other.watchdog_s is None
    assert notify_settings({}).socket_path is None
    assert notify_settings({"WATCHDOG_USEC": "junk"}).watchdog_s is None


def _messages(sock: socket.socket, until: str, timeout_s: float) -> list[str]:
    got: list[str] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        sock.settimeout(max(0.05, deadline - time.monotonic()))
        try:
            got.extend(sock.recv(4096).decode().splitlines())
        except TimeoutError:
            break
        if until in got:
            break
    return got


@pytest.mark.e2e
def test_the_daemon_says_ready_pings_the_watchdog_and_says_it_is_stopping(
    tmp_path: Path, broker: Broker
) -> None:
    config = write_config(tmp_path, broker.port)
    with config.open("a") as extra:
        extra.write(f"brain:\n  state_file: {tmp_path / 'state.sqlite'}\n")
    path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    # A ping every 0.2 s; JOURNAL_STREAM says stderr goes to the journal, which stamps each line.
    env = {**os.environ, "NOTIFY_SOCKET": path, "WATCHDOG_USEC": "400000", "JOURNAL_STREAM": "8:1234"}
    # Typed turns from a pipe kept open: the daemon runs until it is told to stop.
    run = voiced(config, "run", "--text", "-", "--output", str(tmp_path / "out.wav"), "--log-level", "info")
    daemon = subprocess.Popen(
        run, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True
    )
    try:
        before_ready = _messages(sock, "READY=1", timeout_s=120)
        assert "READY=1" in before_ready, before_ready
        assert before_ready.count("WATCHDOG=1") >= 1  # the pings start with the event loop
        pings = _messages(sock, "never", timeout_s=1.5).count("WATCHDOG=1")
        assert 4 <= pings <= 12, pings
        assert daemon.stdin is not None
        daemon.stdin.write("turn on the kitchen light\n")
        daemon.stdin.flush()
        during_turn = _messages(sock, "STATUS=idle", timeout_s=30)
        assert "STATUS=speaking" in during_turn and "STATUS=idle" in during_turn, during_turn
        daemon.send_signal(signal.SIGTERM)
        output, _ = daemon.communicate(timeout=30)
        assert daemon.returncode == 0, output[-3000:]
        assert "STOPPING=1" in _messages(sock, "STOPPING=1", timeout_s=5)
        assert "Traceback" not in output, output[-3000:]
        logged = [line for line in output.splitlines() if line.startswith(("INFO ", "WARNING "))]
        assert logged and not [line for line in output.splitlines() if line[:4].isdigit()], output[-3000:]
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.communicate(timeout=10)
        sock.close()


def test_the_unit_is_sandboxed_to_an_exposure_of_at_most_4() -> None:
    unit = REPO / "systemd" / "voiced.service"
    done = subprocess.run(
        ["systemd-analyze", "security", "--offline=yes", str(unit)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    match = re.search(r"Overall exposure level for voiced.service: ([0-9.]+)", done.stdout)
    assert match is not None, done.stdout[-2000:] + done.stderr[-2000:]
    assert float(match.group(1)) <= 4.0
    text = unit.read_text()
    assert "Type=notify" in text and "WatchdogSec=" in text and "StateDirectory=voiced" in text


def test_the_services_config_is_valid_and_keeps_the_state_in_the_state_directory(tmp_path: Path) -> None:
    text = (REPO / "systemd" / "config.yaml").read_text()
    assert "/var/lib/voiced/state.sqlite" in text
    # laid out as scripts/install-service.sh does: the devices beside the config (/etc/voiced/devices)
    local = tmp_path / "config.yaml"
    local.write_text(text.replace("/opt/voiced", str(REPO)).replace("/var/lib/voiced", str(tmp_path)))
    shutil.copytree(REPO / "devices", tmp_path / "devices")
    config, registry = load_all(local, {})
    assert config.brain.state_file == tmp_path / "state.sqlite" and len(registry) == 5
    assert config.devices_dir == tmp_path / "devices"
