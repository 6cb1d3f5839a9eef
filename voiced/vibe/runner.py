"""Runs a scene's plan: each device's steps in order, different devices in parallel, every step confirmed.

The device lanes run on the plans' engine, LangGraph: one `Send` branch per device, checkpointed
(in memory: a scene is not resumed after a restart, a plan is). Cancelling the run cancels every branch.

A device step publishes through DeviceActions and then waits for the broker's PUBACK and the device's
state topic to show the requested values. A step that fails (refused, offline, unconfirmed) names the
device; the other steps still run. Narration comes last, through the mouth, never over a reply.
"""

from __future__ import annotations

import itertools
import logging
import operator
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Protocol, TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from voiced.bus import EventBus
from voiced.config import VibeConfig
from voiced.devices.actions import DeviceActions
from voiced.devices.registry import DeviceRegistry
from voiced.devices.tools import DeviceTools, ToolError
from voiced.events import VibeToolEnd, VibeToolStart
from voiced.vibe.messages import StepOutcome
from voiced.vibe.plan import VibePlan, VibeStep, check_step, step_device

_LOGGER = logging.getLogger(__name__)


class Narrate(Protocol):
    """Speaks one line for a task when the conversation allows; False if it did not."""

    def __call__(self, text: str, turn: int, wanted: Callable[[], bool] | None = None) -> Awaitable[bool]: ...


class _Lanes(TypedDict, total=False):
    branches: list[dict[str, Any]]  # one per device: its steps, in order
    done: Annotated[list[list[Any]], operator.add]  # [index, tool, target, ok, detail] per step


_RUNS = itertools.count(1)


class PlanRunner:
    def __init__(
        self,
        registry: DeviceRegistry,
        actions: DeviceActions,
        bus: EventBus,
        config: VibeConfig,
        *,
        ack_timeout_s: float,
        narrate: Narrate | None = None,
    ) -> None:
        self._tools = DeviceTools(registry)
        self._actions = actions
        self._bus = bus
        self._config = config
        self._ack_timeout_s = ack_timeout_s
        self._narrate = narrate
        self._graph = self._build().compile(checkpointer=InMemorySaver())

    def _build(self) -> StateGraph[Any]:
        graph: StateGraph[Any] = StateGraph(_Lanes)

        async def lane(payload: dict[str, Any]) -> dict[str, Any]:
            done = []
            for index, raw in payload["steps"]:
                step = VibeStep.model_validate(raw)
                outcome = await self._device_step(payload["task_id"], payload["turn"], step)
                done.append([index, outcome.tool, outcome.target, outcome.ok, outcome.detail])
            return {"done": done}

        def fan_out(state: dict[str, Any]) -> list[Send]:
            return [Send("lane", payload) for payload in state["branches"]]

        graph.add_node("lane", lane)  # type: ignore[call-overload,arg-type]  # a Send payload, not the state
        graph.add_conditional_edges(START, fan_out, ["lane"])
        graph.add_edge("lane", END)
        return graph

    async def run(self, task_id: str, turn: int, plan: VibePlan) -> tuple[StepOutcome, ...]:
        outcomes: list[StepOutcome | None] = [None] * len(plan.steps)
        lanes: dict[str, list[int]] = {}
        narrations: list[int] = []
        for index, step in enumerate(plan.steps):
            if step.tool == "narrate":
                narrations.append(index)
            else:
                lanes.setdefault(step_device(step) or "?", []).append(index)

        branches = [
            {
                "task_id": task_id,
                "turn": turn,
                "steps": [[i, plan.steps[i].model_dump(mode="json")] for i in indexes],
            }
            for indexes in lanes.values()
        ]
        if branches:
            config: Any = {"configurable": {"thread_id": f"{task_id}-{next(_RUNS)}"}}
            result = await self._graph.ainvoke({"branches": branches}, config)
            for index, tool, target, ok, detail in result.get("done", []):
                outcomes[index] = StepOutcome(tool, target, ok, detail)
        for index in narrations:
            outcomes[index] = await self._narration(task_id, turn, plan.steps[index])
        return tuple(outcome for outcome in outcomes if outcome is not None)

    def _start(self, task_id: str, step: VibeStep) -> None:
        self._bus.publish(VibeToolStart(task_id=task_id, tool=step.tool, input=dict(step.input)))

    def _end(self, task_id: str, step: VibeStep, outcome: StepOutcome) -> StepOutcome:
        result = f"{'ok' if outcome.ok else 'error'}: {outcome.detail}"
        self._bus.publish(VibeToolEnd(task_id=task_id, tool=step.tool, result=result))
        return outcome

    async def _device_step(self, task_id: str, turn: int, step: VibeStep) -> StepOutcome:
        self._start(task_id, step)
        target = step_device(step) or "?"
        try:
            command = check_step(self._tools, step)
        except ToolError as exc:
            return self._end(task_id, step, StepOutcome(step.tool, target, False, f"{exc}; nothing sent"))
        assert not isinstance(command, str)
        result = await self._actions.execute_confirmed(
            turn,
            command,
            task_id=task_id,
            ack_timeout=self._ack_timeout_s,
            confirm_timeout=self._config.confirm_timeout_s,
        )
        detail = result.message.removeprefix("not sent: ")
        human = target.replace("_", " ")
        if human not in detail and target not in detail:
            detail = f"{human}: {detail}"
        return self._end(task_id, step, StepOutcome(step.tool, target, result.ok, detail))

    async def _narration(self, task_id: str, turn: int, step: VibeStep) -> StepOutcome:
        self._start(task_id, step)
        try:
            text = check_step(self._tools, step)
        except ToolError as exc:
            return self._end(task_id, step, StepOutcome(step.tool, "narration", False, str(exc)))
        assert isinstance(text, str)
        if self._narrate is None:
            return self._end(
                task_id, step, StepOutcome(step.tool, "narration", True, f"not spoken: {text!r}")
            )
        spoken = await self._narrate(text, turn)
        detail = f"spoke {text!r}" if spoken else "not said whole: no pause came, or the user talked over it"
        # A skipped narration is not a failed scene: the devices are what the user asked for.
        return self._end(task_id, step, StepOutcome(step.tool, "narration", True, detail))
