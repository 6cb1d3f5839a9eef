"""Calibration of the entity frame's one threshold, `alone_words` (voiced/language/en.yaml): how many
words a value or action said alone may take and still be for the device last acted on ("a bit
stronger", "ok you can carry on now"). Prints, for each length, the tuning half's exact turns and wrong
effects; the threshold is the length past which exact stops rising or wrong starts to. Only the
tuning half is read (the held-out half is never used to set a threshold). Asserts nothing.

Run: .venv/bin/python bench/calibrate_frame.py [--lengths 0,2,4,6,8,10]
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


def agents(alone_words: int) -> score.AgentFactory:
    language = dataclasses.replace(english(), alone_words=alone_words)
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
    parser.add_argument("--lengths", default="0,2,3,4,5,6,8,10")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("voiced").setLevel(logging.CRITICAL)
    registry = DeviceRegistry.load(score.DEVICES)
    tuning = typed.split(typed.load(registry=registry))["tuning"]
    print(f"tuning half: {len(tuning)} conversations; alone_words now {english().alone_words}")
    print(f"{'alone_words':>11} {'exact':>6} {'exact%':>7} {'miss':>5} {'wrong':>6}")
    with tempfile.TemporaryDirectory(prefix="calibrate-frame-") as tmp:
        broker = Broker(Path(tmp))
        broker.start()
        try:
            for length in (int(n) for n in args.lengths.split(",")):
                results = asyncio.run(typed.run(tuning, broker.port, registry, agents(length)))
                f = typed.summary(results)
                rate = f"{100 * f['exact_rate']:>6.1f}%"
                print(f"{length:>11} {f['exact']:>6} {rate} {f['miss']:>5} {f['wrong']:>6}")
        finally:
            broker.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
