"""The brain around each turn: the barrier (with a filler) before, the analysis once the reply is out."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from contextlib import aclosing

from voiced.brain.brain import Brain
from voiced.brain.state import TurnRecord
from voiced.mouth.agent import TurnContext
from voiced.mouth.intents import NOT_UNDERSTOOD
from voiced.mouth.speech import SpeechOutput

PLAY_WAIT_S = 3.0


class TurnThinking:
    def __init__(self, brain: Brain, speech: SpeechOutput, filler: str) -> None:
        self._brain = brain
        self._speech = speech
        self._filler = filler
        self._recorded: dict[int, bool] = {}  # turn -> recorded as interrupted

    async def prepare(self, turn: int) -> TurnContext:
        """Wait at the barrier (saying the filler if there is a wait), then the context."""
        if self._brain.busy:
            await self._speech.speak(turn, self._filler)
        await self._brain.barrier(turn)
        return self._brain.context(turn)

    async def watch(
        self, turn: int, user: str, pieces: AsyncGenerator[str, None]
    ) -> AsyncGenerator[str, None]:
        """Pass the reply through; once it is all produced (and playing), the brain starts on it."""
        said: list[str] = []
        async with aclosing(pieces):
            async for piece in pieces:
                said.append(piece)
                yield piece
        self._record(turn, user, "".join(said), interrupted=False)

    def end(self, turn: int, user: str, heard: str, *, interrupted: bool) -> None:
        """The turn is over; if the reply never finished (barge-in, failure), record what was heard."""
        if interrupted and self._recorded.get(turn) is False:
            self._brain.amend(turn, heard.strip())  # analysed with the whole reply; only part was heard
            self._recorded[turn] = True
        self._record(turn, user, heard, interrupted=interrupted)
        for old in [t for t in self._recorded if t < turn - 8]:  # turns are numbered in order
            del self._recorded[old]

    def _record(self, turn: int, user: str, reply: str, *, interrupted: bool) -> None:
        if turn in self._recorded:
            return
        self._recorded[turn] = interrupted
        understood = NOT_UNDERSTOOD not in reply
        record = TurnRecord(
            turn=turn, user=user, reply=reply.strip(), understood=understood, interrupted=interrupted
        )
        self._brain.finished(record, None if interrupted else self._playing(turn))

    async def _playing(self, turn: int) -> None:
        """Until the reply is audible (at most PLAY_WAIT_S): the first words must not wait for us."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + PLAY_WAIT_S
        while self._speech is not None and self._speech.started_turn < turn and loop.time() < deadline:
            await asyncio.sleep(0.01)
