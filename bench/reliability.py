"""The reliability suite: every family in bench/reliability/*.py, seeded, counted, totalled.

    scripts/bench.sh reliability [--seed N] [--cases N] [--family NAME ...]

Each family module exposes `run(seed, cases) -> dict[str, int]` with at least `tries`,
`tracebacks` and `crashes`. Prints one row per family and a total; exits 1 when any family
shows a traceback, a crash, a forbidden publish or a stale delivery, so CI can run it too.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

COLUMNS = ("tries", "tracebacks", "crashes", "forbidden_publishes", "stale_deliveries", "rss_growth_kb")
FAILURES = ("tracebacks", "crashes", "forbidden_publishes", "stale_deliveries")
# A family's own counters that are failures too (shown under "other"; the run exits 1 on any).
OTHER_FAILURES = (
    "forged_lines",  # logs
    "not_recovered",  # tasks
    "dead_tasks",
    "still_degraded",
    "told_stopping_early",
    "responses_5xx",  # http
    "no_response",
    "half_open_held_30s",
    "slow_held_30s",
    "sse_cut",
    "crash_loops",  # stores
    "turn_failures",
    "running_failures",
    "confirmed_lost_ledger_ok",  # a confirmed plan lost although its ledger row still reads
    "asked_again",
    "sent_twice",
    "unexplained",
    "entities_silent",  # surrogates
)


def families() -> list[str]:
    """Family names by glob; modules starting with _ are their helpers."""
    folder = REPO / "bench" / "reliability"
    return sorted(path.stem for path in folder.glob("*.py") if not path.stem.startswith("_"))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seed", type=int, default=12, help="the same seed gives the same cases")
    parser.add_argument("--cases", type=int, default=1000, help="cases per family")
    parser.add_argument("--family", action="append", choices=families(), help="run only these (repeatable)")
    args = parser.parse_args()
    chosen = args.family or families()
    rows: dict[str, dict[str, int]] = {}
    for name in chosen:
        module = importlib.import_module(f"bench.reliability.{name}")
        started = time.perf_counter()
        print(f"reliability: {name} (seed {args.seed}, {args.cases} cases)…", flush=True)
        rows[name] = {**module.run(args.seed, args.cases), "seconds": round(time.perf_counter() - started)}
    print()
    print(f"{'family':<10}" + "".join(f"{column:>{len(column) + 2}}" for column in COLUMNS) + "  other")
    total = dict.fromkeys(COLUMNS, 0)
    for name, counts in rows.items():
        cells = "".join(f"{counts.get(c, '-'):>{len(c) + 2}}" for c in COLUMNS)
        other = " ".join(f"{key}={value}" for key, value in counts.items() if key not in COLUMNS)
        print(f"{name:<10}{cells}  {other}")
        for column in COLUMNS:
            if column == "rss_growth_kb":
                total[column] = max(total[column], counts.get(column, 0))  # a peak, not a sum
            else:
                total[column] += counts.get(column, 0)
    cells = "".join(f"{total[c]:>{len(c) + 2}}" for c in COLUMNS)
    print(f"{'total':<10}{cells}  (rss_growth_kb: the largest)")
    others = sum(counts.get(name, 0) for counts in rows.values() for name in OTHER_FAILURES)
    return 1 if others or any(total[column] for column in FAILURES) else 0


if __name__ == "__main__":
    sys.exit(main())
