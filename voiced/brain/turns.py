"""The brain around each turn: the barrier (with a filler) before, the analysis once the reply is out.

One per room (the daemon's own microphone, each satellite), each with that room's voice and bus, all
around the home's one brain."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing

from voiced.brain.brain import Brain
from voiced.brain.state import TurnRecord
from voiced.bus import EventBus
from voiced.events import TtsStarted
from voiced.mouth.agent import TurnContext
from voiced.mouth.speech import SpeechOutput

PLAY_WAIT_S = 3.0
# A wait shorter than this is not worth the filler, which takes longer to say (a reply cut off by
# barge-in is saved as heard just as the request that cut it comes: milliseconds, not a moment).
FILLER_AFTER_S = 0.5


class TurnThinking:
    def __init__(
        self, brain: Brain, speech: SpeechOutput | None, bus: EventBus, filler: str, room: str = ""
    ) -> None:
        """`speech` and `bus`: the room's voice and the bus its replies are heard on; `room`: where
        its turns are (audio.room, or a satellite's room)."""
        self._brain = brain
        self._room = room
        self._speech = speech
        self._bus = bus
        self._filler = filler
        self._recorded: dict[int, bool] = {}  # turn -> recorded as interrupted
        self._understood: dict[int, Callable[[], bool]] = {}  # turn -> the agent's word on it
        self._confidence: dict[int, float] = {}  # turn -> how sure the ear was of its words

    async def prepare(self, turn: int, confidence: float = 1.0) -> TurnContext:
        """Wait at the barrier for this room's last analysis (saying the filler if the wait is longer
        than a moment), then the context. `confidence`: how sure the ear was of the turn's words,
        for its record."""
        self._confidence[turn] = confidence
        if self._speech is not None and not await self._brain.settled(self._room, FILLER_AFTER_S):
            await self._speech.speak(turn, self._filler)
        await self._brain.barrier(turn, self._room)
        return self._brain.context(turn, self._room)

    async def watch(
        self,
        turn: int,
        user: str,
        pieces: AsyncGenerator[str, None],
        understood: Callable[[], bool] = lambda: True,
    ) -> AsyncGenerator[str, None]:
        """Pass the reply through; once it is all produced (and playing), the brain starts on it."""
        self._understood[turn] = understood
        said: list[str] = []
        async with aclosing(pieces):
            async for piece in pieces:
                said.append(piece)
                yield piece
        self._record(turn, user, "".join(said), interrupted=False)

    def end(self, turn: int, user: str, heard: str, *, interrupted: bool) -> None:
        """The turn is over; if the reply never finished (barge-in, failure), record what was heard."""
        if interrupted and self._recorded.get(turn) is False:
            self._brain.amend(turn, heard.strip(), self._room)  # analysed whole; only part was heard
            self._recorded[turn] = True
        self._record(turn, user, heard, interrupted=interrupted)
        for old in [t for t in self._recorded if t < turn - 8]:  # turns are numbered in order
            del self._recorded[old]
        for old in [t for t in self._understood if t < turn - 8]:
            del self._understood[old]
        for old in [t for t in self._confidence if t < turn - 8]:
            del self._confidence[old]

    def _record(self, turn: int, user: str, reply: str, *, interrupted: bool) -> None:
        if turn in self._recorded:
            return
        self._recorded[turn] = interrupted
        understood = self._understood.pop(turn, lambda: True)()
        record = TurnRecord(
            turn=turn,
            user=user,
            reply=reply.strip(),
            understood=understood,
            interrupted=interrupted,
            asr_confidence=self._confidence.pop(turn, 1.0),
            room=self._room,
        )
        self._brain.finished(record, None if interrupted else self._playing(turn))

    async def _playing(self, turn: int) -> None:
        """Until the reply is audible (at most PLAY_WAIT_S): the first words must not wait for us."""
        if self._speech is None or self._speech.started_turn >= turn:  # None: tests without a voice
            return
        events = self._bus.subscribe(f"turn-{turn}-playing")  # before any await: TtsStarted can't slip by
        try:
            async with asyncio.timeout(PLAY_WAIT_S):
                while not (isinstance(event := await events.get(), TtsStarted) and event.turn >= turn):
                    pass
        except TimeoutError:
            pass
        finally:
            self._bus.unsubscribe(events)
