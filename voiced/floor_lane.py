"""The barge-in lane: feeds the floor policy (voiced/ear/floor.py) and carries its actions out.

Nothing here waits in a queue: the ear calls in synchronously as it hears, the speech output
as each reply becomes audible and ends, and each action (pause, resume, cancel, drop) is done
on the spot, ahead of any turn waiting (as pipecat's system frames overtake data frames). Only
the words arrive later, from Whisper; they are weighed here (our echo? a stop word? a request?)
and fed to the same policy. The daemon asks the lane whether an utterance spoken over a reply
is its next turn (`outcome`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from voiced.bus import EventBus
from voiced.ear.bargein import Evidence, Verdict, weigh
from voiced.ear.floor import (
    Acoustics,
    Cancel,
    Drop,
    FloorAction,
    FloorEvent,
    FloorPolicy,
    Pause,
    ReplyEnded,
    ReplyStarted,
    Resume,
    Stage,
    Take,
    VoiceOver,
    Words,
)
from voiced.events import BargeInIgnored, ReplyPaused, ReplyResumed
from voiced.mouth.speech import SpeechOutput
from voiced.tasks import cancel_and_wait

_LOGGER = logging.getLogger(__name__)
OUTCOMES_KEPT = 50  # utterances whose outcome nobody collected are forgotten after this many


class FloorLane:
    def __init__(
        self,
        *,
        bus: EventBus,
        speech: SpeechOutput,
        policy: FloorPolicy,
        echo_db: float,
        cancel: Callable[[str], None],
        drop: Callable[[int], None],
        room: str = "",
    ) -> None:
        """`cancel(reason)`: stop what plays now (the daemon's interrupt); `drop(turn)`: the ear
        forgets the utterance in progress if it is `turn`. `room`: named by the lane's events."""
        self._bus = bus
        self._room = room
        self._speech = speech
        self._policy = policy
        self._echo_db = echo_db
        self._cancel = cancel
        self._drop = drop
        self._words: dict[int, list[asyncio.Task[None]]] = {}
        self._outcomes: dict[int, asyncio.Future[Verdict]] = {}
        self._decided: dict[int, Verdict] = {}  # STOP or SPEECH, by utterance
        speech.follow(self._reply_state)

    # Events in: from the speech output and from the ear.
    def _reply_state(self, reply: int, audible: bool) -> None:
        self.feed(ReplyStarted(reply) if audible else ReplyEnded(reply))

    def voice_over(self, turn: int) -> None:
        """Speech began while our voice plays."""
        self._outcome(turn)
        self.feed(VoiceOver(turn, self._speech.reply_id))

    def acoustics(self, turn: int, unexplained_db: float | None, *, goes_on: bool = False) -> None:
        self.feed(Acoustics(turn, unexplained_db, goes_on))

    def words(self, turn: int, evidence: asyncio.Task[Evidence], stage: Stage) -> None:
        """Evidence on speech over the reply, words included, when Whisper has them."""
        earlier = list(self._words.get(turn, []))
        task = asyncio.create_task(self._weigh(turn, evidence, stage, earlier), name=f"floor-words-{turn}")
        self._words.setdefault(turn, []).append(task)
        task.add_done_callback(lambda done: self._word_done(turn, done))

    def abandoned(self, turn: int) -> None:
        """The ear gave the utterance up unheard (muted, restarted): no words will come."""
        self.feed(Words(turn, None, "", "final"))

    async def outcome(self, turn: int) -> Verdict:
        """What the utterance `turn`, spoken over a reply, turned out to be (SPEECH: a turn)."""
        try:
            return await self._outcome(turn)
        finally:
            self._outcomes.pop(turn, None)
            self._decided.pop(turn, None)

    async def aclose(self) -> None:
        await cancel_and_wait([task for tasks in self._words.values() for task in tasks])

    def feed(self, event: FloorEvent) -> None:
        for action in self._policy.feed(event):
            self._act(action)

    # Internals.
    def _outcome(self, turn: int) -> asyncio.Future[Verdict]:
        if turn not in self._outcomes:
            self._outcomes[turn] = asyncio.get_running_loop().create_future()
            for old in [t for t in self._outcomes if t < turn - OUTCOMES_KEPT]:
                self._outcomes.pop(old).cancel()
                self._decided.pop(old, None)
        return self._outcomes[turn]

    def _settle(self, turn: int, verdict: Verdict) -> None:
        future = self._outcomes.get(turn)
        if future is not None and not future.done():
            future.set_result(verdict)

    async def _weigh(
        self,
        turn: int,
        evidence_task: asyncio.Task[Evidence],
        stage: Stage,
        earlier: list[asyncio.Task[None]],
    ) -> None:
        await asyncio.wait([evidence_task])  # its own cancellation (an early guess withdrawn) is news
        evidence: Evidence | None = None
        if not evidence_task.cancelled():
            if evidence_task.exception() is None:
                evidence = evidence_task.result()
            else:
                _LOGGER.error("turn %d: no words over the reply", turn, exc_info=evidence_task.exception())
        if evidence is None and stage != "final":
            return  # an early look withdrawn or failed: the end of the utterance decides
        if earlier:  # news about less of the utterance is fed first
            await asyncio.wait(earlier)
        verdict = (
            None if evidence is None else weigh(evidence, self._speech.recently_spoken, echo_db=self._echo_db)
        )
        if evidence is not None:
            _LOGGER.info(
                "speech over the reply (%s): %r (microphone as is: %r, not our echo: %s dB) -> %s",
                stage,
                evidence.cleaned,
                evidence.raw,
                "?" if evidence.unexplained_db is None else f"{evidence.unexplained_db:.1f}",
                verdict.value if verdict is not None else "?",
            )
        self.feed(Words(turn, verdict, evidence.cleaned if evidence is not None else "", stage))

    def _word_done(self, turn: int, task: asyncio.Task[None]) -> None:
        tasks = self._words.get(turn, [])
        if task in tasks:
            tasks.remove(task)
        if not tasks:
            self._words.pop(turn, None)
        if not task.cancelled() and task.exception() is not None:
            _LOGGER.error("barge-in words failed", exc_info=task.exception())

    def _act(self, action: FloorAction) -> None:
        speech = self._speech
        live = speech.speaking and speech.reply_id == getattr(action, "reply", -1)
        if isinstance(action, Pause):
            if live:
                speech.pause()
                self._bus.publish(
                    ReplyPaused(
                        turn=speech.started_turn,
                        by_turn=action.utterance,
                        unexplained_db=round(action.unexplained_db, 1),
                        room=self._room,
                    )
                )
        elif isinstance(action, Resume):
            if live and speech.paused:
                speech.resume()
                self._bus.publish(
                    ReplyResumed(turn=speech.started_turn, by_turn=action.utterance, room=self._room)
                )
        elif isinstance(action, Cancel):
            self._decided[action.utterance] = action.verdict
            if live:
                self._cancel(f"heard {action.heard!r} ({action.verdict.value})")
            if action.verdict is Verdict.STOP:
                self._settle(action.utterance, Verdict.STOP)
        elif isinstance(action, Drop):
            self._drop(action.utterance)
            self._bus.publish(
                BargeInIgnored(
                    turn=action.utterance, heard=action.heard, verdict=action.verdict.value, room=self._room
                )
            )
            self._settle(action.utterance, action.verdict)
        elif isinstance(action, Take):
            self._settle(action.utterance, Verdict.SPEECH)
