"""The work beside the turns: scenes (the vibe agent), the brain's analysis and state, plans."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from voiced.events.base import Event


@dataclass(frozen=True)
class VibeStarted(Event):
    kind: ClassVar[str] = "vibe_started"
    task_id: str
    turn: int
    request: str


@dataclass(frozen=True)
class VibeToolStart(Event):
    kind: ClassVar[str] = "vibe_tool_start"
    task_id: str
    tool: str
    input: dict[str, Any]


@dataclass(frozen=True)
class VibeToolEnd(Event):
    kind: ClassVar[str] = "vibe_tool_end"
    task_id: str
    tool: str
    result: str


@dataclass(frozen=True)
class VibeComplete(Event):
    kind: ClassVar[str] = "vibe_complete"
    task_id: str
    plan: dict[str, Any]


@dataclass(frozen=True)
class VibeError(Event):
    kind: ClassVar[str] = "vibe_error"
    task_id: str
    error: str


@dataclass(frozen=True)
class VibeCancelled(Event):
    """The task was stopped: after this event it publishes nothing more."""

    kind: ClassVar[str] = "vibe_cancelled"
    task_id: str
    reason: str


@dataclass(frozen=True)
class VibeResumed(Event):
    """A scene cut off by a restart carries on: only its steps not yet done run."""

    kind: ClassVar[str] = "vibe_resumed"
    task_id: str
    request: str
    steps_done: int
    steps_left: int
    age_s: float


@dataclass(frozen=True)
class VibeDropped(Event):
    """A scene cut off by a restart that is not resumed (too old, or a newer one came after it)."""

    kind: ClassVar[str] = "vibe_dropped"
    task_id: str
    request: str
    reason: str


@dataclass(frozen=True)
class BrainFinished(Event):
    """The brain analysed a turn (or gave up on it at the barrier)."""

    kind: ClassVar[str] = "brain_finished"
    turn: int
    run_s: float
    notice: str | None = None
    failed: str | None = None  # why the analysis was not applied
    room: str = ""  # where the turn was said (a satellite's room, or the daemon's own)


@dataclass(frozen=True)
class BarrierWait(Event):
    """A turn waited for the previous turn's analysis."""

    kind: ClassVar[str] = "barrier_wait"
    turn: int
    waited_s: float
    timed_out: bool
    room: str = ""  # the room of the turn that waited


@dataclass(frozen=True)
class StateUpdated(Event):
    kind: ClassVar[str] = "state_updated"
    state: dict[str, Any]


@dataclass(frozen=True)
class PlanEvent(Event):
    """A plan's progress (voiced/plans): `task_id` names the plan, `detail` what happened."""

    kind: ClassVar[str] = "plan_event"
    task_id: str
    detail: str = ""
    step: int | None = None  # the step's index, for step events
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PlanCreated(PlanEvent):
    kind: ClassVar[str] = "plan_created"


@dataclass(frozen=True)
class PlanWaitingConfirmation(PlanEvent):
    kind: ClassVar[str] = "plan_waiting_confirmation"


@dataclass(frozen=True)
class PlanStepStarted(PlanEvent):
    kind: ClassVar[str] = "plan_step_started"


@dataclass(frozen=True)
class PlanStepFinished(PlanEvent):
    kind: ClassVar[str] = "plan_step_finished"


@dataclass(frozen=True)
class PlanDecision(PlanEvent):
    kind: ClassVar[str] = "plan_decision"


@dataclass(frozen=True)
class PlanCompleted(PlanEvent):
    kind: ClassVar[str] = "plan_completed"


@dataclass(frozen=True)
class PlanFailed(PlanEvent):
    kind: ClassVar[str] = "plan_failed"


@dataclass(frozen=True)
class PlanCancelled(PlanEvent):
    kind: ClassVar[str] = "plan_cancelled"
