#!/usr/bin/env bash
# Starts a local Mosquitto on 127.0.0.1:${1:-1883} unless a broker already answers there.
set -euo pipefail
port=${1:-1883}
if timeout 3 mosquitto_sub -h 127.0.0.1 -p "$port" -t '$SYS/broker/version' -C 1 -W 2 >/dev/null 2>&1 \
   || (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
  echo "broker: an MQTT broker already answers on 127.0.0.1:$port"
  exit 0
fi
conf=$(mktemp /tmp/voiced-mosquitto.XXXXXX.conf)
# set_tcp_nodelay: a device state would otherwise wait ~40 ms (Nagle) on its way to voiced.
printf 'listener %s 127.0.0.1\nallow_anonymous true\nset_tcp_nodelay true\n' "$port" >"$conf"
mosquitto -d -c "$conf"
for _ in $(seq 50); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && { echo "broker: started Mosquitto on 127.0.0.1:$port"; exit 0; }
  sleep 0.1
done
echo "broker: Mosquitto did not start on 127.0.0.1:$port" >&2
exit 1
