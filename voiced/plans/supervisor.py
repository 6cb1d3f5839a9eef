"""The supervisor (seed 003) by rules: after each step, continue / retry / skip / end.

Pure: a step's outcome and how often it was tried in, a decision and its reason out.
- done → continue;
- the device is offline → skip (it will not come back by itself in a plan's time);
- not confirmed by its device (or refused by the broker) → retry once, then skip and report;
- a timed step that fell due while the daemon was down, later than the grace → skip (missed);
- the plan was cancelled → end.
"""

from __future__ import annotations

from dataclasses import dataclass

from voiced.plans.model import Decision

MAX_TRIES = 2  # the first try and one retry


@dataclass(frozen=True)
class StepOutcome:
    ok: bool
    detail: str
    offline: bool = False
    missed: bool = False
    broker_down: bool = False


@dataclass(frozen=True)
class Verdict:
    decision: Decision
    reason: str


def decide(outcome: StepOutcome, tries: int, *, cancelled: bool = False) -> Verdict:
    if cancelled:
        return Verdict("end", "the plan was cancelled")
    if outcome.ok:
        return Verdict("continue", "done")
    if outcome.missed:
        return Verdict("skip", f"missed: {outcome.detail}")
    if outcome.offline:
        return Verdict("skip", f"the device is offline: {outcome.detail}")
    if tries < MAX_TRIES:
        return Verdict("retry", f"not confirmed, trying once more: {outcome.detail}")
    return Verdict("skip", f"not confirmed after {tries} tries, skipped: {outcome.detail}")


def overall(decisions: list[str], statuses: list[str]) -> tuple[str, str]:
    """The plan's end: completed when every step was done, failed when any was skipped."""
    if "end" in decisions:
        return "cancelled", "the plan was cancelled"
    skipped = [s for s in statuses if s != "completed"]
    if not skipped:
        return "completed", "every step was done"
    return "failed", f"{len(skipped)} of {len(statuses)} steps were not done"
