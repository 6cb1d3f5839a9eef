"""Builds the plan engine and the rule planner from config (voiced/app.py wires them in)."""

from __future__ import annotations

from dataclasses import dataclass

from voiced.bus import EventBus
from voiced.config import Config
from voiced.devices.actions import DeviceActions
from voiced.devices.registry import DeviceRegistry
from voiced.mouth.intents import LocalIntentAgent
from voiced.plans.engine import PlanEngine, Say
from voiced.plans.ledger import Ledger
from voiced.plans.rules import RulePlanner
from voiced.plans.steps import DeviceSteps


@dataclass(frozen=True)
class Plans:
    engine: PlanEngine
    planner: RulePlanner


def build_plans(
    config: Config,
    registry: DeviceRegistry,
    actions: DeviceActions,
    bus: EventBus,
    intents: LocalIntentAgent,
    *,
    say: Say | None = None,
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

    engine = PlanEngine(config.plans, path, bus, steps, say=say)
    planner = RulePlanner(registry, intents, confirm_over_steps=config.plans.confirm_over_steps)
    return Plans(engine, planner)
