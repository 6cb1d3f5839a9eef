"""What a finished vibe task leaves for the main agent (seed 001's message queue)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from voiced.language.replies import say, the
from voiced.vibe.plan import VibePlan


def _human(name: str) -> str:
    return name.replace("_", " ")


@dataclass(frozen=True)
class StepOutcome:
    tool: str
    target: str  # the device, or "narration"
    ok: bool
    detail: str


@dataclass(frozen=True)
class VibeMessage:
    task_id: str
    request: str
    at: float = field(default_factory=time.time, kw_only=True)
    told: bool = field(default=False, kw_only=True)  # already spoken to the user

    def for_model(self) -> str:
        raise NotImplementedError

    def spoken(self) -> str:
        """A short line for the local path, said at the start of the next turn ("" = say nothing)."""
        return ""


@dataclass(frozen=True)
class Success(VibeMessage):
    plan: VibePlan
    steps: tuple[StepOutcome, ...] = ()

    def for_model(self) -> str:
        applied = "; ".join(f"{s.target}: {s.detail}" for s in self.steps)
        return f"The scene {self.request!r} ({self.task_id}) is ready. Applied: {applied}."

    def spoken(self) -> str:
        if self.plan.source == "preset":
            return say("scene_ready_named", name=_human(self.plan.name))
        return say("scene_ready")


@dataclass(frozen=True)
class Failed(VibeMessage):
    error: str
    steps: tuple[StepOutcome, ...] = ()

    @property
    def applied(self) -> list[str]:
        """Devices with at least one step that took effect."""
        return list(dict.fromkeys(s.target for s in self.steps if s.ok and s.target != "narration"))

    def for_model(self) -> str:
        done = ", ".join(self.applied) or "nothing"
        told = " The user has already been told." if self.told else ""
        return f"The scene {self.request!r} ({self.task_id}) failed: {self.error}. Applied: {done}.{told}"

    def spoken(self) -> str:
        failed = list(dict.fromkeys(_human(s.target) for s in self.steps if not s.ok))
        if not failed:
            return say("scene_failed")
        if not self.applied:
            return say("scene_none_set")
        said = say("scene_partly_set", [the(name) for name in failed])
        done = [the(_human(name)) for name in self.applied]
        return f"{said} {say('scene_did_change', done)}" if done else said


@dataclass(frozen=True)
class Cancelled(VibeMessage):
    reason: str = ""

    def for_model(self) -> str:
        return f"The scene {self.request!r} ({self.task_id}) was cancelled ({self.reason})."
