"""`voiced simulate` + `voiced demo` + `voiced devices`: the server path of the README's main command."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, Broker
from voiced.audio.pcm import read_wav, rms_dbfs

pytestmark = pytest.mark.e2e


def voiced(config: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "voiced", "-c", str(config), *args]


def test_demo_drives_the_simulated_home_and_speaks(tmp_path: Path, broker: Broker) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(f"devices_dir: {REPO / 'devices'}\nweb:\n  port: 0\nmqtt:\n  port: {broker.port}\n")
    simulator = subprocess.Popen(
        voiced(config, "simulate"), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        time.sleep(1.0)
        demo = subprocess.run(
            voiced(config, "demo", "--fast", "--output", str(tmp_path / "replies.wav")),
            capture_output=True,
            text=True,
            timeout=300,
        )
        devices = subprocess.run(voiced(config, "devices"), capture_output=True, text=True, timeout=60)
    finally:
        simulator.send_signal(signal.SIGTERM)
        sim_out, _ = simulator.communicate(timeout=10)
    assert demo.returncode == 0, demo.stderr[-3000:]
    # The demo's talk is not the user's conversation: no state file next to the config.
    assert not (tmp_path / "voiced-state.sqlite").exists()
    out = demo.stdout
    for line in (
        # Whisper may or may not end the sentence with a full stop.
        "you said: Turn on the kitchen light",
        "voiced: Turning on the kitchen light.",
        'device kitchen_light: {"state":"ON"',
        '-> voiced/music/set {"action":"play","genre":"jazz"}',
        "voiced: Sorry, I didn't catch that.",
        'device music: {"state":"stopped"',
        "spoken replies written to",
    ):
        assert line in out, out
    samples, rate = read_wav(tmp_path / "replies.wav")
    assert len(samples) / rate > 5 and rms_dbfs(samples) > -40
    assert simulator.returncode == 0, sim_out
    assert devices.returncode == 0, devices.stderr
    # After "good night" every light is off and the music stopped, as the simulator reports.
    rows = {line.split()[0]: line for line in devices.stdout.splitlines()}
    assert '"state":"OFF"' in rows["kitchen_light"]
    assert '"state":"stopped"' in rows["music"]
