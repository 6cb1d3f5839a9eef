"""The home's devices: commands sent or refused, states and availability, devices discovered and
the understanding that learned them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from voiced.events.base import Event


@dataclass(frozen=True)
class CommandSent(Event):
    kind: ClassVar[str] = "command_sent"
    turn: int
    device: str
    topic: str
    payload: str
    task_id: str = ""  # the vibe task that sent it, if any
    room: str = ""


@dataclass(frozen=True)
class CommandRefused(Event):
    kind: ClassVar[str] = "command_refused"
    turn: int
    device: str
    reason: str
    task_id: str = ""
    room: str = ""


@dataclass(frozen=True)
class DeviceStateChanged(Event):
    kind: ClassVar[str] = "device_state"
    device: str
    state: dict[str, Any]


@dataclass(frozen=True)
class DeviceAvailability(Event):
    kind: ClassVar[str] = "device_availability"
    device: str
    online: bool


@dataclass(frozen=True)
class DevicesChanged(Event):
    """Devices discovered on the broker appeared or disappeared (YAML devices never change)."""

    kind: ClassVar[str] = "devices_changed"
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()


@dataclass(frozen=True)
class HomeLearned(Event):
    """The understanding has learned the home's devices anew (after DevicesChanged): from now on
    they can be named by voice."""

    kind: ClassVar[str] = "home_learned"
    devices: tuple[str, ...] = ()
    seconds: float = 0.0
