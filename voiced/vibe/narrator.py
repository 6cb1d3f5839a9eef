"""The vibe agent's voice: a short line through the mouth, only when the conversation pauses."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from voiced.mouth.speech import SpeechOutput

_LOGGER = logging.getLogger(__name__)
POLL_S = 0.1


class SpokenNarrator:
    def __init__(self, speech: SpeechOutput, busy: Callable[[], bool], wait_s: float) -> None:
        """`busy`: a turn is being handled or waits; narration never starts on top of it."""
        self._speech = speech
        self._busy = busy
        self._wait_s = wait_s

    async def __call__(self, text: str, turn: int, wanted: Callable[[], bool] | None = None) -> bool:
        """Say `text` at the next pause; `wanted` is asked again then (the news may have been told)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._wait_s
        while self._busy() or self._speech.speaking:
            if loop.time() >= deadline:
                _LOGGER.info("narration skipped after %.0f s of conversation: %r", self._wait_s, text)
                return False
            await asyncio.sleep(POLL_S)
        if wanted is not None and not wanted():
            return False
        return await self._speech.speak_aside(turn, text)
