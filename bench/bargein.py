"""Barge-in benchmark through a real echo path (PulseAudio null sinks + loopback).

1. `--trials` times: the daemon reads a long reply; another voice says a request over it.
   Prints speech onset -> barge-in decision and -> playback silent (decision + the output
   device's buffer), p50 and p95.
2. `--echo-minutes` of the daemon's own long replies with their echo in the microphone and
   nobody talking: prints the number of false barge-ins (target 0) and how often the echo
   was even noticed (ducked) versus dropped at once as echo.

Run: scripts/bench.sh bargein [--trials 20] [--echo-minutes 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.conftest import Broker  # noqa: E402
from tests.live import LiveDaemon, spoken_request  # noqa: E402
from tests.openai_server import ScriptedServer, Text  # noqa: E402
from tests.pulse import PulseServer  # noqa: E402
from tests.test_e2e_bargein import ECHO_MS, LONG_REPLY  # noqa: E402
from voiced.audio.sinks import OUTPUT_LATENCY_S  # noqa: E402
from voiced.mouth.speech import DUCK_GAIN  # noqa: E402


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def long_reply(daemon: LiveDaemon, llm: ScriptedServer, work: Path, index: int) -> int:
    llm.push(Text(LONG_REPLY, token_delay_s=0.01))
    before = len(daemon.events())
    daemon.play(spoken_request(work / f"ask{index}.wav", "What is the weather like today?"))
    started = daemon.wait_for("tts_started", lambda e: daemon.events().index(e) >= before, timeout=60)
    return int(started["turn"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--echo-minutes", type=float, default=5.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="voiced-bargein-") as tmp:
        work = Path(tmp)
        pulse, broker, llm = PulseServer(work, echo_ms=ECHO_MS), Broker(work), ScriptedServer()
        pulse.start()
        broker.start()
        llm.start()
        config = {
            "mqtt": {"port": broker.port},
            "llm": {"base_url": llm.base_url},
            "agent": {"kind": "llm"},  # every turn asks the LLM, so the script stays in step
        }
        daemon = LiveDaemon(work, pulse, config, log_level="WARNING")
        try:
            daemon.start()
            decisions = []
            interjection = spoken_request(work / "over.wav", "Please turn on the kitchen light.", pitch=1.15)
            for trial in range(args.trials):
                turn = long_reply(daemon, llm, work, trial)
                time.sleep(2.0)
                llm.push(Text("Okay, done."))  # the answer to the interjection
                said_at = daemon.play(interjection)
                barge = daemon.wait_for(
                    "barge_in", lambda e, t=turn, s=said_at: e["turn"] == t and e["t"] > s, timeout=20
                )
                decisions.append(barge["t"] - said_at)
                daemon.wait_for("turn_finished", lambda e, t=turn: e["turn"] == t)
                daemon.wait_for("transcript", lambda e, b=barge: e["t"] > b["t"], timeout=30)
                time.sleep(4.0)  # let the reply to the interjection finish
                print(
                    f"  trial {trial + 1}: barge-in decided {decisions[-1]:.2f} s after the voice began",
                    flush=True,
                )
            mark = len(daemon.events())
            deadline = time.monotonic() + args.echo_minutes * 60
            replies = 0
            while time.monotonic() < deadline:
                turn = long_reply(daemon, llm, work, 1000 + replies)
                daemon.wait_for("turn_finished", lambda e, t=turn: e["turn"] == t, timeout=120)
                replies += 1
            echo_events = daemon.events()[mark:]
        finally:
            daemon.stop()
            llm.stop()
            broker.stop()
            pulse.stop()
    played = sum(e["audio_s"] for e in echo_events if e["kind"] == "tts_stopped")
    false_barge_ins = sum(1 for e in echo_events if e["kind"] == "barge_in")
    onsets = sum(1 for e in echo_events if e["kind"] == "speech_started" and e["over_reply"] is True)
    dropped = sum(1 for e in echo_events if e["kind"] == "barge_in_ignored" and e["heard"] == "")
    silent = [d + OUTPUT_LATENCY_S for d in decisions]
    print(
        f"\nbarge-in over {len(decisions)} trials (another voice over a long reply, echo path {ECHO_MS} ms):"
    )
    print(f"  onset -> decision        p50 {statistics.median(decisions):.2f} s, p95 {p95(decisions):.2f} s")
    print(f"  onset -> playback silent p50 {statistics.median(silent):.2f} s, p95 {p95(silent):.2f} s")
    print(f"  (the reply is ducked to {DUCK_GAIN:.0%} volume as soon as the voice is not our echo)")
    print(f"\nown echo: {played / 60:.1f} min of our speech in {replies} replies, echo in the microphone:")
    print(f"  false barge-ins: {false_barge_ins}")
    print(f"  echo bursts noticed: {onsets}, dropped at once as echo: {dropped}, ducked: {onsets - dropped}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
