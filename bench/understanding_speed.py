"""How fast the local understanding is: understand() per utterance, and where its time goes.

Every fresh typed conversation (both halves) and every sentence of HA's corpora and ours goes once
through a LocalIntentAgent built as bench/understanding.py builds it, but with no broker: the states
it reads are the simulator's starting states with the case's or conversation's own laid over them,
and nothing it answers is carried out (a follow-up turn reads the conversation's start, not what
the turn before did). Each utterance is timed once (a second pass would time caches, not work).
Prints p50/p95/p99 per source, of wall time (what bench/understanding.py prints) and of CPU time (less
moved by other work on the box), and, with --profile, the functions that cost most (cProfile: its
overhead makes every figure larger; the ranking is what it is for). Lists no held-out utterance.

Run: .venv/bin/python bench/understanding_speed.py [--profile] [--top 25] [--slowest 10] [--long-list N]
"""

from __future__ import annotations

import argparse
import cProfile
import logging
import pstats
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.understanding import score, typed  # noqa: E402
from voiced.devices.registry import DeviceRegistry  # noqa: E402
from voiced.mouth.understanding import prefilter  # noqa: E402

Utterance = tuple[str, str | None, dict[str, dict[str, Any]], str, bool]  # text, room, states, source, new


def utterances(registry: DeviceRegistry) -> Iterator[Utterance]:
    """(text, room, states, source, whether a new conversation starts), in the benchmark's order."""
    kinds: dict[str, str] = {d.name: d.kind for d in registry}
    halves = typed.split(typed.load(registry=registry))
    for half in ("tuning", "heldout"):
        for conversation in halves[half]:
            states = typed.start_states(conversation, kinds)
            for index, turn in enumerate(conversation.turns):
                yield turn.say, conversation.room, states, f"typed {half}", index == 0
    for case in score.load("all", registry):
        yield case.text, case.room, case.states, f"corpus {case.corpus}", True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", action="store_true", help="also rank the functions by their cost")
    parser.add_argument("--top", type=int, default=25, help="functions listed with --profile")
    parser.add_argument("--slowest", type=int, default=0, help="list the N slowest (tuning and corpora)")
    parser.add_argument(
        "--long-list",
        type=int,
        help="narrow hassil's lists of this many values or more (default: prefilter.LONG_LIST)",
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.CRITICAL)
    if args.long_list is not None:  # its curve: run it with a few values (it changes no reading)
        prefilter.LONG_LIST = args.long_list

    registry = DeviceRegistry.load(score.DEVICES)
    base = {d.name: score.baseline(d) for d in registry}
    agents: dict[str | None, Any] = {}
    current: dict[str, dict[str, Any]] = {}
    profiler = cProfile.Profile() if args.profile else None
    times: dict[str, list[tuple[float, float]]] = {}  # wall, CPU
    slow: list[tuple[float, str, str]] = []
    for text, room, states, source, new in utterances(registry):
        if room not in agents:
            agents[room] = score.build_agent(registry, lambda name: current.get(name), room)
        agent = agents[room]
        if new:
            current.clear()
            current.update({name: {**state, **states.get(name, {})} for name, state in base.items()})
            agent.forget()
        if profiler is not None:
            profiler.enable()
        started, cpu = time.perf_counter(), time.process_time()
        agent.understand(text)
        elapsed = (time.perf_counter() - started) * 1000
        if profiler is not None:
            profiler.disable()
        times.setdefault(source, []).append((elapsed, (time.process_time() - cpu) * 1000))
        if source != "typed heldout":
            slow.append((elapsed, source, text))

    row = "{:16} {:>6} {:>8} {:>8} {:>8} {:>8}   {:>8} {:>8} {:>8}"
    print(row.format("", "", "wall ms", "", "", "", "CPU ms", "", ""))
    print(row.format("source", "n", "p50", "p95", "p99", "max", "p50", "p95", "p99"))
    every = [t for ts in times.values() for t in ts]
    for source, ts in [*times.items(), ("ALL", every)]:
        wall = [f"{score.percentile([w for w, _ in ts], p):.2f}" for p in (50, 95, 99, 100)]
        cpu_ms = [f"{score.percentile([c for _, c in ts], p):.2f}" for p in (50, 95, 99)]
        print(row.format(source, len(ts), *wall, *cpu_ms))
    if args.slowest:
        print(f"\nslowest {args.slowest} (tuning half and corpora):")
        for elapsed, source, text in sorted(slow, reverse=True)[: args.slowest]:
            print(f"  {elapsed:7.2f} ms  [{source}] {text!r}")
    if profiler is not None:
        print(f"\ntop {args.top} by own time, then by cumulative time (cProfile adds overhead):")
        stats = pstats.Stats(profiler, stream=sys.stdout)
        stats.sort_stats("tottime").print_stats(args.top)
        stats.sort_stats("cumulative").print_stats(args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
