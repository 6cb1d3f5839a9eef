"""Barge-in benchmark through a real echo path (PulseAudio null sinks + loopback).

1. `--trials` times: the daemon reads a long reply; another voice makes a request over it.
   Prints how many trials stopped playback and, over those, speech onset -> playback silent
   (the pause) and onset -> barge-in decision (the words), p50 and p95. Onset and silence are
   measured on the virtual microphone and speaker themselves (pulse monitors), not taken from
   the daemon.
2. `--backchannel-trials` times: "uh-huh" over a long reply (it must pause, then resume where
   it paused: 0.8 s of the speaker's sound each side of the pause are placed in the reply's own
   audio, and nothing but silence may lie between them there), then "stop" (it must stop, and
   start no turn).
3. Both again with `stress-ng --cpu N` beside the daemon (`--hog-cpus`, 0 = not).
4. At least `--echo-minutes` of the daemon's own long replies with their echo in the
   microphone and nobody talking: false pauses and false barge-ins (target 0).

Every trial starts from an idle daemon, has deadlines at every step and prints one line.
Run: scripts/bench.sh bargein [--trials 20] [--backchannel-trials 10] [--echo-minutes 5] [--hog-cpus 2]
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.conftest import Broker  # noqa: E402
from tests.live import LiveDaemon  # noqa: E402
from tests.openai_server import ScriptedServer  # noqa: E402
from tests.pulse import PulseServer  # noqa: E402
from tests.room import DETERMINISTIC_VOICE, ECHO_MS, EchoRoom, Trial, TrialError, respond  # noqa: E402


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def spread(values: list[float]) -> str:
    if not values:
        return "n/a (none measured)"
    return f"p50 {statistics.median(values):.2f} s, p95 {p95(values):.2f} s (n={len(values)})"


def ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.0f} ms"


def spread_ms(values: list[float]) -> str:
    if not values:
        return "n/a (none measured)"
    return f"p50 {statistics.median(values) * 1000:.0f} ms, p95 {p95(values) * 1000:.0f} ms (n={len(values)})"


def line(index: int, trial: Trial) -> str:
    text = f"  {trial.kind:7} {index:2}: {'stopped' if trial.stopped else 'went on'}"
    text += f" (reply {trial.reply_s:4.1f} s), silent {ms(trial.silent_s)}, decided {ms(trial.decided_s)}"
    if trial.kind == "uh-huh":
        text += f", resumed {ms(trial.resumed_s)} after its end, words kept {trial.kept_words}"
    if trial.next_turn is not None:
        text += f", next turn {trial.next_turn!r}"
    return text + (f"  [{trial.problem}]" if trial.problem else "")


def run_trials(room: EchoRoom, trials: int, backchannels: int) -> tuple[list[Trial], list[Trial]]:
    print(f"another voice over the reply, {trials} trials:", flush=True)
    over: list[Trial] = []
    for index in range(1, trials + 1):
        trial = room.over_trial()
        over.append(trial)
        print(line(index, trial), flush=True)
    print(f'"uh-huh", then "stop", over the reply, {backchannels} trials:', flush=True)
    others: list[Trial] = []
    for index in range(1, backchannels + 1):
        done = room.backchannel_trial()
        others += done
        for trial in done:
            print(line(index, trial), flush=True)
    return over, others


def run_echo(room: EchoRoom, minutes: float) -> tuple[float, int, list[dict[str, object]]]:
    print(f"own echo only, until {minutes:g} min of our speech has played:", flush=True)
    mark = len(room.daemon.events())
    played, replies = 0.0, 0
    while played < minutes * 60:
        try:
            turn = room.long_reply()
            audio_s = room.reply_end(turn)
        except TrialError as exc:
            print(f"  reply {replies + 1}: [{exc}]", flush=True)
            continue
        played += audio_s
        replies += 1
        barge_ins = sum(1 for e in room.daemon.events()[mark:] if e["kind"] == "barge_in")
        print(
            f"  reply {replies}: {audio_s:.1f} s; {played / 60:.1f} min so far; barge-ins {barge_ins}",
            flush=True,
        )
    return played, replies, room.daemon.events()[mark:]


def report_trials(title: str, over: list[Trial], others: list[Trial]) -> None:
    stopped = [t for t in over if t.stopped]
    print(
        f"\n{title}: another voice's request over a long reply (echo path {ECHO_MS} ms), {len(over)} trials"
    )
    print(f"  stopped playback: {len(stopped)} of {len(over)}")
    silent = [t.silent_s for t in stopped if t.silent_s is not None]
    decided = [t.decided_s for t in stopped if t.decided_s is not None]
    print(f"  onset of talk-over -> playback silent (paused): {spread_ms(silent)}")
    print(f"  onset of talk-over -> barge-in decision (words): {spread_ms(decided)}")
    nexts = sum(1 for t in stopped if "kitchen" in (t.next_turn or "").lower())
    print(f"  the request became the next turn, heard with 'kitchen': {nexts} of {len(stopped)}")
    uh_huh = [t for t in others if t.kind == "uh-huh"]
    stops = [t for t in others if t.kind == "stop"]
    wrong = sum(t.stopped for t in uh_huh)
    good = [
        t for t in uh_huh if not t.stopped and t.kept_words and t.resumed_s is not None and t.resumed_s <= 1.2
    ]
    print(f'  "uh-huh" over the reply: wrongly stopped it in {wrong} of {len(uh_huh)} trials')
    print(
        f"    paused, then resumed with no words lost within 1.2 s of its end: {len(good)} of {len(uh_huh)}"
    )
    print(f"    onset -> silent: {spread_ms([t.silent_s for t in uh_huh if t.silent_s is not None])}")
    resumed = [t.resumed_s for t in uh_huh if t.resumed_s is not None]
    print(f"    its end -> the reply sounds again: {spread_ms(resumed)}")
    kept = sum(1 for t in uh_huh if t.kept_words)
    print(f"    resumed at or before where it paused (no words lost): {kept} of {len(uh_huh)}")
    good_stops = [t for t in stops if t.stopped and t.next_turn is None]
    print(f'  "stop" over the reply: stopped it (no new turn) in {len(good_stops)} of {len(stops)} trials')
    print(f"    onset -> silent: {spread_ms([t.silent_s for t in good_stops if t.silent_s is not None])}")
    print(f"    onset -> decision: {spread_ms([t.decided_s for t in good_stops if t.decided_s is not None])}")
    problems = [t for t in [*over, *others] if t.problem]
    if problems:
        print(
            f"  trials with a problem ({len(problems)}): "
            + "; ".join(f"{t.kind}: {t.problem}" for t in problems)
        )


def report_echo(played: float, replies: int, echo: list[dict[str, object]]) -> None:
    false_barge_ins = sum(1 for e in echo if e["kind"] == "barge_in")
    false_pauses = sum(1 for e in echo if e["kind"] == "reply_paused")
    onsets = sum(1 for e in echo if e["kind"] == "speech_started" and e["over_reply"] is True)
    dropped = sum(1 for e in echo if e["kind"] == "barge_in_ignored" and e["heard"] == "")
    print(f"\nown echo: {played / 60:.1f} min of our speech in {replies} replies, echo in the microphone:")
    print(f"  false pauses: {false_pauses}; false barge-ins: {false_barge_ins}")
    print(
        f"  echo bursts noticed: {onsets}, dropped on acoustics alone: {dropped}, "
        f"left to the words: {onsets - dropped}"
    )


@contextlib.contextmanager
def cpu_hog(cpus: int) -> Iterator[None]:
    """`stress-ng --cpu N` beside the daemon for as long as the block runs."""
    hog = subprocess.Popen(
        ["stress-ng", "--cpu", str(cpus), "--timeout", "3600s", "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield
    finally:
        hog.terminate()
        try:
            hog.wait(timeout=10)
        except subprocess.TimeoutExpired:
            hog.kill()
            hog.wait(timeout=10)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--backchannel-trials", type=int, default=10)
    parser.add_argument("--echo-minutes", type=float, default=5.0)
    parser.add_argument(
        "--hog-cpus", type=int, default=2, help="run the trials again beside stress-ng --cpu N"
    )
    parser.add_argument("--log-level", default="WARNING", help="the daemon's log level")
    parser.add_argument(
        "--daemon-log", type=Path, default=Path(tempfile.gettempdir()) / "voiced-bargein-daemon.log"
    )
    args = parser.parse_args()
    # Stopped with SIGTERM, it still stops what it started (the daemon, pulse, the broker, the hog).
    signal.signal(signal.SIGTERM, lambda _signum, _frame: sys.exit(143))
    with tempfile.TemporaryDirectory(prefix="voiced-bargein-") as tmp:
        work = Path(tmp)
        pulse, broker, llm = PulseServer(work, echo_ms=ECHO_MS), Broker(work), ScriptedServer()
        llm.respond = respond
        pulse.start()
        broker.start()
        llm.start()
        config = {
            "mqtt": {"port": broker.port},
            "tts": DETERMINISTIC_VOICE,
            "llm": {"base_url": llm.base_url},
            "agent": {"kind": "llm"},
        }
        daemon = LiveDaemon(work, pulse, config, log_level=args.log_level)
        room = EchoRoom(work, pulse, daemon)
        started = time.monotonic()
        try:
            daemon.start()
            room.start()
            over, others = run_trials(room, args.trials, args.backchannel_trials)
            loaded: tuple[list[Trial], list[Trial]] | None = None
            if args.hog_cpus:
                print(f"\nthe same beside stress-ng --cpu {args.hog_cpus}:", flush=True)
                with cpu_hog(args.hog_cpus):
                    loaded = run_trials(room, args.trials, args.backchannel_trials)
            played, replies, echo = run_echo(room, args.echo_minutes)
        finally:
            room.stop()
            daemon.stop()
            llm.stop()
            broker.stop()
            pulse.stop()
            args.daemon_log.write_text("".join(daemon.output))
    report_trials("barge-in", over, others)
    if loaded is not None:
        report_trials(f"barge-in beside stress-ng --cpu {args.hog_cpus}", *loaded)
    report_echo(played, replies, echo)
    print(f"\n(bench took {(time.monotonic() - started) / 60:.1f} min; the daemon's log: {args.daemon_log})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
