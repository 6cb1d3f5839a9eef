"""Runs a scene's plan: each device's steps in order, different devices in parallel, every step confirmed.

The scene runs on the plans' engine, LangGraph: one `Send` branch per device, then the narration,
checkpointed to SQLite (`vibe.checkpoint_file`; in memory when there is none) one superstep at a time
(durability "sync"). Each device step goes through the plans' ledger (voiced/plans/steps.py): marked
*sending* before it is published and *done* after, so a scene resumed after a restart (`resume`)
runs only the steps not yet done and never publishes a done step twice. Cancelling the run cancels
every branch.

A device step publishes through DeviceActions and then waits for the broker's PUBACK and the device's
state topic to show the requested values. A step that fails (refused, offline, unconfirmed) names the
device; the other steps still run. Narration comes last, through the mouth, never over a reply.

Both files are checked at start and moved aside when damaged, then or while running
(voiced/sqlite_files.py): scenes are kept on a fresh file, and a scene whose checkpoints fail
mid-way carries on from the ledger. Finished scenes are pruned as plans are (`plans.keep_days`,
`plans.keep_finished`).
"""

from __future__ import annotations

import logging
import operator
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, Protocol, TypedDict, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from voiced.bus import EventBus
from voiced.config import VibeConfig
from voiced.devices.actions import DeviceActions
from voiced.devices.registry import DeviceRegistry
from voiced.devices.tools import DeviceTools, ToolError
from voiced.events import VibeToolEnd, VibeToolStart
from voiced.plans.checkpoints import Checkpoints
from voiced.plans.ledger import Ledger
from voiced.plans.steps import DeviceSteps
from voiced.sqlite_files import is_damage
from voiced.vibe.messages import StepOutcome
from voiced.vibe.plan import VibePlan, VibeStep, check_step, step_device

_LOGGER = logging.getLogger(__name__)
T = TypeVar("T")
ATTEMPT = 1  # a scene's step is tried once
DAY_S = 86400.0


class Narrate(Protocol):
    """Speaks one line for a task when the conversation allows; False if it did not."""

    def __call__(self, text: str, turn: int, wanted: Callable[[], bool] | None = None) -> Awaitable[bool]: ...


class _Scene(TypedDict, total=False):
    task_id: str
    plan: dict[str, Any]  # the VibePlan
    done: Annotated[list[list[Any]], operator.add]  # [index, tool, target, ok, detail] per step


def ledger_path(checkpoint: Path) -> Path:
    """The ledger beside the checkpoints: its own file, as the plans' (the saver holds transactions)."""
    return checkpoint.with_name(f"{checkpoint.stem}-ledger{checkpoint.suffix}")


def device_steps_left(ledger: Ledger, task_id: str, plan: VibePlan) -> list[int]:
    """The plan's device steps not marked done in the ledger."""
    left = []
    for index, step in enumerate(plan.steps):
        seen = ledger.attempt(task_id, index, ATTEMPT)
        if step.tool != "narrate" and (seen is None or seen[0] != "done"):
            left.append(index)
    return left


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
        checkpoint: Path | None = None,
        keep_days: float = 30,
        keep_finished: int = 300,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """`checkpoint`: the SQLite file that keeps scenes across restarts; None = in memory.
        `keep_days`, `keep_finished`: finished scenes older, or beyond that many, are deleted."""
        self._tools = DeviceTools(registry)
        self._bus = bus
        self._narrate = narrate
        self._keep = (keep_days, keep_finished)
        self._clock = clock
        key = "vibe.checkpoint_file"
        self.ledger = (
            Ledger(ledger_path(checkpoint), what="scenes' ledger", key=key)
            if checkpoint is not None
            else Ledger(":memory:")
        )
        self._steps = DeviceSteps(
            actions, self.ledger, ack_timeout_s=ack_timeout_s, confirm_timeout_s=config.confirm_timeout_s
        )
        self._checkpoints = (
            Checkpoints(checkpoint, self._build(), what="scenes' checkpoints", key=key)
            if checkpoint is not None
            else None
        )
        self._graph: Any = self._build().compile(checkpointer=InMemorySaver())

    async def open(self) -> None:
        """Open the checkpoints (a no-op in memory; a damaged file is moved aside, and said in the log)."""
        if self._checkpoints is not None:
            await self._checkpoints.open()
            self._graph = self._checkpoints.graph

    async def aclose(self) -> None:
        if self._checkpoints is not None:
            await self._checkpoints.aclose()
        self.ledger.close()

    async def known(self, task_id: str) -> bool:
        """Whether a scene of this id has checkpoints (a new one must not pick up its thread)."""
        checkpoints = self._checkpoints
        return checkpoints is not None and await self._recovering(lambda: checkpoints.known(task_id))

    async def tidy(self, task_id: str) -> None:
        """A scene finished: keep its last checkpoint only, and delete the oldest finished scenes."""
        days, keep = self._keep
        gone = self.ledger.prunable(before=self._clock() - days * DAY_S, keep=keep)
        if self._checkpoints is not None:
            await self._recovering(lambda: self._checkpoints_tidied(task_id, gone))
        if gone:
            self.ledger.forget(gone)
            _LOGGER.info("scenes: pruned %d finished scene(s), %s to %s", len(gone), gone[0], gone[-1])

    async def _checkpoints_tidied(self, task_id: str, gone: list[str]) -> None:
        assert self._checkpoints is not None
        await self._checkpoints.keep_last_only(task_id)
        if gone:
            await self._checkpoints.forget(gone)

    async def _recovering(self, work: Callable[[], Awaitable[T]]) -> T:
        """`work`, once more on a fresh checkpoint file if this one proves damaged while running."""
        try:
            return await work()
        except Exception as exc:
            if self._checkpoints is None or not is_damage(exc):
                raise
            await self._checkpoints.reopen(exc)
            self._graph = self._checkpoints.graph
            return await work()

    def _build(self) -> StateGraph[Any]:
        graph: StateGraph[Any] = StateGraph(_Scene)

        async def lane(payload: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
            done = []
            turn = int(config["configurable"]["turn"])
            for index, raw in payload["steps"]:
                step = VibeStep.model_validate(raw)
                outcome = await self._device_step(payload["task_id"], turn, index, step)
                done.append([index, outcome.tool, outcome.target, outcome.ok, outcome.detail])
            return {"done": done}

        async def narrate(state: _Scene, config: RunnableConfig) -> dict[str, Any]:
            done = []
            turn = int(config["configurable"]["turn"])
            for index, step in enumerate(VibePlan.model_validate(state["plan"]).steps):
                if step.tool == "narrate":
                    outcome = await self._narration(state["task_id"], turn, step)
                    done.append([index, outcome.tool, outcome.target, outcome.ok, outcome.detail])
            return {"done": done}

        def fan_out(state: _Scene) -> list[Send] | str:
            plan = VibePlan.model_validate(state["plan"])
            lanes: dict[str, list[list[Any]]] = {}
            for index, step in enumerate(plan.steps):
                if step.tool != "narrate":
                    lanes.setdefault(step_device(step) or "?", []).append(
                        [index, step.model_dump(mode="json")]
                    )
            sends = [Send("lane", {"task_id": state["task_id"], "steps": steps}) for steps in lanes.values()]
            return sends or "narrate"

        graph.add_node("lane", lane)  # type: ignore[call-overload,arg-type,unused-ignore]  # a Send payload, not the state
        graph.add_node("narrate", narrate)  # type: ignore[call-overload,arg-type,unused-ignore]
        graph.add_conditional_edges(START, fan_out, ["lane", "narrate"])
        graph.add_edge("lane", "narrate")
        graph.add_edge("narrate", END)
        return graph

    def _cfg(self, task_id: str, turn: int) -> Any:
        return {"configurable": {"thread_id": task_id, "turn": turn}}

    async def run(self, task_id: str, turn: int, plan: VibePlan) -> tuple[StepOutcome, ...]:
        """Run the scene; if its checkpoints fail mid-way, on from a fresh file (done steps not sent)."""
        return await self._recovering(lambda: self._resumed(task_id, turn, plan))

    async def _run(self, task_id: str, turn: int, plan: VibePlan) -> tuple[StepOutcome, ...]:
        given = {"task_id": task_id, "plan": plan.to_dict()}
        await self._graph.ainvoke(given, self._cfg(task_id, turn), durability="sync")
        return await self._outcomes(task_id, turn)

    async def resume(self, task_id: str, turn: int, plan: VibePlan) -> tuple[StepOutcome, ...]:
        """Carry on from the last checkpoint (from the start if there is none): done steps are not sent."""
        return await self._recovering(lambda: self._resumed(task_id, turn, plan))

    async def _resumed(self, task_id: str, turn: int, plan: VibePlan) -> tuple[StepOutcome, ...]:
        snapshot = await self._snapshot(task_id, turn)
        if not snapshot.values:
            return await self._run(task_id, turn, plan)
        if snapshot.next:
            _LOGGER.info("%s: resuming at %s", task_id, ", ".join(snapshot.next))
            await self._graph.ainvoke(None, self._cfg(task_id, turn), durability="sync")
        return await self._outcomes(task_id, turn)

    async def _snapshot(self, task_id: str, turn: int) -> Any:
        if self._checkpoints is None:
            return await self._graph.aget_state(self._cfg(task_id, turn))
        return await self._checkpoints.snapshot(self._cfg(task_id, turn))

    async def _outcomes(self, task_id: str, turn: int) -> tuple[StepOutcome, ...]:
        snapshot = await self._snapshot(task_id, turn)
        done = sorted(snapshot.values.get("done", []), key=lambda entry: int(entry[0]))
        return tuple(StepOutcome(tool, target, ok, detail) for _index, tool, target, ok, detail in done)

    def _start(self, task_id: str, step: VibeStep) -> None:
        self._bus.publish(VibeToolStart(task_id=task_id, tool=step.tool, input=dict(step.input)))

    def _end(self, task_id: str, step: VibeStep, outcome: StepOutcome) -> StepOutcome:
        result = f"{'ok' if outcome.ok else 'error'}: {outcome.detail}"
        self._bus.publish(VibeToolEnd(task_id=task_id, tool=step.tool, result=result))
        return outcome

    async def _device_step(self, task_id: str, turn: int, index: int, step: VibeStep) -> StepOutcome:
        target = step_device(step) or "?"
        before = self._steps.recorded(task_id, index, ATTEMPT)
        if before is not None:  # done before a restart: its events were published then
            return StepOutcome(step.tool, target, before.ok, _named(target, before.detail))
        self._start(task_id, step)
        try:
            command = check_step(self._tools, step)
        except ToolError as exc:
            return self._end(task_id, step, StepOutcome(step.tool, target, False, f"{exc}; nothing sent"))
        assert not isinstance(command, str)
        result = await self._steps.once(task_id, index, ATTEMPT, command, turn)
        return self._end(
            task_id, step, StepOutcome(step.tool, target, result.ok, _named(target, result.detail))
        )

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


def _named(target: str, message: str) -> str:
    detail = message.removeprefix("not sent: ")
    human = target.replace("_", " ")
    return detail if human in detail or target in detail else f"{human}: {detail}"
