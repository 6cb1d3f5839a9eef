"""Calibration of the entity frame's thresholds in voiced/language/en.yaml: `alone_words` (how many
words a value or action said alone may take and still be for the device last acted on: "a bit
stronger", "ok you can carry on now"), `mood_time_weight` (a time of day as evidence of a mood) and
`mood_least` (the evidence a mood needs). Prints, for each value of the field swept, the tuning half's
exact turns and wrong effects (and the mood and must-not-act kinds'); the value is where exact stops
rising or wrong starts to. Only the tuning half is read (the held-out half is never used to set a
threshold). Asserts nothing.

Run: .venv/bin/python bench/calibrate_frame.py [--field alone_words] [--values 0,2,4,6,8,10]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.understanding import score, typed  # noqa: E402
from tests.conftest import Broker  # noqa: E402
from voiced.devices.registry import DeviceRegistry  # noqa: E402
from voiced.language import english  # noqa: E402
from voiced.mouth.intents import LocalIntentAgent  # noqa: E402
from voiced.vibe.presets import preset_moods  # noqa: E402

FIELDS = {
    "alone_words": int,
    "mood_time_weight": float,
    "mood_least": float,
    "talk_least_words": int,
    "speaker_words": int,
    "name_words": int,
}
DEFAULTS = {
    "alone_words": "0,2,3,4,5,6,8,10",
    "mood_time_weight": "0,0.25,0.5,0.75,1",
    "mood_least": "0.4,0.5,0.9,1,1.5,2",
    "talk_least_words": "1,2,3,4",
    "speaker_words": "0,2,3,4,5",
    "name_words": "0,1,2,3",
}


def agents(field: str, value: float) -> score.AgentFactory:
    language = dataclasses.replace(english(), **{field: FIELDS[field](value)})
    made: dict[tuple[int, str | None], LocalIntentAgent] = {}

    def make(
        registry: DeviceRegistry, states: Callable[[str], dict[str, Any] | None], room: str | None
    ) -> LocalIntentAgent:
        key = (id(registry), room)
        if key not in made:
            made[key] = LocalIntentAgent(
                registry,
                states,
                score.BRIGHTNESS_STEP_PCT,
                room=room,
                moods=preset_moods(),
                language=language,
            )
        made[key].forget()
        return made[key]

    return make


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--field", choices=sorted(FIELDS), default="alone_words")
    parser.add_argument("--values", "--lengths", help="comma-separated values to try")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("voiced").setLevel(logging.CRITICAL)
    registry = DeviceRegistry.load(score.DEVICES)
    tuning = typed.split(typed.load(registry=registry))["tuning"]
    now = getattr(english(), args.field)
    print(f"tuning half: {len(tuning)} conversations; {args.field} now {now}")
    print(
        f"{args.field:>16} {'exact':>6} {'exact%':>7} {'miss':>5} {'wrong':>6}"
        "   mood exact/wrong   must-not-act exact/wrong"
    )
    with tempfile.TemporaryDirectory(prefix="calibrate-frame-") as tmp:
        broker = Broker(Path(tmp))
        broker.start()
        try:
            for value in (float(v) for v in (args.values or DEFAULTS[args.field]).split(",")):
                results = asyncio.run(typed.run(tuning, broker.port, registry, agents(args.field, value)))
                f = typed.summary(results)
                kinds = {
                    k: typed.summary([r for r in results if r.conversation.kind == k])
                    for k in ("mood", "must_not_act")
                }
                rate = f"{100 * f['exact_rate']:>6.1f}%"
                by_kind = "   ".join(f"{kinds[k]['exact']:>10}/{kinds[k]['wrong']:<3}" for k in kinds)
                print(f"{value:>16g} {f['exact']:>6} {rate} {f['miss']:>5} {f['wrong']:>6}   {by_kind}")
        finally:
            broker.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
