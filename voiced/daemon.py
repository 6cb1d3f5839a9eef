"""The daemon: ear → agent → speech, one turn at a time, with a barge-in lane beside it.

Each turn runs as its own task. A barge-in does not wait in the turn queue: the ear calls
the floor lane directly (floor_lane.py), which pauses the speaker at once and, once the words
are known, resumes it or interrupts: the speaker is silenced and the turn's task cancelled,
so the LLM stream, pending synthesis and playback stop together. The agent is told how much
of its reply was actually heard.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import time

import numpy as np

from voiced.brain.turns import TurnThinking
from voiced.bus import EventBus
from voiced.ear.bargein import Verdict
from voiced.ear.floor import FloorPolicy, FloorSettings
from voiced.ear.utterance import Heard, Listener, Utterance
from voiced.events import BargeIn, Transcript, TurnFinished
from voiced.floor_lane import FloorLane
from voiced.language.replies import say
from voiced.mouth.agent import NO_CONTEXT, Agent
from voiced.mouth.speech import SpeechOutput, SpeechProgress
from voiced.tasks import cancel_and_wait

_LOGGER = logging.getLogger(__name__)

FAILURE_REPLY = say("failure")
# The tail of our own voice still in the room after the last sample is handed over.
ECHO_TAIL_S = 0.3
OUTSIDE_TURN_BASE = 1_000_000  # typed turns from the web: far above any the ear will number


class Daemon:
    def __init__(
        self,
        *,
        bus: EventBus,
        ear: Listener,
        agent: Agent,
        speech: SpeechOutput,
        echo_db: float = -10.0,
        thinking: TurnThinking | None = None,
        room: str = "",
    ) -> None:
        """`room`: the room whose turns these are (audio.room, or a satellite's), named by their events."""
        self._thinking = thinking
        self._room = room
        self._echo_db = echo_db
        self._bus = bus
        self._ear = ear
        self._agent = agent
        self._speech = speech
        self._utterances: asyncio.Queue[Utterance | None] = asyncio.Queue()
        self._tasks: list[asyncio.Task[None]] = []
        self._current: asyncio.Task[None] | None = None
        self._current_turn = 0
        self._turn_open = False  # until its TurnFinished is published, so listeners see it free
        self.floor = FloorLane(
            bus=bus,
            speech=speech,
            policy=FloorPolicy(FloorSettings(echo_db=echo_db)),
            echo_db=echo_db,
            cancel=self.interrupt,
            drop=lambda turn: self._ear.drop(turn),
            room=room,
        )
        self.turns_done = 0
        self._outside_turns = 0

    @property
    def busy(self) -> bool:
        """A turn is being handled or waits to be: background speech must hold back."""
        return self._turn_open or not self._utterances.empty()

    def take_turn(self, text: str) -> int:
        """Queue a typed turn from outside the ear (the web); returns its turn number.

        Numbered from OUTSIDE_TURN_BASE so it never meets one of the ear's own numbers.
        """
        self._outside_turns += 1
        turn = OUTSIDE_TURN_BASE + self._outside_turns

        async def known() -> Heard:
            return Heard(text, asr_s=0.0, early=False)

        transcript = asyncio.create_task(known(), name=f"outside-turn-{turn}")
        silence = np.zeros(0, dtype=np.int16)
        self._utterances.put_nowait(Utterance(turn, silence, time.monotonic(), transcript))
        return turn

    async def run(self) -> None:
        """Run until the input ends and every turn has finished (or until cancelled)."""
        ear_task = asyncio.create_task(self._listen(), name="ear")
        turns_task = asyncio.create_task(self._take_turns(), name="turns")
        self._tasks = [ear_task, turns_task]
        try:
            await turns_task
            await ear_task
        finally:
            await self.stop()

    async def stop(self) -> None:
        await cancel_and_wait([*self._tasks, *([self._current] if self._current else [])])
        await self.floor.aclose()
        await self._agent.aclose()

    def interrupt(self, reason: str) -> None:
        # A narration is what plays, even with a turn waiting behind it for the one voice: cut it
        # and leave that turn be (it is the user's own earlier request).
        narration_turn = self._speech.cut_asides()
        if narration_turn is not None:
            self._bus.publish(BargeIn(turn=narration_turn, reason=reason, room=self._room))
            return
        current = self._current
        if current is None or current.done() or current.cancelling():
            return  # nothing to stop, or already stopping: one barge-in, one cancel
        self._speech.silence_now()
        current.cancel()
        self._bus.publish(BargeIn(turn=self._current_turn, reason=reason, room=self._room))

    async def _listen(self) -> None:
        try:
            await self._ear.run(self._utterances.put_nowait, hooks=self.floor)
        finally:
            self._utterances.put_nowait(None)

    async def _take_turns(self) -> None:
        while (utterance := await self._utterances.get()) is not None:
            if utterance.over_reply == "check" and not await self._worth_interrupting(utterance):
                continue
            await self._finish_current()
            self._current_turn = utterance.turn
            self._turn_open = True
            self._current = asyncio.create_task(self._turn(utterance), name=f"turn-{utterance.turn}")
        await self._finish_current()

    async def _worth_interrupting(self, utterance: Utterance) -> bool:
        """Speech over our reply: the floor decides (it has paused, cancelled or resumed the
        reply already); a request is the next turn, a stop word is heard and is no turn."""
        verdict = await self.floor.outcome(utterance.turn)
        if verdict is Verdict.STOP:
            heard = await utterance.transcript
            self._bus.publish(
                Transcript(turn=utterance.turn, text=heard.text, asr_s=heard.asr_s, room=self._room)
            )
            await self._finish_current()
        return verdict is Verdict.SPEECH

    async def _finish_current(self) -> None:
        if self._current is not None:
            await asyncio.wait([self._current])
            self._current = None

    async def _turn(self, utterance: Utterance) -> None:
        progress = SpeechProgress()
        interrupted = False
        try:
            heard = await utterance.transcript
            text = heard.text
            self._bus.publish(
                Transcript(
                    turn=utterance.turn,
                    text=text,
                    asr_s=heard.asr_s,
                    early=heard.early,
                    confidence=round(heard.confidence, 3),
                    doubtful=heard.doubtful,
                    alternatives=heard.alternatives,
                    room=self._room,
                )
            )
            if not text.strip():
                return
            thinking = self._thinking
            context = NO_CONTEXT
            if thinking is not None:  # the barrier, then the brain's word: how sure the ear was goes too
                context = await thinking.prepare(utterance.turn, heard.confidence)
            context = dataclasses.replace(
                context,
                doubtful=frozenset(heard.doubtful),
                alternatives=heard.alternatives,
                heard=not heard.typed,
            )
            pieces = self._agent.reply(utterance.turn, text, context)
            understood = functools.partial(self._agent.understood, utterance.turn)
            if thinking is not None:
                pieces = thinking.watch(utterance.turn, text, pieces, understood)
            try:
                await self._speech.say(utterance.turn, pieces, progress, understood)
            except asyncio.CancelledError:
                interrupted = True
                raise
            except Exception:
                _LOGGER.exception("turn %d failed", utterance.turn)
                await self._speech.speak(utterance.turn, FAILURE_REPLY)
            finally:
                self._agent.spoken(utterance.turn, progress.text, interrupted=interrupted)
                if thinking is not None:
                    thinking.end(utterance.turn, text, progress.text, interrupted=interrupted)
        finally:
            self._turn_open = False
            self._bus.publish(TurnFinished(turn=utterance.turn, room=self._room))
            self.turns_done += 1


class HalfDuplexGuard:
    """Fallback without echo cancellation: the ear is deaf while we speak and for a short tail."""

    def __init__(self, speech: SpeechOutput) -> None:
        self._speech = speech
        self._deaf_until = 0.0

    def __call__(self) -> bool:
        now = time.monotonic()
        if self._speech.speaking:
            self._deaf_until = now + ECHO_TAIL_S
            return True
        return now < self._deaf_until
