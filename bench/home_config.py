"""The config a bench's own daemon runs with: this repo's devices and models, a private broker, and
every file it keeps (brain, plans, scenes) in the bench's own folder, never the user's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent


def write_home_config(folder: Path, broker_port: int, web_port: int, **sections: dict[str, Any]) -> Path:
    """`folder`/config.yaml; `sections` add to it (devices, homeassistant...)."""
    path = folder / "config.yaml"
    config: dict[str, Any] = {
        "devices_dir": str(REPO / "devices"),
        "models_dir": str(REPO / "models"),
        "mqtt": {"host": "127.0.0.1", "port": broker_port},
        "web": {"host": "127.0.0.1", "port": web_port},
        "brain": {"state_file": str(folder / "state.sqlite")},
        "plans": {"checkpoint_file": str(folder / "plans.sqlite")},
        "vibe": {"checkpoint_file": str(folder / "scenes.sqlite")},
        **sections,
    }
    path.write_text(yaml.safe_dump(config))
    return path
