"""Plans by voice: wraps the main agent, as the interview does.

- A plan waiting for its confirmation takes the next turn's "yes" / "no" / "without the music"
  (anything else goes to the main agent, and the plan keeps waiting).
- "What's planned?" lists the plans not yet finished; "cancel the movie night" / "never mind" cancels
  (with no plan going on, "never mind" is the main agent's: it stops a scene).
- Words worth planning (time words, a name before a colon, several commands) are planned; a plan
  that needs no confirmation and has no time in it is left to the main agent, which does it now.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

from voiced.mouth.agent import NO_CONTEXT, Agent, TurnContext
from voiced.plans.model import ExecutionPlan
from voiced.plans.rules import PlanRefused, without
from voiced.plans.setup import Plans
from voiced.plans.words import join_then, phrases, planned_line, read_back

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
        self._asked: str | None = None  # the plan whose read-back was the last thing said

    async def reply(
        self, turn: int, text: str, context: TurnContext = NO_CONTEXT
    ) -> AsyncGenerator[str, None]:
        words = _clean(text)
        said = await self._handle(words, text)
        if said is not None:
            yield said
            return
        async with aclosing(self._inner.reply(turn, text, context)) as pieces:
            async for piece in pieces:
                yield piece

    async def _handle(self, words: str, text: str) -> str | None:
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
        confirm = self._planner.needs_confirmation(plan)
        if not confirm:
            return None  # a few commands for now: the main agent does them as it always has
        task = await self._engine.create(text, plan, needs_confirmation=True)
        self._asked = str(task["id"])
        return read_back(plan, self._clock())

    async def _answer(self, waiting: Any, words: str, text: str, asked: str | None) -> str | None:
        task_id = str(waiting["task_id"])
        plan = ExecutionPlan.model_validate(waiting["execution_plan"])
        if task_id != asked and (is_yes(words) or is_no(words)):
            # other turns came between the read-back and this yes or no: ask again, do not guess
            self._asked = task_id
            return f"To be sure: {read_back(plan, self._clock())}"
        change = WITHOUT.search(words)
        if change is not None and not NO.fullmatch(words) and not PLAIN_NO.match(words):
            smaller = without(plan, change["what"])
            if len(smaller.steps) == len(plan.steps) and task_id != asked:
                return None  # "lights off except the bedroom", turns after the read-back: not about the plan
            self._asked = task_id
            if len(smaller.steps) == len(plan.steps):
                return f'Sorry, nothing in the plan is "{change["what"]}". {read_back(plan, self._clock())}'
            if not smaller.steps:
                await self._engine.confirm(task_id, False, notes=text)
                return "Okay, that leaves nothing to do, so I cancelled it."
            await self._engine.confirm(task_id, False, notes=text, plan=smaller)
            return f"Okay. {read_back(smaller, self._clock())}"
        if is_yes(words):
            await self._engine.confirm(task_id, True, notes=text)
            return "Okay, going ahead."
        if is_no(words):
            await self._engine.confirm(task_id, False, notes=text)
            return f"Okay, I won't. The {plan.name} is cancelled."
        return None

    async def _list(self) -> str:
        active = await self._engine.active()
        if not active:
            return "Nothing is planned."
        now = self._clock()
        lines = [planned_line(view, now) for view in active[-5:]]
        return f"{len(active)} plan{'s' if len(active) != 1 else ''}: " + "; ".join(lines) + "."

    async def _cancel(self, words: str) -> str | None:
        active = await self._engine.active()
        if not active:
            return None
        chosen: dict[str, Any] | None = None
        if NEVER_MIND.match(words):
            chosen = active[-1]
        elif (m := CANCEL.match(words)) is not None:
            what = m["what"].strip()
            for view in reversed(active):
                name = str(view["execution_plan"].get("name", ""))
                steps = " ".join(join_then(phrases(ExecutionPlan.model_validate(view["execution_plan"]), 0)))
                if (
                    what in ("plan", "plans", "it", "that")
                    or what in name
                    or (len(what) > 3 and what in steps)
                ):
                    chosen = view
                    break
        if chosen is None:
            return None
        name = chosen["execution_plan"].get("name", "plan")
        await self._engine.cancel(str(chosen["id"]), "cancelled by voice")
        return f"Okay, I cancelled the {name}."

    def spoken(self, turn: int, text: str, *, interrupted: bool) -> None:
        self._inner.spoken(turn, text, interrupted=interrupted)

    def understood(self, turn: int) -> bool:
        return self._inner.understood(turn)

    async def aclose(self) -> None:
        await self._inner.aclose()
