"""A seeded subset of the `tasks` reliability family: every background task of a whole daemon
(in-process, with its web server, Home Assistant's entities, discovery and a systemd socket)
killed once by an exception, and seen doing its work again."""

from __future__ import annotations

from bench.reliability import tasks


def test_every_background_task_comes_back_after_an_exception() -> None:
    counts = tasks.run(seed=3, cases=0)  # one failure per task
    assert counts["tries"] == 7 and counts["failures_logged"] == 7  # one line per failure
    failures = (
        "not_recovered",
        "dead_tasks",
        "still_degraded",
        "crashes",
        "tracebacks",
        "told_stopping_early",
    )
    assert {key: counts[key] for key in failures} == dict.fromkeys(failures, 0)
