"""The Agent interface: a user's words in, speakable text streamed out.

Device changes happen inside the agent, through the injected DeviceActions, so an LLM
can see each tool's result. The daemon tells the agent afterwards what was actually
spoken, so the history never claims words that a barge-in cut off.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Protocol

from voiced.devices.model import DeviceCommand


@dataclass(frozen=True)
class AgentReply:
    """A complete answer from the local intent matcher."""

    text: str
    commands: tuple[DeviceCommand, ...] = ()
    understood: bool = True
    scene: str | None = None  # a preset name or the user's own words for the vibe agent
    reset_scene: bool = False  # "never mind", "stop the scene"
    missed: bool = False  # some or all of the words meant nothing here (not a refusal)
    repeat: bool = False  # "say that again": whoever keeps the last reply says it (text: if there is none)


@dataclass(frozen=True)
class TurnContext:
    """What the brain gives a turn: lines for the model's context, and maybe a sentence to say first."""

    for_model: tuple[str, ...] = ()
    say: str | None = None
    confirm: bool = False  # wait for the devices to report the change, and say what they show
    doubtful: frozenset[str] = frozenset()  # words the ear was unsure of: not acted on without asking
    alternatives: tuple[str, ...] = ()  # the ear's other readings, tried when its best means nothing
    heard: bool = False  # the words are the ear's reading of audio (a word may be misheard), not typed


NO_CONTEXT = TurnContext()


class Agent(Protocol):
    def reply(self, turn: int, text: str, context: TurnContext = NO_CONTEXT) -> AsyncGenerator[str, None]:
        """Speakable text, streamed as it is produced (token deltas or whole sentences)."""
        ...

    def spoken(self, turn: int, text: str, *, interrupted: bool) -> None:
        """Record what reached the user's ears for this turn."""
        ...

    def understood(self, turn: int) -> bool:
        """Whether the reply to `turn` answered it (False: "didn't catch that"); asked during the reply."""
        ...

    async def aclose(self) -> None:
        """Release connections (the daemon is stopping)."""
        ...
