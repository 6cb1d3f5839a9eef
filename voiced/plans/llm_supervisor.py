"""The supervisor on the LLM (seed 003): after each step the model decides, as validated JSON.

The rules decide first (voiced/plans/supervisor.py); the model is then asked, with the step, its
outcome, the tries, what is left of the plan, the decisions allowed and the rules' own. Its answer
must be one JSON object `{"decision": ..., "reason": ...}` with a decision among those allowed
(never a second retry, no retry of a missed step, nothing but continue / end after a done step).
Anything else (not JSON, an unknown or disallowed decision, no answer within the timeout, an
endpoint that fails) is not taken: the rules' decision stands, and why is logged and kept with it.
The model only chooses among these four words: what a retry sends is the step already checked.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import openai
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from voiced.devices.tools import excerpt
from voiced.plans.model import Decision
from voiced.plans.supervisor import MAX_TRIES, StepOutcome, Verdict, allowed, decide
from voiced.safe_text import clean

_LOGGER = logging.getLogger(__name__)


class SupervisorAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    decision: Decision = Field(description="continue, retry, skip or end")
    reason: str = Field(min_length=1, max_length=300, description="why, in a short sentence")


PROMPT = (
    "You supervise a smart-home plan while it runs. After each step decide what happens next: "
    "continue (the step is done, go on), retry (send the same step once more), skip (give the step up "
    "and go on with the rest), end (stop the plan: the steps left are not run). Choose only among "
    "`allowed`; `rules` is what the fixed rules would do. Answer with one JSON object only, matching "
    f"this JSON schema: {json.dumps(SupervisorAnswer.model_json_schema())}"
)


class LlmSupervisor:
    def __init__(self, client: openai.AsyncOpenAI, *, model: str, timeout_s: float) -> None:
        self._client = client
        self._model = model
        self._timeout_s = timeout_s

    async def __call__(self, outcome: StepOutcome, tries: int, context: dict[str, Any]) -> Verdict:
        rules = decide(outcome, tries)
        choices = allowed(outcome, tries)
        payload = {
            **context,
            "outcome": {
                "done": outcome.ok,
                "detail": outcome.detail,
                "offline": outcome.offline,
                "missed": outcome.missed,
            },
            "tries": tries,
            "max_tries": MAX_TRIES,
            "allowed": list(choices),
            "rules": {"decision": rules.decision, "reason": rules.reason},
        }
        why = await self._ask(payload, choices)
        if isinstance(why, SupervisorAnswer):
            return Verdict(why.decision, why.reason, by="llm")
        _LOGGER.warning(
            "plan supervisor: the LLM's decision was not taken (%s); by rules: %s", why, rules.decision
        )
        return Verdict(rules.decision, rules.reason, by="rules", fallback=why)

    async def _ask(self, payload: dict[str, Any], choices: tuple[Decision, ...]) -> SupervisorAnswer | str:
        """The model's valid answer, or why there is none."""
        try:
            async with asyncio.timeout(self._timeout_s):
                response = await self._client.chat.completions.create(
                    model=self._model,
                    messages=[
                        {"role": "system", "content": PROMPT},
                        {"role": "user", "content": json.dumps(payload, default=str)},
                    ],
                    response_format={"type": "json_object"},
                )
        except TimeoutError:
            return f"no answer within {self._timeout_s:g} s"
        except openai.OpenAIError as exc:
            return f"the LLM failed ({type(exc).__name__}: {excerpt(str(exc))})"
        if not response.choices:
            return "the response has no choices"
        content = clean(response.choices[0].message.content or "", keep_breaks=True)
        try:
            answer = SupervisorAnswer.model_validate_json(content)
        except ValidationError as exc:
            problem = exc.errors()[0]
            place = ".".join(str(part) for part in problem["loc"]) or "answer"
            return f"invalid answer: {place}: {problem['msg']} (got {excerpt(content)})"
        if answer.decision not in choices:
            return f"{answer.decision!r} is not allowed here (allowed: {', '.join(choices)})"
        return answer
