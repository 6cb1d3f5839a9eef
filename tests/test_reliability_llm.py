"""The `llm` reliability family, a seeded subset: broken endpoints answered within 5 s, hostile tool
calls and damaged state files, with 0 tracebacks, 0 crashes, 0 forbidden publishes."""

from __future__ import annotations

import random
from pathlib import Path

from bench.reliability.llm import run
from bench.reliability.llm_parts.cases import hostile_arguments, reply_stalls, state_damage

SEED = 12
CASES = 350  # a third of the suite's 1,000; about 15 s on two cores, mostly waiting on stalls


def test_the_seeded_subset_has_no_tracebacks_crashes_or_forbidden_publishes() -> None:
    counts = run(SEED, CASES)
    assert counts["tries"] == CASES
    assert counts["tracebacks"] == 0
    assert counts["crashes"] == 0
    assert counts["forbidden_publishes"] == 0
    assert counts["unbounded_errors"] == 0
    assert counts["late_answers"] == 0 and 0 < counts["slowest_answer_ms"] < 5000


def test_the_cases_are_seeded_and_cover_every_kind(tmp_path: Path) -> None:
    first = [hostile_arguments(random.Random(SEED)) for _ in range(3)]
    assert first == [hostile_arguments(random.Random(SEED)) for _ in range(3)]
    rng = random.Random(SEED)
    drawn = [hostile_arguments(rng) for _ in range(400)]
    assert any(len(arguments) >= 10 * 1024 * 1024 for _tool, arguments in drawn)
    assert any(arguments.count("[") >= 100_000 for _tool, arguments in drawn)
    assert any("9" * 5000 in arguments for _tool, arguments in drawn)
    ways = {state_damage(rng, tmp_path / f"state-{n}.sqlite") for n in range(80)}
    assert ways == {"truncated", "page", "header", "schema", "view", "junk-body", "zero", "text", "directory"}
    assert {name for name, _step, _said in reply_stalls()} >= {
        "hang",
        "stall-after-one-token",
        "token-every-2s",
        "byte-every-2s",
        "drop-mid-stream",
    }
