"""What each turn did, read off the event spine: the commands it sent, what was refused (a scene's
failures go with the next turn analysed), and how sure the ear was of its words."""

from __future__ import annotations

import json
from typing import Any

from voiced.brain.news import DeviceNews
from voiced.brain.state import TurnRecord
from voiced.bus import EventBus
from voiced.events import CommandRefused, CommandSent, Transcript


def _decoded(payload: str) -> dict[str, Any]:
    """A command's payload: a JSON object, or plain text (Tasmota's "ON") kept as `raw`."""
    try:
        decoded = json.loads(payload)
    except ValueError:
        return {"raw": payload}
    return decoded if isinstance(decoded, dict) else {"raw": payload}


class TurnEvents:
    def __init__(self, bus: EventBus, news: DeviceNews) -> None:
        """`news`: is told every event too (which devices have been heard from)."""
        self._bus = bus
        self._news = news
        self._events = bus.subscribe()
        self._commands: dict[int, list[dict[str, object]]] = {}
        self._failures: dict[int, list[str]] = {}
        self._confidence: dict[int, float] = {}

    def collect(self) -> None:
        """What the turns did, from the event spine: commands sent, refused, scenes that failed."""
        while not self._events.empty():
            event = self._events.get_nowait()
            self._news.seen(event)
            if isinstance(event, CommandSent) and not event.task_id:  # a scene's commands are not tastes
                payload = _decoded(event.payload)
                self._commands.setdefault(event.turn, []).append({"device": event.device, "payload": payload})
            elif isinstance(event, Transcript):
                self._confidence[event.turn] = event.confidence
            elif isinstance(event, CommandRefused):
                # A scene's failures surface with the next turn analysed, named by device.
                key = -1 if event.task_id else event.turn
                self._failures.setdefault(key, []).append(f"{event.device}: {event.reason}")

    def with_events(self, record: TurnRecord) -> TurnRecord:
        """The record plus what the turn did on the event spine (taken once: safe to repeat)."""
        self.collect()
        return record.model_copy(
            update={
                "commands": [*record.commands, *self._commands.pop(record.turn, [])],
                "asr_confidence": self._confidence.pop(record.turn, record.asr_confidence),
                "failures": [
                    *record.failures,
                    *self._failures.pop(record.turn, []),
                    *self._failures.pop(-1, []),
                ],
            }
        )

    def close(self) -> None:
        self._bus.unsubscribe(self._events)
