"""Choosing the agent: local intents, the LLM, or both; every LLM failure still ends in speech."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import TYPE_CHECKING

from voiced.bus import EventBus
from voiced.config import Config
from voiced.devices.actions import DeviceActions
from voiced.devices.registry import DeviceRegistry
from voiced.language.replies import say
from voiced.mouth.agent import NO_CONTEXT, Agent, TurnContext
from voiced.mouth.intents import LocalIntentAgent
from voiced.mouth.llm_errors import LlmUnavailable
from voiced.mouth.local_agent import LocalAgent, act, confirmations, mentions
from voiced.mouth.scene_undo import SceneUndo
from voiced.mouth.vibe_control import VibeControl

if TYPE_CHECKING:
    import openai

    from voiced.mouth.llm import LlmAgent

_LOGGER = logging.getLogger(__name__)

UNAVAILABLE_APOLOGY = say("llm_unavailable")
LOST_THREAD_APOLOGY = " " + say("llm_lost_thread")  # after what was said already


async def with_apology(pieces: AsyncGenerator[str, None]) -> AsyncGenerator[str, None]:
    """Pass the pieces through; if the LLM fails, end with a short apology instead of silence."""
    said = False
    async with aclosing(pieces):  # closing this generator closes the LLM stream at once
        try:
            async for piece in pieces:
                said = said or bool(piece.strip())
                yield piece
        except LlmUnavailable:
            yield LOST_THREAD_APOLOGY if said else UNAVAILABLE_APOLOGY


def _news(vibe: VibeControl | None) -> list[str]:
    return [message.for_model() for message in vibe.poll_messages()] if vibe is not None else []


class ApologizingAgent:
    """The LLM alone (agent.kind: llm), apologizing when it fails."""

    def __init__(self, llm: LlmAgent, vibe: VibeControl | None = None) -> None:
        self._llm = llm
        self._vibe = vibe

    def reply(self, turn: int, text: str, context: TurnContext = NO_CONTEXT) -> AsyncGenerator[str, None]:
        return with_apology(self._llm.reply(turn, text, _news(self._vibe), context.for_model))

    def spoken(self, turn: int, text: str, *, interrupted: bool) -> None:
        self._llm.spoken(turn, text, interrupted=interrupted)

    def understood(self, turn: int) -> bool:
        return True  # the model answers everything, if only with an apology

    async def aclose(self) -> None:
        if self._vibe is not None:
            await self._vibe.aclose()
        await self._llm.aclose()


class HybridAgent:
    """Local intents answer what they understand at once; the LLM gets everything else."""

    def __init__(
        self,
        local: LocalIntentAgent,
        llm: LlmAgent,
        actions: DeviceActions,
        vibe: VibeControl | None = None,
    ) -> None:
        self._local = local
        self._llm = llm
        self._actions = actions
        self._vibe = vibe
        self._undo = SceneUndo(actions)  # "never mind" right after a scene takes it back

    async def reply(
        self, turn: int, text: str, context: TurnContext = NO_CONTEXT
    ) -> AsyncGenerator[str, None]:
        messages = self._vibe.poll_messages() if self._vibe is not None else []
        news = [message.for_model() for message in messages]
        just_set = self._undo.turn_begins()
        understood = await self._local.understand_fresh(
            text, self._actions.refresh, context.doubtful, context.alternatives, heard=context.heard
        )
        if understood.understood:
            done = await act(turn, understood, self._actions, self._vibe, self._undo, just_set)
            said = " ".join(part for part in (context.say, mentions(messages), done.said) if part)
            self._llm.remember(turn, text, said, news)
            if not (context.confirm and done.sent):
                yield said
                return
            yield f"{said}\n"  # a finished sentence: it plays while the devices report
            confirmed = await confirmations(turn, self._actions, done.sent)
            self._llm.revise(turn, f"{said} {confirmed}")
            yield confirmed
            return
        _LOGGER.info("turn %d: not a local intent, asking the LLM", turn)
        llm_reply = self._llm.reply(turn, text, news, context.for_model)
        async with aclosing(with_apology(llm_reply)) as pieces:
            async for piece in pieces:
                yield piece

    def spoken(self, turn: int, text: str, *, interrupted: bool) -> None:
        self._llm.spoken(turn, text, interrupted=interrupted)

    def understood(self, turn: int) -> bool:
        return True  # the model answers everything, if only with an apology

    async def aclose(self) -> None:
        if self._vibe is not None:
            await self._vibe.aclose()
        await self._llm.aclose()


def build_agent(
    config: Config,
    registry: DeviceRegistry,
    actions: DeviceActions,
    intents: LocalIntentAgent,
    *,
    vibe: VibeControl | None = None,
    bus: EventBus | None = None,
    client: openai.AsyncOpenAI | None = None,
) -> Agent:
    """The agent `config.agent_kind` asks for: "local", "llm" or "hybrid"."""
    kind = config.agent_kind
    if kind == "local":
        return LocalAgent(intents, actions, vibe)
    from voiced.mouth.llm import LlmAgent  # the client's library only where a model is configured

    llm = LlmAgent(config.llm, registry, actions, vibe=vibe, bus=bus, client=client)
    _LOGGER.info("agent: %s, model %s at %s", kind, config.llm.model, config.llm.base_url)
    if kind == "llm":
        return ApologizingAgent(llm, vibe)
    return HybridAgent(intents, llm, actions, vibe)
