"""The Agent interface: text in, a reply to speak and device commands out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from voiced.devices.model import DeviceCommand


@dataclass(frozen=True)
class AgentReply:
    text: str
    commands: tuple[DeviceCommand, ...] = ()
    understood: bool = True


class Agent(Protocol):
    async def respond(self, text: str) -> AgentReply: ...
