"""The `lifecycle` family of the reliability suite, seeded: kill -9 mid-session, a broker killed mid-scene."""

from __future__ import annotations

from bench.reliability import lifecycle


def test_kill_9_and_a_broker_killed_mid_scene_lose_nothing_and_deliver_nothing_stale() -> None:
    counts = lifecycle.run(seed=12, cases=500)
    assert counts["tries"] == 6  # five kills mid-write, one scene whose broker dies under it
    assert counts == {**counts, "tracebacks": 0, "crashes": 0, "stale_deliveries": 0}
