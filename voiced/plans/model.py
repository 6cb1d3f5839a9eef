"""A plan (seed 004): the task, its steps, its history; plain data a checkpoint can hold.

States: pending → planning → waiting_confirmation → executing → completed, or failed / cancelled.
A step names a declared device, the typed command it sends (as the command's fields), when it is
due (wall-clock seconds, None = at once) and why. The graph's state is a TypedDict of JSON values,
so LangGraph's checkpointer stores it as it is.
"""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal, TypedDict

from pydantic import BaseModel, ConfigDict, Field

from voiced.devices.model import DeviceCommand, DiffuserSet, LightSet, MusicSet

Status = Literal[
    "pending", "planning", "waiting_confirmation", "executing", "completed", "failed", "cancelled"
]
FINISHED: tuple[Status, ...] = ("completed", "failed", "cancelled")
Decision = Literal["continue", "retry", "skip", "end"]
StepStatus = Literal["completed", "failed", "offline", "missed", "cancelled"]
COMMANDS: dict[str, type[LightSet] | type[DiffuserSet] | type[MusicSet]] = {
    "light": LightSet,
    "diffuser": DiffuserSet,
    "music": MusicSet,
}


class PlanStep(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    index: int = Field(ge=0)
    device: str
    kind: Literal["light", "diffuser", "music"]
    command: dict[str, Any]  # the typed command's fields, device included
    action: str  # what it does, in words ("turn off the kitchen light")
    at: float | None = None  # due (Unix seconds); None = as soon as the plan runs (or after delay_s)
    delay_s: float | None = Field(None, ge=0, description="due this long after the plan starts (its yes)")
    reason: str = ""
    group: str = ""  # steps said as one ("fade the bedroom light in over 15 minutes")

    @property
    def timed(self) -> bool:
        return self.at is not None or self.delay_s is not None

    def typed(self) -> DeviceCommand:
        return COMMANDS[self.kind].model_validate(self.command)


class ExecutionPlan(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    steps: tuple[PlanStep, ...]
    estimated_time: str = ""
    risks: tuple[str, ...] = ()
    source: Literal["rules", "llm"] = "rules"


def merge_history(old: list[dict[str, Any]] | None, new: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The history reducer: an entry with the same (step, attempt) replaces the old one."""
    merged = list(old or [])
    for entry in new or []:
        key = (entry.get("step"), entry.get("attempt"))
        for i, have in enumerate(merged):
            if (have.get("step"), have.get("attempt")) == key:
                merged[i] = {**have, **entry}
                break
        else:
            merged.append(entry)
    return merged


class TaskState(TypedDict, total=False):
    """The graph's state: what a checkpoint holds for one plan (one thread)."""

    task_id: str
    requirement: str
    created_at: float
    status: Status
    execution_plan: dict[str, Any]
    needs_confirmation: bool
    waiting_for: str  # "user_confirmation", "time", "device", ""
    waiting_since: float
    user_notes: str
    execution_history: Annotated[list[dict[str, Any]], merge_history]
    attempts: dict[str, int]  # step index → tries so far
    pending: list[int]  # step indexes still to run
    current_step: int
    started_at: float | None  # when it began to run: "in ten minutes" counts from here
    batch: list[int]  # the steps due together, run in parallel branches
    next_due: float | None
    result: str
    ended: str  # the supervisor ended the plan, and why
    not_run: int  # steps it left unrun


def command_kind(command: DeviceCommand) -> Literal["light", "diffuser", "music"]:
    if isinstance(command, LightSet):
        return "light"
    return "diffuser" if isinstance(command, DiffuserSet) else "music"


def history_entry(step: PlanStep, attempt: int, status: str, result: str, **extra: Any) -> dict[str, Any]:
    return {
        "step": step.index,
        "attempt": attempt,
        "device": step.device,
        "action": step.action,
        "status": status,
        "result": result,
        "timestamp": time.time(),
        **extra,
    }


def new_state(
    task_id: str, requirement: str, now: float, plan: ExecutionPlan, *, needs_confirmation: bool
) -> TaskState:
    """A plan just made: the graph's input (and the ledger's copy, until its first checkpoint)."""
    return {
        "task_id": task_id,
        "requirement": requirement,
        "created_at": now,
        "status": "planning",
        "execution_plan": plan.model_dump(mode="json"),
        "needs_confirmation": needs_confirmation,
        "waiting_for": "",
        "execution_history": [],
        "attempts": {},
        "pending": [step.index for step in plan.steps],
        "current_step": 0,
        "batch": [],
        "user_notes": "",
        "result": "",
    }


def cancelled_entry(step: int, reason: str, now: float) -> dict[str, Any]:
    """The history's last entry of a plan cancelled at `step`."""
    return {
        "step": step,
        "attempt": 0,
        "status": "cancelled",
        "decision": "end",
        "decided_by": "rules",  # a cancel always ends the plan: no one is asked
        "reason": reason,
        "timestamp": now,
        "action": "",
        "device": "",
        "result": reason,
    }


def plan_of(state: TaskState) -> ExecutionPlan:
    return ExecutionPlan.model_validate(state["execution_plan"])


def task_view(state: TaskState) -> dict[str, Any]:
    """The whole task, as the API shows it."""
    plan = state.get("execution_plan") or {"steps": []}
    return {
        "id": state.get("task_id"),
        "requirement": state.get("requirement", ""),
        "status": state.get("status", "pending"),
        "created_at": state.get("created_at"),
        "started_at": state.get("started_at"),  # a step's delay_s counts from here
        "execution_plan": plan,
        "execution_history": state.get("execution_history", []),
        "current_step": state.get("current_step", 0),
        "total_steps": len(plan.get("steps", [])),
        "waiting_for": state.get("waiting_for", ""),
        "user_notes": state.get("user_notes", ""),
        "result": state.get("result", ""),
    }
