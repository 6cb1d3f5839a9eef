"""A plan's steps for now are done at once, in the turn that asked for them; only the rest waits.

"Turn on the kitchen light now and turn it off in 2 minutes": the light goes on in this turn (its
commands are this turn's, as any request's), and "turn it off in 2 minutes" is read back and waits
for a yes. Commands for now run at once however many are said in one breath; a confirmation is for
what runs later, or touches a device declared `confirm: true` (then the whole plan waits).
"""

from __future__ import annotations

from dataclasses import dataclass

from voiced.devices.actions import DeviceActions
from voiced.language.replies import join, say
from voiced.mouth.agent import AgentReply
from voiced.mouth.local_agent import CarriedOut, carry_out
from voiced.plans.model import ExecutionPlan, PlanStep
from voiced.plans.words import PlanWords, is_named


def _renumbered(plan: ExecutionPlan, steps: list[PlanStep]) -> ExecutionPlan:
    return plan.model_copy(
        update={"steps": tuple(step.model_copy(update={"index": i}) for i, step in enumerate(steps))}
    )


@dataclass(frozen=True)
class Split:
    now: ExecutionPlan  # the steps with no time: done in this turn
    later: ExecutionPlan  # the timed ones, renumbered: read back, confirmed, run by the engine


NAMED_AFTER_AT_MOST = 2  # a plan with no name of its own is called after what it does, if short


def split(plan: ExecutionPlan, words: PlanWords) -> Split:
    now = [step for step in plan.steps if not step.timed]
    later = [step for step in plan.steps if step.timed]
    rest = _renumbered(plan, later)
    actions = words.actions(rest)
    if not is_named(rest.name) and len(actions) <= NAMED_AFTER_AT_MOST:
        rest = rest.model_copy(update={"name": say("plan_to", steps=join(actions))})  # "plan to turn off …"
    return Split(_renumbered(plan, now), rest)


async def run_now(turn: int, plan: ExecutionPlan, actions: DeviceActions, words: PlanWords) -> CarriedOut:
    """Send the steps as this turn's commands; what to say, honest about what failed."""
    reply = AgentReply(text=words.doing_now(plan), commands=tuple(step.typed() for step in plan.steps))
    return await carry_out(turn, reply, actions)
