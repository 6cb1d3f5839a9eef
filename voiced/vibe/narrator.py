"""The vibe agent's voice: a short line through the mouth, only when the conversation pauses."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from voiced.bus import EventBus
from voiced.mouth.speech import SpeechOutput

_LOGGER = logging.getLogger(__name__)


class SpokenNarrator:
    def __init__(self, speech: SpeechOutput, bus: EventBus, busy: Callable[[], bool], wait_s: float) -> None:
        """`busy`: a turn is being handled or waits; narration never starts on top of it.

        It is asked again after each event on the bus (a turn or a reply ending is one), not polled.
        """
        self._speech = speech
        self._bus = bus
        self._busy = busy
        self._wait_s = wait_s

    async def __call__(self, text: str, turn: int, wanted: Callable[[], bool] | None = None) -> bool:
        """Say `text` at the next pause; `wanted` is asked again then (the news may have been told)."""
        if not await self._floor_free():
            _LOGGER.info("narration skipped after %.0f s of conversation: %r", self._wait_s, text)
            return False
        if wanted is not None and not wanted():
            return False
        return await self._speech.speak_aside(turn, text)

    async def _floor_free(self) -> bool:
        """Wait (at most wait_s) until no turn is under way and nothing is being said."""
        events = self._bus.subscribe("narrator")
        try:
            async with asyncio.timeout(self._wait_s):
                while self._busy() or self._speech.speaking:
                    await events.get()
            return True
        except TimeoutError:
            return False
        finally:
            self._bus.unsubscribe(events)
