"""The event every other is, and the daemon's own life: ready, input ended, the broker, supervised
tasks, payloads refused at the edge."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar


def _now() -> float:
    return time.monotonic()


@dataclass(frozen=True)
class Event:
    kind: ClassVar[str] = "event"
    t: float = field(default_factory=_now, kw_only=True)  # monotonic, for durations between events
    at: float = field(default_factory=time.time, kw_only=True)  # wall-clock (Unix seconds), for people

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["kind"] = self.kind
        return data


@dataclass(frozen=True)
class Ready(Event):
    kind: ClassVar[str] = "ready"


@dataclass(frozen=True)
class InputEnded(Event):
    kind: ClassVar[str] = "input_ended"


@dataclass(frozen=True)
class BrokerStatus(Event):
    kind: ClassVar[str] = "broker_status"
    connected: bool
    detail: str = ""


@dataclass(frozen=True)
class TaskFailed(Event):
    """A supervised background task raised; it restarts after `restart_in_s`."""

    kind: ClassVar[str] = "task_failed"
    task: str
    error: str
    restart_in_s: float


@dataclass(frozen=True)
class TaskRecovered(Event):
    """A supervised task that had failed has run long enough since its restart to count as well."""

    kind: ClassVar[str] = "task_recovered"
    task: str


@dataclass(frozen=True)
class PayloadRejected(Event):
    """An MQTT payload refused at the edge; `excerpt` is bounded and escaped, never the payload."""

    kind: ClassVar[str] = "payload_rejected"
    topic: str
    reason: str
    excerpt: str = ""
