"""The satellites' events: each names the satellite and its room (the rest is voiced/events)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from voiced.events import AssistantMode, Event


@dataclass(frozen=True)
class SatelliteEvent(Event):
    kind: ClassVar[str] = "satellite"
    satellite: str
    room: str

    def described(self) -> str | None:
        """The line `voiced run` prints for it; None: nothing a person follows."""
        return None


@dataclass(frozen=True)
class SatelliteConnected(SatelliteEvent):
    """voiced reached the satellite, it described itself and streams to us."""

    kind: ClassVar[str] = "satellite_connected"
    uri: str
    software: str = ""  # what the satellite says it is ("wyoming-satellite 1.0.0")

    def described(self) -> str:
        return f"  satellite {self.satellite} ({self.room}) connected"


@dataclass(frozen=True)
class SatelliteDisconnected(SatelliteEvent):
    """The satellite went away (or never answered); voiced tries again after `retry_s`."""

    kind: ClassVar[str] = "satellite_disconnected"
    reason: str
    retry_s: float

    def described(self) -> str:
        return f"  satellite {self.satellite} ({self.room}) away: {self.reason}; trying again"


@dataclass(frozen=True)
class RoomHeard(SatelliteEvent):
    """A turn's words, heard through the satellite."""

    kind: ClassVar[str] = "room_heard"
    turn: int
    text: str

    def described(self) -> str:
        return f"[{self.room}] you said: {self.text}"


@dataclass(frozen=True)
class RoomSaid(SatelliteEvent):
    """A sentence of the reply, sent to the satellite as audio."""

    kind: ClassVar[str] = "room_said"
    turn: int
    text: str

    def described(self) -> str:
        return f"[{self.room}] voiced: {self.text}"


@dataclass(frozen=True)
class RoomTurnFinished(SatelliteEvent):
    """The turn is over: its reply has been played on the satellite (or there was none). `stages`:
    its latency, stage by stage (voiced/turn_stages.py), as the local room's turns have it."""

    kind: ClassVar[str] = "room_turn_finished"
    turn: int
    stages: dict[str, float] = field(default_factory=dict)
    understood: bool = True


@dataclass(frozen=True)
class RoomLearned(SatelliteEvent):
    """The room's understanding has learned the home's devices anew, after devices were discovered or
    went away (HomeLearned on the room's own bus): from now on they can be named there."""

    kind: ClassVar[str] = "room_learned"
    devices: tuple[str, ...] = ()
    seconds: float = 0.0


@dataclass(frozen=True)
class RoomState(SatelliteEvent):
    """What the assistant is doing in the satellite's room (as AssistantState says for the local one)."""

    kind: ClassVar[str] = "room_state"
    state: AssistantMode
    turn: int = 0


@dataclass(frozen=True)
class RoomBargeIn(SatelliteEvent):
    """Someone talked over the reply in the satellite's room: `stopped` it (a BargeIn there, `detail`
    its reason), or not (our echo or a backchannel: BargeInIgnored, `detail` what was heard)."""

    kind: ClassVar[str] = "room_barge_in"
    turn: int
    stopped: bool
    detail: str = ""

    def described(self) -> str | None:
        return f"[{self.room}] talked over: reply stopped ({self.detail})" if self.stopped else None
