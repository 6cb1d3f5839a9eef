"""Plans by voice: wraps the main agent, as the interview does.

- A plan waiting for its confirmation takes the next turn's "yes" / "no" / "without the music"
  (anything else goes to the main agent, and the plan keeps waiting).
- "What's planned?" says the plans not yet finished, each as a sentence; "cancel the movie night" /
  "never mind" cancels (with no plan going on, "never mind" is the main agent's: it stops a scene).
- Words worth planning (time words, a name before a colon, several commands) are planned; the steps
  for now are done at once in this turn (voiced/plans/at_once.py), the ones for later read back
  and confirmed. A device declared `confirm: true` makes the whole plan wait for a yes.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any, NamedTuple

from voiced.devices.gateway import Sent
from voiced.language.replies import say
from voiced.mouth.agent import NO_CONTEXT, Agent, TurnContext
from voiced.mouth.local_agent import NO_BROKER_REPLY, confirmations
from voiced.plans.at_once import run_now, split
from voiced.plans.model import ExecutionPlan
from voiced.plans.rules import PlanRefused, without
from voiced.plans.setup import Plans
from voiced.plans.words import status_words

_LOGGER = logging.getLogger(__name__)

YES = re.compile(
    r"^(?:yes|yeah|yep|yup|sure|ok|okay|go ahead|do it|please do|sounds good|confirm|correct|right)\b"
)
NO = re.compile(r"^(?:no|nope|don't|do not|cancel|stop|never ?mind|forget it|not now)\b")
# "No thanks" is a no, not "without the thanks"
PLAIN_NO = re.compile(
    r"^(?:no|nope|nah)(?:\s+(?:thanks|thank you|very much|please|sorry|way|cancel it|forget it))*$"
)
WITHOUT = re.compile(r"\b(?:without|except|skip|leave out|but not|no)\s+(?P<what>(?:the\s+)?[a-z ]+)$")
LIST = re.compile(r"\bwhat(?:'s| is| are)?\s+(?:\w+\s+)?(?:planned|scheduled|the plans?)\b|\bwhat plans\b")
CANCEL = re.compile(
    r"^(?:please\s+)?(?:cancel|drop|call off)\s+(?:the\s+|my\s+)?(?P<what>[a-z' -]+?)(?:\s+plan)?$"
)
NEVER_MIND = re.compile(r"^(?:never ?mind|forget it|forget about it)$")


YES_WORDS = 5  # "ok turn off everything in the living room" is a request of its own, not a yes
# "stop the music" while a plan waits is that request, not a no ("stop", "stop it" still are)
STOP_REQUEST = re.compile(r"^stop\s+(?!(?:it|that|this|the plan|please)\b)\w")


def is_yes(words: str) -> bool:
    return bool(YES.search(words)) and len(words.split()) <= YES_WORDS


def is_no(words: str) -> bool:
    return bool(NO.search(words)) and not STOP_REQUEST.match(words)


def _clean(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9' %-]+", " ", text.lower().replace("\u2019", "'")).split())


class DoneNow(NamedTuple):
    """A turn's steps for now, done: what to say of them, what was sent, and the read-back after."""

    said: str
    sent: tuple[Sent, ...]
    then: str


PLAN_WORDS = ("plan", "plans", "it", "that")  # "cancel the plan": whichever plan there is
PLAN_NOUNS = ("plan", "plans")  # "cancel it" with no plan going on may mean a scene: not ours to answer


def _named(what: str, views: list[dict[str, Any]], *, by_steps: bool = True) -> dict[str, Any] | None:
    """The first plan `what` names: by its name, by what it does (`by_steps`), or any ("the plan")."""
    for view in views:
        plan = ExecutionPlan.model_validate(view["execution_plan"])
        steps = " ".join(step.action for step in plan.steps)
        if what in PLAN_WORDS or what in plan.name or (by_steps and len(what) > 3 and what in steps):
            return view
    return None


def _called(view: dict[str, Any]) -> str:
    """ "the movie night", "the plan to turn off the bedroom light"."""
    name = view["execution_plan"].get("name")
    return say("plan_the", name=name) if name else say("plan_the_plan")


class PlanAgent:
    def __init__(
        self,
        inner: Agent,
        plans: Plans,
        clock: Any,
        *,
        llm_fallback: bool = False,
    ) -> None:
        """`llm_fallback`: words the rules cannot plan go to the inner agent (an LLM may take them)."""
        self._llm_fallback = llm_fallback
        self._inner = inner
        self._plans = plans
        self._engine = plans.engine
        self._planner = plans.planner
        self._clock = clock
        self._words = plans.words
        self._asked: str | None = None  # the plan whose read-back was the last thing said

    def _read_back(self, plan: ExecutionPlan) -> str:
        return self._words.read_back(plan, self._clock())

    async def reply(
        self, turn: int, text: str, context: TurnContext = NO_CONTEXT
    ) -> AsyncGenerator[str, None]:
        handled = await self._handle(turn, _clean(text), text)
        if isinstance(handled, str):
            yield handled
            return
        if handled is None:
            async with aclosing(self._inner.reply(turn, text, context)) as pieces:
                async for piece in pieces:
                    yield piece
            return
        said = " ".join(part for part in (context.say, handled.said) if part)  # the brain's word first
        if not (context.confirm and handled.sent and self._plans.actions is not None):
            yield f"{said} {handled.then}".strip()
            return
        yield f"{said}\n"  # a finished sentence: it plays while the devices report
        reported = await confirmations(turn, self._plans.actions, handled.sent)
        yield f"{reported} {handled.then}".strip()

    async def _handle(self, turn: int, words: str, text: str) -> str | DoneNow | None:
        asked, self._asked = self._asked, None  # any turn but an answer leaves the question behind
        waiting = await self._engine.waiting()
        if waiting is not None:
            answer = await self._answer(waiting, words, text, asked)
            if answer is not None:
                return answer
        if LIST.search(words):
            return await self._list()
        if (cancelled := await self._cancel(words)) is not None:
            return cancelled
        if not self._planner.candidate(words):
            return None
        try:
            plan = await self._plans.make(text)
        except PlanRefused as exc:
            return None if self._llm_fallback and not exc.understood else str(exc)
        if self._planner.risky(plan) or self._plans.actions is None:  # all of it waits for a yes
            return await self._ask(text, plan)
        parts = split(plan, self._words)
        if not parts.now.steps:
            return await self._ask(text, parts.later)
        done = await run_now(turn, parts.now, self._plans.actions, self._words)
        if done.said == NO_BROKER_REPLY:
            return f"{done.said} {say('plans_none')}" if parts.later.steps else done.said
        later = await self._ask(text, parts.later) if parts.later.steps else ""
        return DoneNow(done.said, done.sent, later)

    async def _ask(self, text: str, plan: ExecutionPlan) -> str:
        """The plan read back, waiting for its yes."""
        task = await self._engine.create(text, plan, needs_confirmation=True)
        self._asked = str(task["id"])
        return self._read_back(plan)

    async def _answer(self, waiting: Any, words: str, text: str, asked: str | None) -> str | None:
        task_id = str(waiting["task_id"])
        plan = ExecutionPlan.model_validate(waiting["execution_plan"])
        if task_id != asked and (is_yes(words) or is_no(words)) and not CANCEL.match(words):
            # other turns came between the read-back and this yes or no: ask again, do not guess
            self._asked = task_id
            return say("plan_to_be_sure", read_back=self._read_back(plan))
        change = WITHOUT.search(words)
        if change is not None and not NO.fullmatch(words) and not PLAIN_NO.match(words):
            smaller = without(plan, change["what"])
            if len(smaller.steps) == len(plan.steps) and task_id != asked:
                return None  # "lights off except the bedroom", turns after the read-back: not about the plan
            self._asked = task_id
            if len(smaller.steps) == len(plan.steps):
                return say("plan_not_in", what=change["what"], read_back=self._read_back(plan))
            if not smaller.steps:
                await self._engine.confirm(task_id, False, notes=text)
                return say("plan_left_nothing")
            await self._engine.confirm(task_id, False, notes=text, plan=smaller)
            return say("plan_smaller", read_back=self._read_back(smaller))
        if is_yes(words):
            await self._engine.confirm(task_id, True, notes=text)
            return say("plan_going_ahead")
        if is_no(words):
            await self._engine.confirm(task_id, False, notes=text)
            return say("plan_refused", name=plan.name)
        return None

    async def _list(self) -> str:
        active = await self._engine.active()
        if not active:
            return say("plans_none")
        now = self._clock()
        lines = [self._words.planned(view, now) for view in active[-5:]]
        return say("plans_listed", count=len(active), plans=" ".join(lines))

    async def _cancel(self, words: str) -> str | None:
        active = await self._engine.active()
        chosen: dict[str, Any] | None = None
        m = CANCEL.match(words)
        if NEVER_MIND.match(words) and active:
            chosen = active[-1]
        elif m is not None:
            chosen = _named(m["what"].strip(), list(reversed(active)))
        if chosen is not None:
            await self._engine.cancel(str(chosen["id"]), "cancelled by voice")
            return say("plan_cancelled", name=_called(chosen))
        if m is None:
            return None
        # nothing going on by that name: one that has finished, or none at all, is said plainly ("cancel
        # the music" names no plan, and is the main agent's)
        what = m["what"].strip()
        if what not in PLAN_NOUNS and what in PLAN_WORDS:
            return None
        ended = _named(what, list(reversed(await self._engine.views())), by_steps=False)
        if ended is not None:
            return say("plan_already", name=_called(ended), status=status_words(str(ended["status"])))
        return say("plan_none_to_cancel") if what in PLAN_NOUNS else None

    def spoken(self, turn: int, text: str, *, interrupted: bool) -> None:
        self._inner.spoken(turn, text, interrupted=interrupted)

    def understood(self, turn: int) -> bool:
        return self._inner.understood(turn)

    async def aclose(self) -> None:
        await self._inner.aclose()
