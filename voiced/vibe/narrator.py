"""Lines outside a turn's reply (a scene's narration, the interview's closing summary, a plan's news),
said through the mouth of the room they belong to, only when that room's conversation pauses.

A line belongs to the room of the turn it is for. A satellite's room numbers its turns in a range of
its own (voiced/satellites/serve.py) and registers its voice for that range while it is served: the
line is said on that satellite, at a pause of that room. The line of any other turn (the daemon's own
microphone's, the web's typed turns, a plan's news: turn 0) or of a satellite that is away just then
is said on the daemon's own speaker, at a pause of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from voiced.bus import EventBus
from voiced.mouth.speech import SpeechOutput

_LOGGER = logging.getLogger(__name__)


def _always() -> bool:
    return True


@dataclass(frozen=True, eq=False)
class RoomVoice:
    """A room's speech output and its floor: `busy` (a turn of the room's is being handled or waits)
    is asked again after each event on `bus`, the room's own (its turns' and its voice's)."""

    where: str  # for the log: "the daemon's own speaker", "satellite kitchen_satellite (kitchen)"
    speech: SpeechOutput
    bus: EventBus
    busy: Callable[[], bool]
    here: Callable[[], bool] = _always  # its satellite is connected: what it is sent is heard


class RoomVoices:
    """The rooms' voices by the turns each numbers; a turn of none of them is the local voice's."""

    def __init__(self, local: RoomVoice) -> None:
        self.local = local
        self._rooms: list[tuple[range, RoomVoice]] = []

    @contextlib.contextmanager
    def serving(self, turns: range, voice: RoomVoice) -> Iterator[None]:
        """The lines of `turns` are `voice`'s for as long as the block runs."""
        taken = [v.where for r, v in self._rooms if r.start < turns.stop and turns.start < r.stop]
        if taken:
            raise ValueError(f"turns {turns.start}-{turns.stop - 1} of {voice.where} are {taken[0]}'s")
        entry = (turns, voice)
        self._rooms.append(entry)
        try:
            yield
        finally:
            self._rooms = [e for e in self._rooms if e is not entry]

    def of_turn(self, turn: int) -> RoomVoice:
        """Where a line for `turn` is said: its room's voice, else (no room's, or away) the local one."""
        for turns, voice in self._rooms:
            if turn in turns:
                if voice.here():
                    return voice
                _LOGGER.info("turn %d: %s is away; said on %s", turn, voice.where, self.local.where)
                break
        return self.local


class SpokenNarrator:
    def __init__(self, voices: RoomVoices, wait_s: float) -> None:
        """`voices`: where each turn's lines are said, and when that room's floor is free; a line
        never starts on top of a turn of its room (waiting at most `wait_s`)."""
        self._voices = voices
        self._wait_s = wait_s

    async def __call__(self, text: str, turn: int, wanted: Callable[[], bool] | None = None) -> bool:
        """Say `text` at the next pause of `turn`'s room; `wanted` is asked again then (the news may
        have been told)."""
        voice = self._voices.of_turn(turn)
        if not await self._floor_free(voice):
            _LOGGER.info(
                "narration skipped after %.0f s of conversation (%s): %r", self._wait_s, voice.where, text
            )
            return False
        if wanted is not None and not wanted():
            return False
        return await voice.speech.speak_aside(turn, text)

    async def _floor_free(self, voice: RoomVoice) -> bool:
        """Wait (at most wait_s) until no turn of the room is under way and it says nothing."""
        events = voice.bus.subscribe("narrator")
        try:
            async with asyncio.timeout(self._wait_s):
                while voice.busy() or voice.speech.speaking:
                    await events.get()
            return True
        except TimeoutError:
            return False
        finally:
            voice.bus.unsubscribe(events)
