"""scripts/start.sh's demo home: the config it derives points only at its own broker and state."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import REPO


def test_the_demo_config_points_at_the_private_broker_and_its_own_state(tmp_path: Path) -> None:
    home = tmp_path / "config.yaml"
    home.write_text(
        "devices_dir: devices\nmqtt:\n  host: 192.168.1.10\n  port: 1883\n  username: home\n"
        "  tls:\n    enabled: true\nbrain:\n  state_file: my-state.sqlite\nllm:\n  model: mine\n"
    )
    derived = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "demo_config.py"),
            str(home),
            "50123",
            str(tmp_path / "demo.sqlite"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    config = yaml.safe_load(derived.stdout)
    assert config["mqtt"] == {"host": "127.0.0.1", "port": 50123}  # no home broker, no credentials
    assert config["brain"]["state_file"] == str(tmp_path / "demo.sqlite")
    assert config["devices_dir"] == str(tmp_path / "devices") and config["llm"] == {"model": "mine"}
    script = (REPO / "scripts" / "start.sh").read_text()
    # Only the demo home simulates, and only on the broker the script started.
    assert script.count(" simulate ") == 1 and "broker_conf" in script and "1883" not in script
