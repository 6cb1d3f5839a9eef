#!/usr/bin/env bash
# The main job: install what is missing, make sure a broker runs, start the device simulator,
# then run the daemon on the microphone, or the scripted spoken demo where there is none.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/broker.sh 1883
VOICED=.venv/bin/voiced
$VOICED check-config config.yaml

mkdir -p out
$VOICED simulate >out/simulator.log 2>&1 &
sim=$!
trap 'kill $sim 2>/dev/null; wait $sim 2>/dev/null || true' EXIT
sleep 1
echo "start: device simulator running (its log: out/simulator.log)"

if $VOICED check-audio >/dev/null 2>&1; then
  echo "start: microphone found; say \"turn on the kitchen light\" (Ctrl-C to stop)"
  $VOICED run "$@"
else
  echo "start: no microphone here; running the scripted spoken demo instead"
  $VOICED demo --output out/demo-replies.wav "$@"
fi
echo "start: the devices now report:"
$VOICED devices
