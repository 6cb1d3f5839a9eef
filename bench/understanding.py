"""Understanding benchmark: the local agent on Home Assistant's English test sentences and our own.

Every sentence goes through the real local agent and `carry_out` against a private Mosquitto and
the in-process device simulator; what is published on the command topics is compared with the
exact commands the case expects (bench/understanding/score.py). Prints a table per family (n,
exact %, misses, wrong) for each corpus, understand() time per utterance, and every wrong or
missed sentence with what was published. Asserts nothing.

Run: scripts/bench.sh understanding [--corpus ha|ours|all] [--verbose] [--json FILE]
     scripts/bench.sh understanding --typed-heldout   fresh typed conversations, the held-out half
     scripts/bench.sh understanding --typed-tuning    the half rules may be written from (misses listed)
     ... --sets o,p,q                                 only these fresh sets (a new set's first sight)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.understanding import score, typed  # noqa: E402
from tests.conftest import Broker  # noqa: E402
from voiced.devices.registry import DeviceRegistry  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", choices=("ha", "ours", "ha_ood", "all"), default="all")
    parser.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="list every case (and what was said), and voiced's warnings",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="write every result and the figures")
    parser.add_argument(
        "--typed-heldout",
        action="store_true",
        help="score the held-out half of the fresh typed conversations (bench/understanding/fresh)",
    )
    parser.add_argument(
        "--typed-tuning", action="store_true", help="score the tuning half, listing every turn not exact"
    )
    parser.add_argument(
        "--sets",
        metavar="LETTERS",
        help="only these fresh sets, e.g. o,p,q (a set added later: its first sight is a clean figure)",
    )
    parser.add_argument(
        "--show-heldout",
        action="store_true",
        help="also list the held-out turns not exact (only once the rules being measured are written)",
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("voiced").setLevel(logging.WARNING if args.verbose else logging.CRITICAL)
    # The simulator warns about every command it cannot apply: those are scored, not logged.
    logging.getLogger("voiced.devices.simulator").setLevel(logging.CRITICAL)

    registry = DeviceRegistry.load(score.DEVICES)
    if args.typed_heldout or args.typed_tuning:
        return _typed(args, registry)
    cases = score.load(args.corpus, registry)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bench-understanding-") as tmp:
        broker = Broker(Path(tmp))
        broker.start()
        try:
            results = asyncio.run(score.run_cases(cases, broker.port, registry=registry))
        finally:
            broker.stop()
    wall = time.monotonic() - started
    print(score.report(results, verbose=args.verbose))
    print(f"\n{len(results)} cases in {wall:.1f} s")
    if args.json is not None:
        body = {"summary": score.summary(results), "cases": [r.as_dict() for r in results]}
        args.json.write_text(json.dumps(body, indent=1) + "\n", encoding="utf-8")
        print(f"results written to {args.json}")
    return 0


def _typed(args: argparse.Namespace, registry: DeviceRegistry) -> int:
    paths = None
    if args.sets:
        paths = [typed.FRESH / f"set_{letter.strip()}.yaml" for letter in args.sets.split(",")]
        missing = [str(p) for p in paths if not p.exists()]
        if missing:
            raise SystemExit(f"--sets: no such file: {', '.join(missing)}")
    halves = typed.split(typed.load(paths, registry=registry))
    chosen = [h for h, wanted in (("tuning", args.typed_tuning), ("heldout", args.typed_heldout)) if wanted]
    started = time.monotonic()
    body: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="bench-understanding-") as tmp:
        broker = Broker(Path(tmp))
        broker.start()
        try:
            for half in chosen:
                results = asyncio.run(typed.run(halves[half], broker.port, registry))
                show = half == "tuning" or args.show_heldout
                which = f"sets {args.sets}, " if args.sets else ""
                print(typed.report(results, f"fresh typed conversations, {which}{half} half", show=show))
                body[half] = {"summary": typed.summary(results), "turns": [r.as_dict() for r in results]}
        finally:
            broker.stop()
    print(f"\nin {time.monotonic() - started:.1f} s")
    if args.json is not None:
        args.json.write_text(json.dumps(body, indent=1) + "\n", encoding="utf-8")
        print(f"results written to {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
