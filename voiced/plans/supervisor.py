"""The supervisor (seed 003): after each step, continue / retry / skip / end.

By rules, pure: a step's outcome and how often it was tried in, a decision and its reason out.
- done → continue;
- the device is offline → skip (it will not come back by itself in a plan's time);
- not confirmed by its device (or refused by the broker) → retry once, then skip and report;
- a timed step that fell due while the daemon was down, later than the grace → skip (missed);
- the plan was cancelled → end.

With an LLM (voiced/plans/llm_supervisor.py) the model decides, within `allowed`: the bounds the
rules set on any supervisor (never more than one retry, no retry of a missed step, a done step is
not sent again). A cancel never asks anyone: it ends the plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from voiced.language.replies import say
from voiced.plans.model import Decision

MAX_TRIES = 2  # the first try and one retry
Decider = Literal["rules", "llm"]


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
    by: Decider = "rules"
    fallback: str = ""  # why the LLM's answer was not taken (the rules decided instead)


class Supervisor(Protocol):
    """Decides after one step; `context` is what the plan is and what is left of it."""

    async def __call__(self, outcome: StepOutcome, tries: int, context: dict[str, Any]) -> Verdict: ...


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


def allowed(outcome: StepOutcome, tries: int) -> tuple[Decision, ...]:
    """What any supervisor may decide after this step (the rules' own decision always is)."""
    if outcome.ok:
        return ("continue", "end")
    if outcome.missed or tries >= MAX_TRIES:
        return ("skip", "end")
    return ("retry", "skip", "end")


async def by_rules(outcome: StepOutcome, tries: int, context: dict[str, Any]) -> Verdict:
    return decide(outcome, tries)


def overall(statuses: list[str], *, ended: str = "", not_run: int = 0) -> tuple[str, str]:
    """The plan's end: completed when every step was done, failed when any was skipped or was
    left unrun because the supervisor ended the plan (`ended`: its reason)."""
    undone = len([s for s in statuses if s != "completed"]) + not_run
    total = len(statuses) + not_run
    if not undone:
        return "completed", "every step was done"
    if undone == total:
        not_done = say("steps_none_done", count=total)
    else:
        not_done = say("steps_not_done", count=undone, total=total)
    if ended:
        return "failed", f"the supervisor ended the plan ({ended}); {not_done}"
    return "failed", not_done
