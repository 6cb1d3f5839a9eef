"""Prints config FILE's settings pointed at the demo's private broker, with the demo's own state.

Usage: demo_config.py CONFIG PORT STATE_FILE. Paths in the result are absolute, so it works from
anywhere; the broker's credentials and TLS are dropped (the demo broker is a plain local one).
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml


def main(source: str, port: str, state_file: str) -> None:
    path = Path(source).resolve()
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    base = path.parent
    for key, default in (("devices_dir", "devices"), ("models_dir", "models")):
        data[key] = str((base / str(data.get(key) or default)).resolve())
    data["mqtt"] = {**(data.get("mqtt") or {}), "host": "127.0.0.1", "port": int(port)}
    data["mqtt"].pop("username", None)
    data["mqtt"].pop("tls", None)
    data["brain"] = {**(data.get("brain") or {}), "state_file": str(Path(state_file).resolve())}
    yaml.safe_dump(data, sys.stdout, sort_keys=False)


if __name__ == "__main__":
    main(*sys.argv[1:4])
