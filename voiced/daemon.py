"""The daemon: ear → agent → speech, one turn at a time, with a barge-in lane beside it.

Each turn runs as its own task. A barge-in does not wait in the turn queue: the ear calls
the lane directly (duck, interrupt), which silences the speaker and cancels the turn's
task: the LLM stream, pending synthesis and playback stop together. The agent is told
how much of its reply was actually heard.
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
from voiced.ear.bargein import Evidence, Verdict, weigh
from voiced.ear.listener import Heard, Listener, Utterance
from voiced.events import BargeIn, BargeInIgnored, Transcript, TurnFinished
from voiced.mouth.agent import NO_CONTEXT, Agent
from voiced.mouth.speech import SpeechOutput, SpeechProgress
from voiced.tasks import cancel_and_wait

_LOGGER = logging.getLogger(__name__)

FAILURE_REPLY = "Sorry, something went wrong on my side."
# The tail of our own voice still in the room after the last sample is handed over.
ECHO_TAIL_S = 0.3
OUTSIDE_TURN_BASE = 1_000_000  # typed turns from the web: far above any the ear will number
VERDICTS_KEPT = 50  # turns: early verdicts older than this are never collected


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
    ) -> None:
        self._thinking = thinking
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
        self._checks: set[asyncio.Task[None]] = set()
        self._verdicts: dict[int, Verdict] = {}  # early verdicts on speech over a reply, by turn
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
        await cancel_and_wait([*self._tasks, *self._checks, *([self._current] if self._current else [])])
        await self._agent.aclose()

    # The barge-in lane: called synchronously from the ear.
    def duck(self) -> None:
        if self._speech.speaking:
            self._speech.duck()

    def check(self, turn: int, evidence: asyncio.Task[Evidence]) -> None:
        # The reply being talked over: a verdict that arrives late must not stop a later turn
        # (such as the one this very utterance has meanwhile become).
        reply = self._current
        task = asyncio.create_task(self._judge_early(turn, evidence, reply), name=f"barge-in-check-{turn}")
        self._checks.add(task)
        task.add_done_callback(self._check_done)

    def _check_done(self, task: asyncio.Task[None]) -> None:
        self._checks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            _LOGGER.error("barge-in check failed", exc_info=task.exception())

    def _weigh(self, evidence: Evidence) -> Verdict:
        verdict = weigh(evidence, self._speech.recently_spoken, echo_db=self._echo_db)
        _LOGGER.info(
            "speech over the reply: %r (microphone as is: %r, not our echo: %s dB) -> %s",
            evidence.cleaned,
            evidence.raw,
            "?" if evidence.unexplained_db is None else f"{evidence.unexplained_db:.1f}",
            verdict.value,
        )
        return verdict

    async def _judge_early(
        self, turn: int, evidence_task: asyncio.Task[Evidence], reply: asyncio.Task[None] | None
    ) -> None:
        evidence = await evidence_task
        verdict = self._weigh(evidence)
        if self._verdicts.get(turn) in (Verdict.STOP, Verdict.SPEECH):
            # A stop or a request already heard in this utterance stands: a check on less of it
            # (a short burst at a pause) that finishes later must not drop the rest of the request.
            return
        self._verdicts[turn] = verdict
        # Bursts too short for a turn, and utterances dropped as echo, never collect theirs.
        for stale in [old for old in self._verdicts if old < turn - VERDICTS_KEPT]:
            del self._verdicts[stale]
        if verdict in (Verdict.STOP, Verdict.SPEECH):
            if reply is self._current:  # still the reply (or narration) it was spoken over
                self.interrupt(f"heard {evidence.cleaned!r} ({verdict.value})")
            return
        self._speech.unduck()
        # Our echo, or a backchannel: drop the rest, or leaked echo would run it on and on.
        self._ear.drop(turn)
        self._bus.publish(BargeInIgnored(turn=turn, heard=evidence.cleaned, verdict=verdict.value))

    def interrupt(self, reason: str) -> None:
        # A narration is what plays, even with a turn waiting behind it for the one voice: cut it
        # and leave that turn be (it is the user's own earlier request).
        narration_turn = self._speech.cut_asides()
        if narration_turn is not None:
            self._bus.publish(BargeIn(turn=narration_turn, reason=reason))
            return
        current = self._current
        if current is None or current.done() or current.cancelling():
            return  # nothing to stop, or already stopping: one barge-in, one cancel
        self._speech.silence_now()
        current.cancel()
        self._bus.publish(BargeIn(turn=self._current_turn, reason=reason))

    async def _listen(self) -> None:
        try:
            await self._ear.run(self._utterances.put_nowait, hooks=self)
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
        """Speech over our reply: our echo, a backchannel, a stop word, or a new request?

        The early checks on this utterance (at a pause, after `confirm_ms`, or on a burst too
        short for a turn) are tied to the reply it was spoken over; they are waited for first.
        A stop word one of them heard has done its work there: said again here, it must not
        stop whatever reply has started since (a turn queued before this utterance may have).
        """
        heard = await utterance.transcript
        name = f"barge-in-check-{utterance.turn}"
        early_checks = [task for task in self._checks if task.get_name() == name]
        if early_checks:
            await asyncio.wait(early_checks)
        early = self._verdicts.pop(utterance.turn, None)
        verdict = early
        if verdict is not Verdict.SPEECH:  # an early "speech" verdict stands: it already interrupted
            evidence = await utterance.evidence if utterance.evidence is not None else None
            verdict = self._weigh(evidence) if evidence is not None else Verdict.SPEECH
        if verdict in (Verdict.ECHO, Verdict.BACKCHANNEL):
            self._speech.unduck()
            self._bus.publish(BargeInIgnored(turn=utterance.turn, heard=heard.text, verdict=verdict.value))
            return False
        if verdict is Verdict.STOP:
            if early is not Verdict.STOP:
                self.interrupt(f"heard {heard.text!r} ({verdict.value})")
            self._bus.publish(Transcript(turn=utterance.turn, text=heard.text, asr_s=heard.asr_s))
            await self._finish_current()
            return False
        self.interrupt(f"heard {heard.text!r} ({verdict.value})")
        return True

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
                )
            )
            if not text.strip():
                return
            thinking = self._thinking
            context = await thinking.prepare(utterance.turn) if thinking is not None else NO_CONTEXT
            if heard.doubtful or heard.alternatives:
                context = dataclasses.replace(
                    context, doubtful=frozenset(heard.doubtful), alternatives=heard.alternatives
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
            self._bus.publish(TurnFinished(turn=utterance.turn))
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
