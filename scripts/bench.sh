#!/usr/bin/env bash
# Benchmarks; they print figures and assert nothing.
#   scripts/bench.sh [latency] [--turns N] [--llm]          end of speech -> first reply audio
#   scripts/bench.sh bargein [--trials N] [--echo-minutes M] barge-in latency, false barge-ins
#   scripts/bench.sh vibe [--trials N] [--device-delay-ms MS] scene latency, acknowledgement while it runs
#   scripts/bench.sh brain [--turns N] [--llm-delay-ms MS]  brain run time, barrier waits (offline, scripted LLM)
#   scripts/bench.sh understanding [--corpus ha|ours|all] [--verbose] [--json FILE]
#                                                           sentences -> exact MQTT effects (HA's and ours)
#   scripts/bench.sh understanding-spoken [--conditions piper*,espeak-us] [--sentences N] [--beam 1,5] [--json FILE]
#                                                           the same sentences spoken by several voices into the daemon
#   scripts/bench.sh reliability [--seed N] [--cases N] [--family config|payloads|llm|lifecycle|tasks|...]
#                                                           hostile input: tracebacks, crashes, forbidden publishes, ...
#   scripts/bench.sh discovery [--trials N] [--device-delay-ms MS]
#                                                           discovery config -> usable by voice; colour confirmed from xy
#   scripts/bench.sh web [--rates 50,100,...] [--stall-s S] [--idle-s S]
#                                                           SSE events/s to 5 clients, idle CPU web on/off, memory, first paint
#   scripts/bench.sh wake [--word okay_nabu] [--tries 50] [--minutes 30]
#                                                           wake word: detections over spoken tries, false wakes over other speech
#   scripts/bench.sh soak [--turns 10000] [--every 1000]   typed turns through one daemon: RSS and file sizes
#   scripts/bench.sh plans [--trials N] [--steps N] [--before PYTHON]
#                                                           read-back latency, engine overhead per step, restart -> resumed step, RSS
#   scripts/bench.sh satellites [--rooms 1,2,3] [--slots N] [--together N] [--seed N]
#                                                           wyoming-satellites: end of speech -> reply at the satellite, lost/wrong room, RSS
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
which="latency"
case "${1:-}" in latency|bargein|vibe|brain|understanding|understanding-spoken|reliability|web|wake|plans|discovery|soak|satellites) which=${1//-/_}; shift ;; esac
exec .venv/bin/python "bench/$which.py" "$@"
