"""Recent turns from bus events: heard, said, interrupted or not, commands, per-stage latency.

A turn's commands include those of the scene it started, even when they are sent after the turn has
finished ("goodnight": the reply is said while the scene runs).

Stages as bench/latency.py measures them (voiced/turn_stages.py). A turn's room is the one its
TurnFinished names.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any

from voiced.events import (
    AgentText,
    BargeIn,
    CommandRefused,
    CommandSent,
    Event,
    Transcript,
    TurnFinished,
)
from voiced.turn_stages import mark, stages

TURNS_KEPT = 100
OPEN_KEPT = 20  # turns begun but not finished (a burst too short, dropped as echo) are forgotten


@dataclass
class TurnRecord:
    turn: int
    at: float = 0.0  # wall clock of the first event seen
    heard: str = ""
    said: list[str] = field(default_factory=list)
    understood: bool = True
    interrupted: bool = False
    commands: list[dict[str, Any]] = field(default_factory=list)
    marks: dict[str, float] = field(default_factory=dict)
    room: str = ""

    def stages(self) -> dict[str, float]:
        return stages(self.marks)

    def to_dict(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "at": self.at,
            "heard": self.heard,
            "said": " ".join(self.said),
            "understood": self.understood,
            "interrupted": self.interrupted,
            "commands": self.commands,
            "stages": self.stages(),
            "room": self.room,
        }


class TurnLog:
    """Fed every bus event (`observe`); `finished` gets each turn as it ends."""

    def __init__(self, kept: int = TURNS_KEPT) -> None:
        self._open: OrderedDict[int, TurnRecord] = OrderedDict()
        self._done: deque[TurnRecord] = deque(maxlen=kept)

    def recent(self, limit: int) -> list[dict[str, Any]]:
        """The last `limit` finished turns, newest last."""
        return [record.to_dict() for record in list(self._done)[-limit:]] if limit > 0 else []

    def observe(self, event: Event) -> TurnRecord | None:
        """Returns the turn `event` finished, if it finished one."""
        turn = getattr(event, "turn", None)
        if not isinstance(turn, int) or not turn:
            return None
        record = self._open.get(turn)
        finished = (
            None if record is not None else next((d for d in reversed(self._done) if d.turn == turn), None)
        )
        if (
            finished is not None
        ):  # after the turn: a scene it started still sends (its other news is not the turn's)
            if isinstance(event, CommandSent | CommandRefused):
                _command(finished, event)
            return None
        if record is None:
            record = self._open[turn] = TurnRecord(turn, at=event.at)
            while len(self._open) > OPEN_KEPT:
                self._open.popitem(last=False)
        mark(record.marks, event)
        if isinstance(event, Transcript):
            record.heard = event.text
        elif isinstance(event, AgentText):
            record.said.append(event.text)
            record.understood = record.understood and event.understood
        elif isinstance(event, BargeIn):
            record.interrupted = True
        elif isinstance(event, CommandSent | CommandRefused):
            _command(record, event)
        elif isinstance(event, TurnFinished):
            record.room = event.room
            del self._open[turn]
            self._done.append(record)
            return record
        return None


def _command(record: TurnRecord, event: CommandSent | CommandRefused) -> None:
    if isinstance(event, CommandSent):
        record.commands.append({"device": event.device, "payload": event.payload, "result": "sent"})
    else:
        record.commands.append({"device": event.device, "reason": event.reason, "result": "refused"})
