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
if [ $# -gt 0 ]; then
  exec $PY/pytest -q -ra --durations=15 "$@"
fi
# Two workers, a file each at a time: most end-to-end tests wait on audio played in real time.
# The barge-in trials run alone afterwards: they load both cores with stress-ng on purpose.
$PY/pytest -q -ra --durations=15 -n 2 --dist loadfile --ignore=tests/test_e2e_bargein.py
$PY/pytest -q -ra --durations=5 tests/test_e2e_bargein.py
