#!/usr/bin/env bash
# The main job: install what is missing, then either
#   scripts/start.sh [OPTIONS]               the demo home: a private Mosquitto on a free port, the
#                                            device simulator on it, its own state file in out/;
#   scripts/start.sh --config FILE [OPTIONS] your home: FILE's broker, devices and state, as they are;
#                                            no broker is started and nothing is simulated.
# Then the daemon runs on the microphone, or the scripted spoken demo where there is none.
# The home's broker is never touched unless FILE points at it, and never simulated on.
set -euo pipefail
home_config=""
if [[ ${1:-} == --config || ${1:-} == -c ]]; then
  # from where the script was started, before it moves to the checkout
  home_config=$(realpath -m -- "${2:?"start: --config needs a file"}")
  shift 2
fi
cd "$(dirname "$0")/.."
scripts/setup.sh
VOICED=.venv/bin/voiced
mkdir -p out

if [[ -n $home_config ]]; then
  $VOICED check-config "$home_config"
  config=$home_config
  echo "start: your home: $home_config (its broker, its devices, its state; nothing simulated)"
else
  $VOICED check-config config.yaml
  port=$(.venv/bin/python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  # The demo home's broker: ours alone, gone when we stop.
  broker_conf=out/demo-mosquitto.conf
  printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence false\nset_tcp_nodelay true\n' \
    "$port" >"$broker_conf"
  mosquitto -c "$broker_conf" >out/demo-mosquitto.log 2>&1 &
  broker=$!
  sim=""
  cleanup() {
    [[ -n $sim ]] && { kill "$sim" 2>/dev/null; wait "$sim" 2>/dev/null || true; }
    kill "$broker" 2>/dev/null; wait "$broker" 2>/dev/null || true
  }
  trap cleanup EXIT
  for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null \
    || { echo "start: the demo broker did not start (out/demo-mosquitto.log)" >&2; exit 1; }
  # config.yaml's settings, pointed at the demo broker with the demo's own state file.
  config=out/demo-config.yaml
  .venv/bin/python scripts/demo_config.py config.yaml "$port" out/demo-state.sqlite >"$config"
  echo "start: demo home on a private broker at 127.0.0.1:$port (state: out/demo-state.sqlite)"
  $VOICED -c "$config" simulate >out/simulator.log 2>&1 &
  sim=$!
  for _ in $(seq 100); do grep -q "simulator: playing" out/simulator.log && break; sleep 0.1; done
  echo "start: device simulator running (its log: out/simulator.log)"
fi

if $VOICED -c "$config" check-audio >/dev/null 2>&1; then
  if [[ -n $home_config ]]; then say="ask for one of your devices"; else say="say \"turn on the kitchen light\""; fi
  echo "start: microphone found; $say (Ctrl-C to stop)"
  $VOICED -c "$config" run "$@" || true
else
  echo "start: no microphone here; running the scripted spoken demo instead"
  $VOICED -c "$config" demo --output out/demo-replies.wav "$@"
fi
echo "start: the devices now report:"
$VOICED -c "$config" devices
