#!/usr/bin/env bash
# The whole test suite, installing what it needs first. Tests start their own Mosquitto
# and PulseAudio; nothing is downloaded at run time beyond the pip/apt installs of setup.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
PY=.venv/bin
echo "== ruff"
$PY/ruff check voiced tests bench
$PY/ruff format --check voiced tests bench
echo "== mypy"
$PY/mypy voiced
echo "== pytest"
$PY/pytest -q -ra --durations=15 "$@"
