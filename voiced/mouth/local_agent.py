"""The local path as an Agent: intents matched offline, commands executed, one honest sentence back."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from voiced.mouth.actions import DeviceActions
from voiced.mouth.agent import AgentReply
from voiced.mouth.intents import LocalIntentAgent

NO_BROKER_REPLY = "Sorry, I can't reach the devices right now, so I didn't change anything."


def carry_out(turn: int, reply: AgentReply, actions: DeviceActions) -> str:
    """Execute a local reply's commands; returns what to say, honest about what failed."""
    failed: list[str] = []
    for command in reply.commands:
        result = actions.execute(turn, command)
        if result.broker_down:
            return NO_BROKER_REPLY
        if not result.ok:
            failed.append(command.device.replace("_", " "))
    if failed:
        return f"{reply.text} But I couldn't set the {', '.join(failed)}."
    return reply.text


class LocalAgent:
    def __init__(self, intents: LocalIntentAgent, actions: DeviceActions) -> None:
        self._intents = intents
        self._actions = actions

    async def reply(self, turn: int, text: str) -> AsyncGenerator[str, None]:
        yield carry_out(turn, self._intents.understand(text), self._actions)

    def spoken(self, turn: int, text: str, *, interrupted: bool) -> None:
        return None  # the local path keeps no conversation history

    async def aclose(self) -> None:
        return None
