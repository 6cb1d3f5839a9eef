"""The interview's result becomes scenes: written and announced once, however the analysis ends.

An analysis can be given up at the barrier after it has written the scenes; the rules' analysis
that stands in for it must not write and announce them again, nor lose what they changed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol

from voiced.brain.state import ConversationState
from voiced.errors import ConfigError
from voiced.language.replies import say
from voiced.tasks import cancel_and_wait

_LOGGER = logging.getLogger(__name__)

Say = Callable[[str, int], Coroutine[Any, Any, bool]]
Approve = Callable[[ConversationState], Awaitable[str | None]]


class Deliverable(Protocol):
    """The architect: the finished interview becomes scenes; returns what to tell the user."""

    def __call__(self, state: ConversationState) -> tuple[str, str]:
        """(the scenes file written, a short spoken summary); raises ConfigError if invalid."""
        ...


class ScenesDelivery:
    def __init__(self, architect: Deliverable | None, say: Say | None) -> None:
        self._architect = architect
        self._say = say
        self._speaking: set[asyncio.Task[bool]] = set()
        self._change_requested = False
        self._done: dict[int, dict[str, Any]] = {}  # turn -> what its delivery changed in the state

    def request_change(self) -> None:
        self._change_requested = True

    async def deliver(
        self,
        before: ConversationState,
        state: ConversationState,
        turn: int,
        approve: Approve,
        *,
        speak: bool = True,
    ) -> ConversationState:
        """The interview just completed, or the user asked to change a scene: (re)write the scenes."""
        if turn in self._done:  # an analysis of this turn got this far before it was given up
            return state.model_copy(update=self._done[turn])
        changed = self._change_requested
        if (
            self._architect is None
            or state.status != "Completed"
            or (before.status == "Completed" and not changed)
        ):
            self._change_requested = False  # everyday use does not rewrite the scenes; only a request does
            return state
        refusal = await approve(state)
        self._change_requested = False  # taken only now: a cancelled approval keeps the request
        if refusal is not None:
            _LOGGER.info("brain: the judge holds the scenes back: %s", refusal)
            return state.model_copy(
                update={"status": "Solutioning", "system_notice": f"Before the scenes: {refusal}"}
            )
        try:
            path, summary = self._architect(state)
        except ConfigError as exc:  # e.g. a liked scent no diffuser here has
            _LOGGER.warning("brain: the architect's scenes do not fit this home: %s", exc)
            notice = "The scenes could not be written for this home's devices; say so if the user asks."
            return state.model_copy(update={"system_notice": notice})
        if before.status == "Completed":
            summary = say("scenes_updated")
        if self._say is not None and speak:
            task = asyncio.create_task(self._say(summary, turn), name=f"brain-summary-{turn}")
            self._speaking.add(task)
            task.add_done_callback(self._speaking.discard)
        self._done[turn] = {"scenes_file": path, "interview_slot": None}
        return state.model_copy(update=self._done[turn])

    def settled(self, turn: int) -> None:
        """The analysis of `turn` is applied: its delivery is history."""
        self._done.pop(turn, None)

    async def aclose(self) -> None:
        await cancel_and_wait(list(self._speaking))
