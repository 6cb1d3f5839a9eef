"""VibeTaskManager (seed 001): one scene at a time, in the background, results queued for the next turn.

`start` returns at once with the task running; a new request cancels the running one first, and
`cancel` awaits the task, so no command of a cancelled scene is published after its VibeCancelled
event. Results wait in a queue as Success, Failed or Cancelled; a failure is also said aloud as soon
as the conversation allows, so the user is not left without word.

Each scene is indexed in the runner's ledger as it starts (its request, then its plan) and marked
finished once it completed, failed, was cancelled or replaced. `open` resumes the newest scene not
finished (one cut off by kill -9, or by the daemon stopping) if it began less than
`vibe.resume_within_s` ago; older ones are reported dropped (VibeDropped) and never run.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Protocol

from voiced.bus import EventBus
from voiced.config import VibeConfig
from voiced.events import VibeCancelled, VibeComplete, VibeDropped, VibeError, VibeResumed, VibeStarted
from voiced.language.replies import say
from voiced.tasks import STOP_TIMEOUT_S, cancel_and_wait
from voiced.vibe.messages import Cancelled, Failed, StepOutcome, Success, VibeMessage
from voiced.vibe.plan import VibePlan
from voiced.vibe.presets import PresetPlanner
from voiced.vibe.runner import Narrate, PlanRunner, device_steps_left

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
        config: VibeConfig,
        narrate: Narrate | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._planner = planner
        self._presets = presets
        self._runner = runner
        self._ledger = runner.ledger
        self._bus = bus
        self._config = config
        self._narrate = narrate
        self._clock = clock
        self._closed = False
        self._count = self._ledger.next_number() - 1  # ids go on from the scenes kept: a thread per scene
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
        return self._presets.reply(name) or say("setting_mood")

    async def start(self, request: str, turn: int) -> str:
        replaced = await self.cancel(f"replaced by a new scene: {request!r}") if self.running else ""
        task_id = await self._next_id()
        now = self._clock()
        initial = {"request": request, "turn": turn, "created_at": now, "plan": None}
        self._ledger.add_plan(task_id, request, now, initial)
        self._launch(task_id, request, initial)
        self._bus.publish(VibeStarted(task_id=task_id, turn=turn, request=request))
        _LOGGER.info("%s: started for %r (turn %d)", task_id, request, turn)
        started = f"scene {task_id} for {request!r} is being set up in the background"
        return f"{replaced}; {started}" if replaced else started

    async def _next_id(self) -> str:
        self._count += 1
        while await self._runner.known(f"vibe-{self._count}"):  # the ledger lost, its checkpoints not
            self._count += 1
        return f"vibe-{self._count}"

    def _launch(self, task_id: str, request: str, initial: dict[str, Any], *, resumed: bool = False) -> None:
        task = asyncio.create_task(self._run(task_id, initial, resumed), name=task_id)
        self._current = (task_id, request, task)

    async def cancel(self, reason: str) -> str:
        """Stop the running scene for good: it is not resumed after a restart."""
        return await self._stop(reason, finished=True)

    async def _stop(self, reason: str, *, finished: bool) -> str:
        if self._current is None or self._current[2].done():
            return "no scene was running"
        task_id, request, task = self._current
        await cancel_and_wait([task])
        if finished:
            self._ledger.finish(task_id)
            await self._runner.tidy(task_id)
        self._bus.publish(VibeCancelled(task_id=task_id, reason=reason))
        self._messages.append(Cancelled(task_id, request, reason=reason))
        _LOGGER.info("%s: cancelled (%s)", task_id, reason)
        return f"cancelled scene {task_id}"

    def poll_messages(self) -> list[VibeMessage]:
        """The results since the last poll, oldest first (seed 001's pollMessages)."""
        messages, self._messages = self._messages, []
        return messages

    async def open(self) -> list[str]:
        """Open the scenes' checkpoints and resume the scene a restart cut off; returns its id, if any."""
        await self._runner.open()
        *older, newest = self._ledger.plans(unfinished=True, last=1000) or [""]
        for task_id in older:
            self._drop(task_id, "a newer scene came after it")
        initial = self._ledger.initial(newest) if newest else None
        if initial is None:
            return []
        request = str(initial["request"])
        age = self._clock() - float(initial["created_at"])
        if age > self._config.resume_within_s:
            limit = f"vibe.resume_within_s is {self._config.resume_within_s:g} s"
            self._drop(newest, f"it began {age:.0f} s ago, too long ago to set now ({limit})")
            return []
        plan = VibePlan.model_validate(initial["plan"]) if initial.get("plan") else None
        left = device_steps_left(self._ledger, newest, plan) if plan is not None else []
        devices = sum(1 for step in plan.steps if step.tool != "narrate") if plan is not None else 0
        self._launch(newest, request, initial, resumed=True)
        self._bus.publish(
            VibeResumed(
                task_id=newest,
                request=request,
                steps_done=devices - len(left),
                steps_left=len(left),
                age_s=age,
            )
        )
        _LOGGER.info("%s: resumed for %r, %d device step(s) left", newest, request, len(left))
        return [newest]

    def _drop(self, task_id: str, reason: str) -> None:
        initial = self._ledger.initial(task_id) or {}
        self._ledger.finish(task_id)
        self._bus.publish(
            VibeDropped(task_id=task_id, request=str(initial.get("request", "")), reason=reason)
        )
        _LOGGER.info("%s: not resumed: %s", task_id, reason)

    async def aclose(self, finish_s: float = STOP_TIMEOUT_S) -> None:
        """Let a running scene finish (at most `finish_s`), so a last "good night" still happens.

        One still running then is stopped but kept: the next start resumes it (within
        `vibe.resume_within_s`)."""
        if self._closed:
            return
        self._closed = True
        if self._current is not None and not self._current[2].done():
            await asyncio.wait([self._current[2]], timeout=finish_s)
        if self.running:
            await self._stop("the daemon is stopping", finished=False)
        await self._planner.aclose()
        await self._runner.aclose()

    async def _run(self, task_id: str, initial: dict[str, Any], resumed: bool) -> None:
        request = str(initial["request"])
        turn = 0 if resumed else int(initial["turn"])  # a resumed scene belongs to no turn of this run
        plan: VibePlan | None = VibePlan.model_validate(initial["plan"]) if initial.get("plan") else None
        try:
            if plan is None:
                plan = await self._planner.plan(request)
                self._ledger.add_plan(
                    task_id, request, float(initial["created_at"]), {**initial, "plan": plan.to_dict()}
                )
                outcomes = await self._runner.run(task_id, turn, plan)
            else:
                outcomes = await self._runner.resume(task_id, turn, plan)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            _LOGGER.exception("%s failed", task_id)
            self._ledger.finish(task_id)
            await self._failed(task_id, turn, request, f"the scene could not be set up ({exc})", ())
            return
        self._ledger.finish(task_id)
        await self._runner.tidy(task_id)
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
