"""Analyst, judge and summary on the LLM, with structured outputs validated by pydantic.

The rules (offline thinkers) always run first: they are cheap and keep the bookkeeping. The model
then refines the analysis; output that is not valid JSON for the schema is not applied (the rules'
result stands), the cause is logged, and the next turn tries again with the same recent turns.
"""

from __future__ import annotations

import json
import logging
from typing import Any, TypeVar

import openai
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from voiced.brain.analyst import MAX_PAIN_POINTS, Flag
from voiced.brain.judge import Notice, offline_device, wants_confirmation
from voiced.brain.state import ConversationState, PainPoint, Preferences, Status, TurnRecord, UserProfile
from voiced.brain.thinkers import Thinkers
from voiced.config import Config
from voiced.llm_client import borrow, open_client
from voiced.safe_text import clean

_LOGGER = logging.getLogger(__name__)
_M = TypeVar("_M", bound=BaseModel)


class AnalystUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    preferences: Preferences | None = None
    user_profile: UserProfile | None = None
    constraints: list[str] | None = None
    completeness_score: int | None = Field(None, ge=0, le=100)
    status: Status | None = None
    new_pain_points: list[PainPoint] = []
    risk: str | None = Field(None, description="what the next reply must watch out for, if anything")


class JudgeVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    notice: str = Field(min_length=1, max_length=600)
    say: str | None = Field(None, max_length=300)


class SummaryOut(BaseModel):
    model_config = ConfigDict(extra="forbid")

    compressed_memory: str = Field(max_length=6000)


def _prompt(role: str, schema: type[BaseModel]) -> str:
    return (
        f"You are the {role} of a smart-home voice assistant's background brain. Answer with one JSON "
        f"object only, matching this JSON schema: {json.dumps(schema.model_json_schema())}"
    )


class _Asker:
    def __init__(self, client: openai.AsyncOpenAI, model: str, timeout_s: float) -> None:
        self._client = client
        self._model = model
        self._timeout_s = timeout_s

    async def ask(self, role: str, schema: type[_M], payload: dict[str, Any]) -> _M | None:
        try:
            response = await self._client.chat.completions.create(
                model=self._model,
                messages=[
                    {"role": "system", "content": _prompt(role, schema)},
                    {"role": "user", "content": json.dumps(payload, default=str)},
                ],
                response_format={"type": "json_object"},
                timeout=self._timeout_s,
            )
            content = clean(response.choices[0].message.content or "", keep_breaks=True)
            return schema.model_validate_json(content)
        except ValidationError as exc:
            _LOGGER.warning("brain %s: invalid output, not applied: %s", role, exc.errors()[:3])
        except (openai.OpenAIError, ValueError, IndexError) as exc:
            _LOGGER.warning(
                "brain %s: the model failed (%s: %s); the rules' result stands", role, type(exc).__name__, exc
            )
        return None


_ORDER = ("Profiling", "DeepDive", "Solutioning", "Completed")


def _moves_forward(current: str, proposed: str) -> bool:
    """The model may move an interview on, never start or rewind one."""
    return current in _ORDER and proposed in _ORDER and _ORDER.index(proposed) > _ORDER.index(current)


class LlmAnalyst:
    def __init__(self, asker: _Asker, rules: Any) -> None:
        self._asker = asker
        self._rules = rules

    async def analyse(
        self, state: ConversationState, record: TurnRecord
    ) -> tuple[ConversationState, list[Flag]]:
        updated, flags = await self._rules.analyse(state, record)
        payload = {
            "state": updated.model_dump(mode="json", exclude={"recent_turns"}),
            "turn": record.model_dump(mode="json"),
        }
        answer = await self._asker.ask("analyst", AnalystUpdate, payload)
        if answer is None:
            return updated, flags
        # Merged field by field: what the model leaves out, the rules' analysis keeps.
        fields: dict[str, Any] = {}
        if answer.preferences is not None:
            given = answer.preferences.model_dump(exclude_unset=True)
            fields["preferences"] = Preferences.model_validate({**updated.preferences.model_dump(), **given})
        if answer.user_profile is not None:
            given = answer.user_profile.model_dump(exclude_unset=True)
            fields["user_profile"] = UserProfile.model_validate(
                {**updated.user_profile.model_dump(), **given}
            )
        if answer.constraints is not None:
            fields["constraints"] = answer.constraints
        if answer.completeness_score is not None:
            fields["completeness_score"] = answer.completeness_score
        if answer.status is not None and _moves_forward(updated.status, answer.status):
            fields["status"] = answer.status
        pains = [*updated.pain_points, *answer.new_pain_points][-MAX_PAIN_POINTS:]
        updated = updated.model_copy(update={**fields, "pain_points": pains})
        if answer.risk:
            flags = [*flags, Flag("risk", answer.risk)]
        return updated, flags


class LlmJudge:
    def __init__(self, asker: _Asker, rules: Any) -> None:
        self._asker = asker
        self._rules = rules

    async def judge(self, state: ConversationState, flags: list[Flag]) -> Notice | None:
        payload = {
            "state": state.model_dump(mode="json", exclude={"recent_turns", "compressed_memory"}),
            "flags": [{"kind": f.kind, "detail": f.detail} for f in flags],
        }
        verdict = await self._asker.ask("judge", JudgeVerdict, payload)
        if verdict is None:
            return await self._rules.judge(state, flags)
        return Notice(
            verdict.notice, verdict.say, confirm=wants_confirmation(flags), device=offline_device(flags)
        )

    async def approve(self, state: ConversationState) -> str | None:
        return await self._rules.approve(state)  # a checklist: the rules are enough


class LlmSummary:
    def __init__(self, asker: _Asker, rules: Any, keep_turns: int) -> None:
        self._asker = asker
        self._rules = rules
        self._keep = keep_turns

    async def summarize(self, state: ConversationState) -> ConversationState:
        older = state.recent_turns[: -self._keep]
        if not older:
            return state
        payload = {
            "memory_so_far": state.compressed_memory,
            "turns": [t.model_dump(mode="json") for t in older],
        }
        out = await self._asker.ask("summary", SummaryOut, payload)
        if out is None:
            return await self._rules.summarize(state)
        return state.model_copy(
            update={
                "compressed_memory": out.compressed_memory,
                "recent_turns": state.recent_turns[-self._keep :],
            }
        )


def llm_thinkers(config: Config, rules: Thinkers, client: openai.AsyncOpenAI | None) -> Thinkers:
    owned = client is None
    timeout_s = config.brain.timeout_s
    client = open_client(config.llm, timeout_s) if client is None else borrow(client, config.llm, timeout_s)
    asker = _Asker(client, config.brain.model or config.llm.model, config.brain.timeout_s)
    return Thinkers(
        analyst=LlmAnalyst(asker, rules.analyst),
        judge=LlmJudge(asker, rules.judge),
        summary=LlmSummary(asker, rules.summary, config.brain.keep_turns),
        close=client.close if owned else None,
        fallback=rules,
    )
