"""What `POST /api/say` answers: a typed turn's reply and everything it sent, its scenes' commands too.

A scene ("goodnight") runs in the background and its commands carry the turn that asked for it, but
they may reach the broker after the turn has finished speaking. So once the turn has finished, the
answer waits for each scene it started to end (complete, failed or cancelled; at most
`scene_wait_s`) and lists their commands with the turn's own, and each scene with how it ended.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from voiced.bus import Subscription
from voiced.events import (
    AgentText,
    CommandRefused,
    CommandSent,
    Event,
    TurnFinished,
    VibeCancelled,
    VibeComplete,
    VibeError,
    VibeStarted,
)

SCENE_ENDS: dict[type[Event], str] = {
    VibeComplete: "complete",
    VibeError: "failed",
    VibeCancelled: "cancelled",
}


class TypedTurn:
    def __init__(self, turn: int) -> None:
        self.turn = turn
        self.said: list[str] = []
        self.understood = True
        self.commands: list[dict[str, Any]] = []
        self.scenes: dict[str, str] = {}  # task id → running, complete, failed, cancelled

    def take(self, event: Event) -> bool:
        """Note what `event` says of this turn; True once the turn has finished."""
        if isinstance(event, VibeStarted | VibeComplete | VibeError | VibeCancelled):
            self._scene(event)
            return False
        if getattr(event, "turn", None) != self.turn:
            return False
        if isinstance(event, AgentText):
            self.said.append(event.text)
            self.understood = self.understood and event.understood
        elif isinstance(event, CommandSent):
            self.commands.append({"device": event.device, "payload": event.payload, "result": "sent"})
        elif isinstance(event, CommandRefused):
            self.commands.append({"device": event.device, "reason": event.reason, "result": "refused"})
        return isinstance(event, TurnFinished)

    def _scene(self, event: VibeStarted | VibeComplete | VibeError | VibeCancelled) -> None:
        if isinstance(event, VibeStarted):
            if event.turn == self.turn:
                self.scenes[event.task_id] = "running"
        elif event.task_id in self.scenes:
            self.scenes[event.task_id] = SCENE_ENDS[type(event)]

    @property
    def scenes_running(self) -> bool:
        return "running" in self.scenes.values()

    def answer(self) -> dict[str, Any]:
        scenes = [{"task_id": task_id, "status": status} for task_id, status in self.scenes.items()]
        return {
            "reply": " ".join(self.said),
            "understood": self.understood,
            "commands": self.commands,
            "scenes": scenes,
        }


async def finished(events: Subscription, typed: TypedTurn) -> None:
    """Until the turn finishes (no bound here: the caller's)."""
    while not typed.take(await events.get()):
        pass


async def scenes_ended(events: Subscription, typed: TypedTurn, wait_s: float) -> None:
    """Until every scene the turn started has ended, at most `wait_s`."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(wait_s):
            while typed.scenes_running:
                typed.take(await events.get())
