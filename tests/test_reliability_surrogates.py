"""A seeded subset of the `surrogates` reliability family: lone surrogates on every input path of
the real daemon (HTTP bodies, a typed line, device states, discovery configs, Home Assistant's
commands), and after each Home Assistant's entities still publish and no background task died."""

from __future__ import annotations

from bench.reliability import surrogates


def test_lone_surrogates_on_every_path_kill_no_task_and_silence_no_entity() -> None:
    counts = surrogates.run(seed=3, cases=0)  # two cases on each path
    assert counts["tries"] == 2 * len(surrogates.PATHS)
    assert counts["entities_publishing"] == counts["tries"]
    failures = (*surrogates.FAILURES, "crashes", "tracebacks")
    assert {key: counts[key] for key in failures} == dict.fromkeys(failures, 0)
