"""Builds the plan engine and the rule planner from config (voiced/app.py wires them in)."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from voiced.bus import EventBus
from voiced.config import Config
from voiced.devices.actions import DeviceActions
from voiced.devices.registry import DeviceRegistry
from voiced.llm_client import borrow
from voiced.mouth.intents import LocalIntentAgent
from voiced.plans.engine import PlanEngine, Say
from voiced.plans.ledger import Ledger
from voiced.plans.model import ExecutionPlan
from voiced.plans.rules import RulePlanner
from voiced.plans.steps import DeviceSteps
from voiced.plans.supervisor import Supervisor, by_rules
from voiced.plans.words import PlanWords

if TYPE_CHECKING:
    import openai

    from voiced.plans.llm_planner import LlmPlanner

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class Plans:
    engine: PlanEngine
    planner: RulePlanner
    llm: LlmPlanner | None = None
    actions: DeviceActions | None = None  # what a plan's steps for now are sent through, in their turn
    words: PlanWords = field(default_factory=PlanWords)

    async def make(self, text: str) -> ExecutionPlan:
        """The LLM's plan when one is configured and it gives a valid one; else the rules' (PlanRefused)."""
        if self.llm is not None:
            from voiced.plans.llm_planner import LlmPlanFailed  # loaded with the client's library

            try:
                return await self.llm.plan(text)
            except LlmPlanFailed as exc:
                _LOGGER.warning("LLM planner: %s; planning by rules", exc)
        return self.planner.plan(text)

    def in_room(self, intents: LocalIntentAgent, actions: DeviceActions) -> Plans:
        """The same engine and LLM planner for a satellite's room: its understanding (its *here*) plans
        the steps, and the steps for now are sent naming its room."""
        return replace(self, planner=self.planner.understood_by(intents), actions=actions)


def build_plans(
    config: Config,
    registry: DeviceRegistry,
    actions: DeviceActions,
    bus: EventBus,
    intents: LocalIntentAgent,
    *,
    say: Say | None = None,
    client: openai.AsyncOpenAI | None = None,
) -> Plans:
    path = config.plans.checkpoint_file or config.brain.state_file.with_name("voiced-plans.sqlite")
    path.parent.mkdir(parents=True, exist_ok=True)

    def steps(ledger: Ledger) -> DeviceSteps:
        return DeviceSteps(
            actions,
            ledger,
            ack_timeout_s=config.mqtt.ack_timeout_s,
            confirm_timeout_s=config.vibe.confirm_timeout_s,
        )

    supervisor: Supervisor = by_rules
    if client is not None and config.plans.llm_supervisor:
        from voiced.plans.llm_supervisor import LlmSupervisor  # the client's library: only with a model

        timeout = config.plans.supervisor_timeout_s
        supervisor = LlmSupervisor(
            borrow(client, config.llm, timeout),
            model=config.vibe.planner_model or config.llm.model,
            timeout_s=timeout,
        )
    words = PlanWords.of(registry)
    engine = PlanEngine(config.plans, path, bus, steps, say=say, supervisor=supervisor, words=words)
    planner = RulePlanner(
        registry, intents, confirm_over_steps=config.plans.confirm_over_steps, states=actions.state_of
    )
    llm = None
    if client is not None:
        from voiced.plans.llm_planner import LlmPlanner

        timeout_s = config.vibe.plan_timeout_s
        llm = LlmPlanner(
            registry,
            borrow(client, config.llm, timeout_s),
            model=config.vibe.planner_model or config.llm.model,
            timeout_s=timeout_s,
            clock=time.time,
        )
    return Plans(engine, planner, llm, actions, words)
