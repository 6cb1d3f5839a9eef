#!/usr/bin/env bash
# Latency and memory benchmark of the whole loop; prints figures, asserts nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
exec .venv/bin/python bench/latency.py "$@"
