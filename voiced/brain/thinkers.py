"""Who thinks about each turn: the analyst, the judge and the summary, behind protocols (the rules,
or a model: llm_thinkers.py), and the rules alone to fall back on."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Protocol

from voiced.brain.analyst import Flag
from voiced.brain.judge import Notice
from voiced.brain.state import ConversationState, TurnRecord


class Analyst(Protocol):
    async def analyse(
        self, state: ConversationState, record: TurnRecord
    ) -> tuple[ConversationState, list[Flag]]: ...


class Judge(Protocol):
    async def judge(self, state: ConversationState, flags: list[Flag]) -> Notice | None: ...

    async def approve(self, state: ConversationState) -> str | None: ...


class Summary(Protocol):
    async def summarize(self, state: ConversationState) -> ConversationState: ...


@dataclass(frozen=True)
class Thinkers:
    analyst: Analyst
    judge: Judge
    summary: Summary
    close: Callable[[], Coroutine[Any, Any, None]] | None = None  # releases the model client
    # The rules alone: they keep a turn's bookkeeping when the model's analysis of it is given up.
    fallback: Thinkers | None = None
