"""VibeTaskManager (seed 001): one scene at a time, in the background, results queued for the next turn.

`start` returns at once with the task running; a new request cancels the running one first, and
`cancel` awaits the task, so no command of a cancelled scene is published after its VibeCancelled
event. Results wait in a queue as Success, Failed or Cancelled; a failure is also said aloud as soon
as the conversation allows, so the user is not left without word.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import Protocol

from voiced.bus import EventBus
from voiced.events import VibeCancelled, VibeComplete, VibeError, VibeStarted
from voiced.tasks import STOP_TIMEOUT_S, cancel_and_wait
from voiced.vibe.messages import Cancelled, Failed, StepOutcome, Success, VibeMessage
from voiced.vibe.plan import VibePlan
from voiced.vibe.presets import PresetPlanner
from voiced.vibe.runner import Narrate, PlanRunner

_LOGGER = logging.getLogger(__name__)


class Planner(Protocol):
    async def plan(self, request: str) -> VibePlan: ...

    def use_presets(self, presets: PresetPlanner) -> None: ...

    async def aclose(self) -> None: ...


class PresetOnly:
    def __init__(self, presets: PresetPlanner) -> None:
        self._presets = presets

    async def plan(self, request: str) -> VibePlan:
        return self._presets.plan(request)

    def use_presets(self, presets: PresetPlanner) -> None:
        self._presets = presets

    async def aclose(self) -> None:
        return None


class VibeTaskManager:
    def __init__(
        self,
        *,
        planner: Planner,
        presets: PresetPlanner,
        runner: PlanRunner,
        bus: EventBus,
        narrate: Narrate | None = None,
    ) -> None:
        self._planner = planner
        self._presets = presets
        self._runner = runner
        self._bus = bus
        self._narrate = narrate
        self._count = 0
        self._current: tuple[str, str, asyncio.Task[None]] | None = None
        self._messages: list[VibeMessage] = []

    @property
    def running(self) -> str | None:
        """The running task's id, if any."""
        if self._current is None or self._current[2].done():
            return None
        return self._current[0]

    def use_presets(self, presets: PresetPlanner) -> None:
        """New scenes (the architect's): the next request plans with them."""
        self._presets = presets
        self._planner.use_presets(presets)

    def acknowledgement(self, request: str) -> str:
        """What the local path says while the scene is set up: the matching preset's own line."""
        name, _note = self._presets.choose(request)
        return self._presets.reply(name) or "Setting the mood."

    async def start(self, request: str, turn: int) -> str:
        replaced = await self.cancel(f"replaced by a new scene: {request!r}") if self.running else ""
        self._count += 1
        task_id = f"vibe-{self._count}"
        task = asyncio.create_task(self._run(task_id, turn, request), name=task_id)
        self._current = (task_id, request, task)
        self._bus.publish(VibeStarted(task_id=task_id, turn=turn, request=request))
        _LOGGER.info("%s: started for %r (turn %d)", task_id, request, turn)
        started = f"scene {task_id} for {request!r} is being set up in the background"
        return f"{replaced}; {started}" if replaced else started

    async def cancel(self, reason: str) -> str:
        if self._current is None or self._current[2].done():
            return "no scene was running"
        task_id, request, task = self._current
        await cancel_and_wait([task])
        self._bus.publish(VibeCancelled(task_id=task_id, reason=reason))
        self._messages.append(Cancelled(task_id, request, reason=reason))
        _LOGGER.info("%s: cancelled (%s)", task_id, reason)
        return f"cancelled scene {task_id}"

    def poll_messages(self) -> list[VibeMessage]:
        """The results since the last poll, oldest first (seed 001's pollMessages)."""
        messages, self._messages = self._messages, []
        return messages

    async def aclose(self, finish_s: float = STOP_TIMEOUT_S) -> None:
        """Let a running scene finish (at most `finish_s`), so a last "good night" still happens."""
        if self._current is not None and not self._current[2].done():
            await asyncio.wait([self._current[2]], timeout=finish_s)
        if self.running:
            await self.cancel("the daemon is stopping")
        await self._planner.aclose()

    async def _run(self, task_id: str, turn: int, request: str) -> None:
        plan: VibePlan | None = None
        try:
            plan = await self._planner.plan(request)
            outcomes = await self._runner.run(task_id, turn, plan)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            _LOGGER.exception("%s failed", task_id)
            await self._failed(task_id, turn, request, f"the scene could not be set up ({exc})", ())
            return
        failures = [o for o in outcomes if not o.ok]
        if failures:
            error = "; ".join(o.detail for o in failures)
            await self._failed(task_id, turn, request, error, outcomes)
            return
        self._bus.publish(VibeComplete(task_id=task_id, plan=plan.to_dict()))
        self._messages.append(Success(task_id, request, plan=plan, steps=outcomes))
        _LOGGER.info("%s: complete (%s, %d steps)", task_id, plan.name, len(outcomes))

    async def _failed(
        self, task_id: str, turn: int, request: str, error: str, outcomes: tuple[StepOutcome, ...]
    ) -> None:
        self._bus.publish(VibeError(task_id=task_id, error=error))
        _LOGGER.warning("%s: %s", task_id, error)
        message = Failed(task_id, request, error=error, steps=outcomes)
        self._messages.append(message)  # queued first: a cancellation during the narration loses nothing
        if (
            self._narrate is not None
            and await self._narrate(message.spoken(), turn, lambda: message in self._messages)
            and message in self._messages
        ):
            self._messages[self._messages.index(message)] = replace(message, told=True)
