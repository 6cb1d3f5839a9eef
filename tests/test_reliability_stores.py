"""A seeded subset of the `stores` reliability family: damaged SQLite files, then a start and a turn."""

from __future__ import annotations

from bench.reliability import stores


def test_damaged_stores_start_keep_a_confirmed_plan_and_stay_bounded() -> None:
    counts = stores.run(seed=12, cases=4, plans=10)
    assert counts["tries"] == 4 + 5  # four damaged starts, a table dropped under each running store
    failures = ("tracebacks", "crashes", "crash_loops", "turn_failures", "running_failures")
    assert {
        key: counts[key] for key in (*failures, "confirmed_lost_ledger_ok", "sent_twice", "unexplained")
    } == (dict.fromkeys((*failures, "confirmed_lost_ledger_ok", "sent_twice", "unexplained"), 0))
    assert counts["moved_aside"] > 0 and counts["plans_file_kb_after_10"] < 1024
