"""The `payloads` reliability family, seeded: hostile MQTT payloads through the real gateway and simulator."""

from __future__ import annotations

import random

from bench.hostile_payloads import hostile
from bench.reliability.payloads import run
from voiced.devices.payloads import PayloadError, read_json


def test_the_generator_covers_every_hostile_family_and_is_seeded() -> None:
    first = [hostile(random.Random(7)) for _ in range(3)]
    assert first == [hostile(random.Random(7)) for _ in range(3)]
    rng = random.Random(7)
    sample = [hostile(rng) for _ in range(400)]
    refused = 0
    for payload in sample:
        try:
            read_json(payload)
        except PayloadError:
            refused += 1
    assert any(len(p) > 65_536 for p in sample)
    assert any(b"Infinity" in p or b"NaN" in p for p in sample)
    assert any(p == b"" for p in sample)
    assert 100 < refused < 400  # mostly hostile, some valid


def test_a_seeded_run_gives_no_tracebacks_crashes_forbidden_publishes_or_stale_commands() -> None:
    counts = run(seed=12, cases=1200)
    assert counts["tries"] == 1200
    assert counts["tracebacks"] == 0
    assert counts["crashes"] == 0
    assert counts["forbidden_publishes"] == 0
    assert counts["stale_deliveries"] == 0
    assert counts["rss_growth_kb"] < 20 * 1024
