"""Builds the vibe agent from config: presets always, the LLM planner when an endpoint is set."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from voiced.bus import EventBus
from voiced.config import Config
from voiced.devices.actions import DeviceActions
from voiced.devices.registry import DeviceRegistry
from voiced.llm_client import borrow, open_client
from voiced.vibe.manager import Planner, PresetOnly, VibeTaskManager
from voiced.vibe.presets import PresetPlanner
from voiced.vibe.runner import Narrate, PlanRunner

if TYPE_CHECKING:
    import openai


def load_presets(config: Config, registry: DeviceRegistry) -> PresetPlanner:
    """Raises ConfigError naming the preset file, preset and step that is wrong."""
    return PresetPlanner(config.vibe.presets_file, registry, config.vibe.default_preset)


def build_vibe(
    config: Config,
    registry: DeviceRegistry,
    actions: DeviceActions,
    bus: EventBus,
    *,
    narrate: Narrate | None = None,
    client: openai.AsyncOpenAI | None = None,
    checkpoint: Path | None = None,
) -> VibeTaskManager:
    """`checkpoint`: the SQLite file that keeps scenes across restarts (None: in memory); the
    manager's `open` opens it and resumes the scene a restart cut off."""
    presets = load_presets(config, registry)
    planner: Planner = PresetOnly(presets)
    if config.llm.base_url is not None or client is not None:
        timeout_s = config.vibe.plan_timeout_s
        from voiced.vibe.llm_planner import LlmPlanner  # the client's library: only with a model

        planner = LlmPlanner(
            config.llm,
            config.vibe,
            registry,
            presets,
            open_client(config.llm, timeout_s) if client is None else borrow(client, config.llm, timeout_s),
            owns_client=client is None,
        )
    runner = PlanRunner(
        registry,
        actions,
        bus,
        config.vibe,
        ack_timeout_s=config.mqtt.ack_timeout_s,
        narrate=narrate,
        checkpoint=checkpoint,
        keep_days=config.plans.keep_days,
        keep_finished=config.plans.keep_finished,
    )
    return VibeTaskManager(
        planner=planner, presets=presets, runner=runner, bus=bus, config=config.vibe, narrate=narrate
    )
