"""What the mouth needs of the scene (vibe) agent, so the mouth does not import it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class SceneNews(Protocol):
    """A finished scene's message for the main agent."""

    @property
    def told(self) -> bool: ...

    def for_model(self) -> str: ...

    def spoken(self) -> str:
        """A short line for the local path ("" = say nothing)."""
        ...


class VibeControl(Protocol):
    @property
    def running(self) -> str | None: ...

    def acknowledgement(self, request: str) -> str: ...

    async def start(self, request: str, turn: int) -> str: ...

    async def cancel(self, reason: str) -> str: ...

    def poll_messages(self) -> Sequence[SceneNews]: ...

    async def aclose(self) -> None: ...
