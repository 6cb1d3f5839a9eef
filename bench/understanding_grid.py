"""A tuning probe for dialogue: every first request x every phrasing of a follow-up or a correction x
every target, scored like the fresh typed sets (bench/understanding/typed.py) on a private broker.

The phrasings are classes of how people carry a request over ("now the bedroom", "what about the
lounge?") or correct one ("no, I meant the bedroom"), written from the kinds of follow-up the fresh
sets' tuning halves hold, never from the held-out half. Like the tuning half, it is material for
rules, not a figure to report: the held-out half says whether a rule generalizes.

Run: .venv/bin/python bench/understanding_grid.py [--family follow|correct] [--show N]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import logging
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.understanding import score, typed  # noqa: E402
from tests.conftest import Broker  # noqa: E402
from voiced.devices.registry import DeviceRegistry  # noqa: E402

FIRSTS: dict[str, dict[str, Any]] = {
    "turn on the kitchen light": {"power": "on"},
    "set the kitchen light to 30 percent": {"power": "on", "brightness": 30},
    "make the kitchen light blue": {"power": "on", "color": "blue"},
    "turn off the kitchen light": {"power": "off"},
    "make the kitchen light warm white": {"power": "on", "white": "warm"},
}
FOLLOW = [
    "the X as well",
    "and the X",
    "the X too",
    "same for the X",
    "do the X too",
    "also the X",
    "what about the X",
    "now the X",
    "the X please",
    "same in the X",
    "and X",
    "X too",
    "the X light as well",
    "do the same in the X",
    "and in the X",
    "the X one too",
    "X as well please",
    "ditto for the X",
    "and the X one",
    "then the X",
    "how about the X?",
    "now do the X",
]
CORRECT = [
    "no, the X",
    "no, the X one",
    "not the kitchen, the X",
    "I meant the X",
    "sorry, I meant the X",
    "wrong one, the X",
    "no I said the X",
    "actually the X",
    "no no, the X light",
    "not that one, the X",
    "oops, the X",
    "no wait, the X",
    "the X, not the kitchen",
    "no, I wanted the X",
]
TARGETS = {"bedroom": "bedroom_light", "lounge": "living_room_light", "living room": "living_room_light"}
UNDONE: dict[str, Any] = {
    "power": "off"
}  # what the kitchen light is put back to after a correction (it started off)


def conversations(family: str) -> list[typed.Conversation]:
    out: list[typed.Conversation] = []
    phrasings = FOLLOW if family == "follow" else CORRECT
    for (first, effect), said, (target, device) in itertools.product(
        FIRSTS.items(), phrasings, TARGETS.items()
    ):
        off_first = effect == {"power": "off"}
        start = {"kitchen_light": {"power": "on"}, device: {"power": "on"}} if off_first else {}
        second: dict[str, dict[str, Any]] = {device: effect}
        if family == "correct":
            second["kitchen_light"] = {"power": "on"} if off_first else UNDONE
        turns = (
            typed.Turn(say=first, expect={"kitchen_light": effect}),
            typed.Turn(say=said.replace("X", target), expect=second),
        )
        out.append(typed.Conversation(ident=f"grid:{len(out)}", kind="context", turns=turns, start=start))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", choices=("follow", "correct"), default="follow")
    parser.add_argument("--show", type=int, default=20, help="list this many turns not exact")
    args = parser.parse_args()
    logging.basicConfig(level=logging.CRITICAL)
    registry = DeviceRegistry.load(score.DEVICES)
    convs = conversations(args.family)
    with tempfile.TemporaryDirectory(prefix="bench-grid-") as tmp:
        broker = Broker(Path(tmp))
        broker.start()
        try:
            results = asyncio.run(typed.run(convs, broker.port, registry))
        finally:
            broker.stop()
    second = [r for r in results if r.index == 1]
    bad = [r for r in second if r.outcome != "exact"]
    print(f"{args.family}: {len(second) - len(bad)} of {len(second)} second turns exact")
    by_phrasing = Counter(
        (r.conversation.turns[1].say.replace(t, "X"), r.outcome)
        for r in bad
        for t in TARGETS
        if t in r.conversation.turns[1].say
    )
    for (phrasing, outcome), n in by_phrasing.most_common():
        print(f"  {n:3} {outcome:5} {phrasing!r}")
    for r in bad[: args.show]:
        first, then = (t.say for t in r.conversation.turns)
        print(f"  {r.outcome.upper():5} {first!r} -> {then!r}: {r.said!r} {score._commands(r.published)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
