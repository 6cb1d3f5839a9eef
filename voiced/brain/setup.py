"""Builds the brain from config: offline thinkers always, the LLM ones when an endpoint is set."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from voiced.brain.analyst import OfflineAnalyst, interview_slots
from voiced.brain.architect import Architect
from voiced.brain.brain import Brain
from voiced.brain.delivery import Say
from voiced.brain.judge import OfflineJudge
from voiced.brain.state import ConversationState
from voiced.brain.store import StateStore
from voiced.brain.summary import OfflineSummary
from voiced.brain.thinkers import Thinkers
from voiced.bus import EventBus
from voiced.config import Config
from voiced.devices.registry import DeviceRegistry
from voiced.devices.vocabulary import HomeVocabulary
from voiced.errors import ConfigError
from voiced.supervision import Supervision
from voiced.vibe.manager import VibeTaskManager
from voiced.vibe.presets import PresetPlanner

if TYPE_CHECKING:
    import openai

_LOGGER = logging.getLogger(__name__)


def home_slots(registry: DeviceRegistry) -> tuple[str, ...]:
    """What the set-up interview asks about in this home: nothing of a kind of device it lacks."""
    return interview_slots({device.kind for device in registry})


def offline_thinkers(config: Config, registry: DeviceRegistry) -> Thinkers:
    brain = config.brain
    slots = home_slots(registry)
    return Thinkers(
        analyst=OfflineAnalyst(
            HomeVocabulary.of(registry), max_turns=brain.keep_turns + brain.summary_every, slots=slots
        ),
        judge=OfflineJudge(slots=slots, registry=registry),
        summary=OfflineSummary(brain.keep_turns, brain.memory_lines),
    )


def build_brain(
    config: Config,
    registry: DeviceRegistry,
    bus: EventBus,
    *,
    vibe: VibeTaskManager | None = None,
    say: Say | None = None,
    client: openai.AsyncOpenAI | None = None,
    supervision: Supervision | None = None,
) -> Brain:
    """The brain; with `vibe`, the architect's scenes (written now or in an earlier run) drive it."""
    store = StateStore(config.brain.state_file)
    state = store.open_session(new=config.brain.new_session)
    thinkers = offline_thinkers(config, registry)
    if config.brain.use_llm and (config.llm.base_url is not None or client is not None):
        from voiced.brain.llm_thinkers import llm_thinkers

        thinkers = llm_thinkers(config, thinkers, client)
    architect = Architect(registry, config.brain.state_file.parent)
    deliver = None
    if vibe is not None:
        if state.scenes_file and config.vibe.presets_file is None and Path(state.scenes_file).is_file():
            try:
                vibe.use_presets(PresetPlanner(Path(state.scenes_file), registry, "relax"))
            except ConfigError as exc:  # devices changed since: the built-in scenes stand in
                _LOGGER.warning("brain: the architect's scenes no longer fit this home: %s", exc)

        def deliver(state: ConversationState) -> tuple[str, str]:
            presets, summary = architect.write(state)
            vibe.use_presets(presets)
            return str(architect.path), summary

    return Brain(
        store=store,
        state=state,
        thinkers=thinkers,
        bus=bus,
        config=config.brain,
        architect=deliver,
        say=say,
        supervision=supervision,
        slots=home_slots(registry),
    )
