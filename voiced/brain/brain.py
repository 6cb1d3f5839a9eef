"""The brain's orchestration (seed 000): the mouth never waits for it, except at the barrier.

When a turn's reply has been produced (it is already playing), `finished` starts the analysis in
the background: analyst, then the judge if something was flagged, then the summary every N turns,
then the state is saved and published. The next turn calls `barrier` first: it waits for that
analysis, at most `barrier_timeout_s`; past that the analysis is cancelled, the rules alone record
that turn (the model's word on it is lost, the turn is not), and the overrun is logged. `context`
hands the mouth the memory, the state and the notice, and the notice is used up.

One brain serves every room of the home (the daemon's own microphone, each satellite): the memory,
the preferences and the profile are the home's, so what is said in the kitchen is known in the
bedroom. The analyses run one at a time, in the order the turns finished. A room's turn waits at the
barrier for its own room's last analysis (and so for every one begun before it), never for one of
another room's begun after; a notice is for the next turn of the room whose turn it came from.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine
from typing import Any

from voiced.brain.analyst import missing_slots
from voiced.brain.delivery import Deliverable, Say, ScenesDelivery
from voiced.brain.news import DeviceNews
from voiced.brain.spine import TurnEvents
from voiced.brain.state import ConversationState, PainPoint, TurnRecord, utcnow
from voiced.brain.store import StateStore
from voiced.brain.thinkers import Thinkers
from voiced.bus import EventBus
from voiced.config import BrainConfig
from voiced.events import BarrierWait, BrainFinished, StateUpdated
from voiced.mouth.agent import TurnContext
from voiced.supervision import Supervision
from voiced.tasks import STOP_TIMEOUT_S, cancel_and_wait

_LOGGER = logging.getLogger(__name__)


class Brain:
    def __init__(
        self,
        *,
        store: StateStore,
        state: ConversationState,
        thinkers: Thinkers,
        bus: EventBus,
        config: BrainConfig,
        architect: Deliverable | None = None,
        say: Say | None = None,
        supervision: Supervision | None = None,
        slots: tuple[str, ...],
    ) -> None:
        """`supervision`: where a failed analysis is counted (degraded until one goes well); `slots`:
        what the interview asks about in this home (`analyst.interview_slots` of its device kinds)."""
        self.slots = slots
        self._supervision = supervision or Supervision()
        self._delivery = ScenesDelivery(architect, say)
        self._store = store
        self._state = state
        self._thinkers = thinkers
        self._bus = bus
        self._config = config
        self._task: asyncio.Task[None] | None = None
        self._last: dict[str, asyncio.Task[None]] = {}  # room -> the last analysis of one of its turns
        self._unfinished: dict[asyncio.Task[None], TurnRecord] = {}  # analyses under way
        self._news = DeviceNews()  # an offline notice goes once its device is back
        self._done = TurnEvents(bus, self._news)
        self.run_times: list[float] = []

    @property
    def state(self) -> ConversationState:
        return self._state

    async def settled(self, room: str = "", within_s: float = 0.0) -> bool:
        """Whether the last analysis of one of `room`'s turns (and so every one before it) is done,
        or is within `within_s`: waited for that long at most, never given up."""
        task = self._last.get(room)
        if task is not None and not task.done() and within_s > 0:
            await asyncio.wait([task], timeout=within_s)
        return task is None or task.done()

    def context(self, turn: int, room: str = "") -> TurnContext:
        """Memory, state and notice for this turn's reply, in `room`; the notice, if it is this
        room's (or any room's), is used up."""
        self._done.collect()
        state = self._state = self._news.fresh(self._state)
        lines = []
        if state.compressed_memory:
            lines.append(f"[memory of earlier turns]\n{state.compressed_memory}")
        lines.append(f"[what we know] {self.digest()}")
        if state.notice_room not in (None, room):  # another room's: kept for its next turn
            return TurnContext(for_model=tuple(lines))
        if state.system_notice:
            lines.append(f"[notice for this reply] {state.system_notice}")
            _LOGGER.info("turn %d: notice used: %s", turn, state.system_notice)
        say, confirm = state.notice_say, state.notice_confirm
        if state.system_notice or state.notice_say or state.notice_confirm:
            # Saved with the next analysis, off this turn's critical path.
            used = {
                "system_notice": None,
                "notice_say": None,
                "notice_confirm": False,
                "notice_device": None,
                "notice_room": None,
            }
            self._state = state.model_copy(update=used)
        return TurnContext(for_model=tuple(lines), say=say, confirm=confirm)

    def digest(self) -> str:
        state = self._state
        prefs = state.preferences.model_dump(exclude_defaults=True)
        profile = state.user_profile.model_dump(exclude_defaults=True)
        pains = [f"{p.kind}: {p.detail}" for p in state.pain_points[-3:]]
        return f"status {state.status}; profile {profile}; preferences {prefs}; recent problems {pains}"

    def missing(self) -> list[str]:
        """What the interview still has to ask about in this home."""
        return missing_slots(self._state, self.slots)

    def begin_interview(self, room: str = "") -> str:
        """Status Profiling, the interview held in `room`; returns the first thing to ask about."""
        slot = (self.missing() or list(self.slots))[0]
        update = {"status": "Profiling", "interview_slot": slot, "interview_room": room}
        self._state = self._state.model_copy(update=update)
        self._bus.publish(StateUpdated(state=self._state.model_dump(mode="json")))
        return slot

    def request_change(self) -> None:
        """The user asked to change a scene: the next analysis rewrites them."""
        self._delivery.request_change()

    def amend(self, turn: int, heard: str, room: str = "") -> None:
        """A reply already analysed was cut off by barge-in: record what was really heard. `room`:
        where the turn was."""
        for task, record in self._unfinished.items():  # not analysed yet, or maybe given up on
            if record.turn == turn:
                self._unfinished[task] = record.model_copy(update={"reply": heard, "interrupted": True})
        previous = self._task
        self._task = asyncio.create_task(self._amend(turn, heard, previous), name=f"brain-amend-{turn}")
        self._last[room] = self._task

    async def _amend(self, turn: int, heard: str, previous: asyncio.Task[None] | None) -> None:
        if previous is not None and not previous.done():
            await asyncio.wait([previous])
        if any(t.turn == turn and t.interrupted for t in self._state.recent_turns):
            return  # it was analysed as heard
        turns = [
            t.model_copy(update={"reply": heard, "interrupted": True}) if t.turn == turn else t
            for t in self._state.recent_turns
        ]
        pain = PainPoint(turn=turn, kind="interrupted", detail=heard[:120])
        state = self._state.model_copy(
            update={"recent_turns": turns, "pain_points": [*self._state.pain_points, pain]}
        )
        await asyncio.to_thread(self._store.save, state)
        self._state = state
        self._bus.publish(StateUpdated(state=state.model_dump(mode="json")))

    def ask(self, slot: str | None) -> None:
        self._state = self._state.model_copy(update={"interview_slot": slot})

    def end_interview(self) -> None:
        update = {"status": "Conversation", "interview_slot": None, "interview_room": None}
        self._state = self._state.model_copy(update=update)

    def finished(self, record: TurnRecord, playing: Coroutine[Any, Any, None] | None = None) -> None:
        """The turn's reply is out: think about it in the background, once `playing` says the reply
        has started to play (so the brain never competes with the reply's first words)."""
        previous = self._task
        self._task = asyncio.create_task(
            self._think(record, previous, playing), name=f"brain-turn-{record.turn}"
        )
        self._unfinished[self._task] = record
        self._last[record.room] = self._task

    async def barrier(self, turn: int, room: str = "") -> bool:
        """Wait for the last analysis of a turn of `room` (and so for all before it); False if it
        overran and was given up (and with it every analysis under way, whichever room's)."""
        task = self._last.get(room)
        if task is None or task.done():
            return True
        start = time.monotonic()
        _done, pending = await asyncio.wait([task], timeout=self._config.barrier_timeout_s)
        waited = time.monotonic() - start
        if pending:
            _LOGGER.warning(
                "turn %d: the last turn's analysis overran %.0f s; going on with the last good state",
                turn,
                self._config.barrier_timeout_s,
            )
            await self._give_up(self._task or task)  # to the last of all: another room's may follow
        self._bus.publish(BarrierWait(turn=turn, waited_s=waited, timed_out=bool(pending), room=room))
        return not pending

    async def _give_up(self, last: asyncio.Task[None], *, speak: bool = True) -> None:
        """Cancel every analysis under way (the last one may be an amend waiting on them); the
        rules alone (milliseconds) then record each of their turns, in order."""
        await cancel_and_wait({last, *self._unfinished})
        fallback = self._thinkers.fallback
        given_up = list(self._unfinished.items())  # in the order the turns finished, whichever room's
        self._unfinished.clear()
        for _task, record in given_up:
            if fallback is None:
                continue
            start = time.monotonic()
            record = self._done.with_events(record)
            try:
                state = await self._analyse(fallback, record, speak=speak)
            except Exception:
                _LOGGER.exception("turn %d: even the rules' analysis failed; keeping the state", record.turn)
                continue
            _LOGGER.info("turn %d: the rules' analysis stands in for the model's", record.turn)
            self._apply(record.turn, state, start, record.room)

    async def aclose(self) -> None:
        if self._task is not None and not self._task.done():
            await asyncio.wait([self._task], timeout=STOP_TIMEOUT_S)
            if not self._task.done():
                await self._give_up(self._task, speak=False)  # shutting down: record, say nothing
        self._done.collect()
        if (fresh := self._news.fresh(self._state)) is not self._state:
            self._state = fresh  # the device came back since the last turn: not said at the next start
            await asyncio.to_thread(self._store.save, fresh)
        await self._delivery.aclose()
        self._done.close()
        if self._thinkers.close is not None:
            await self._thinkers.close()

    async def _analyse(
        self, thinkers: Thinkers, record: TurnRecord, *, speak: bool = True
    ) -> ConversationState:
        before = self._state
        state, flags = await thinkers.analyst.analyse(before, record)
        notice = await thinkers.judge.judge(state, flags) if flags else None
        if notice is not None:
            state = state.model_copy(
                update={
                    "system_notice": notice.for_model,
                    "notice_say": notice.say,
                    "notice_confirm": notice.confirm,
                    "notice_device": notice.device,
                    "notice_room": record.room,
                }
            )
            state = self._news.fresh(state)  # back already, since the failure that flagged it
        judged = state.system_notice
        state = await self._delivery.deliver(before, state, record.turn, thinkers.judge.approve, speak=speak)
        if state.system_notice != judged:  # the delivery's own notice (the scenes held back, or unfit)
            state = state.model_copy(update={"notice_room": record.room})
        if state.processed_turns % self._config.summary_every == 0:
            state = await thinkers.summary.summarize(state)
        state = state.model_copy(update={"last_updated": utcnow()})
        await asyncio.to_thread(self._store.save, state)
        return state

    def _apply(self, turn: int, state: ConversationState, start: float, room: str = "") -> None:
        self._state = state
        self._delivery.settled(turn)
        run_s = time.monotonic() - start
        self.run_times.append(run_s)
        _LOGGER.info("turn %d: brain done in %.2f s; notice: %s", turn, run_s, state.system_notice)
        self._bus.publish(BrainFinished(turn=turn, run_s=run_s, notice=state.system_notice, room=room))
        self._bus.publish(StateUpdated(state=state.model_dump(mode="json")))

    async def _think(
        self,
        record: TurnRecord,
        previous: asyncio.Task[None] | None,
        playing: Coroutine[Any, Any, None] | None = None,
    ) -> None:
        if playing is not None:
            await playing
        if previous is not None and not previous.done():
            await asyncio.wait([previous])
        start = time.monotonic()
        me = asyncio.current_task()
        if me is not None and me in self._unfinished:
            record = self._done.with_events(self._unfinished[me])  # cut off meanwhile: as heard
            self._unfinished[me] = record
        else:
            record = self._done.with_events(record)
        try:
            state = await self._analyse(self._thinkers, record)
        except asyncio.CancelledError:
            self._bus.publish(
                BrainFinished(
                    turn=record.turn, run_s=time.monotonic() - start, failed="overran", room=record.room
                )
            )
            raise
        except Exception as exc:  # a broken analysis must not take the conversation down
            _LOGGER.exception("turn %d: analysis failed; keeping the previous state", record.turn)
            self._bus.publish(
                BrainFinished(
                    turn=record.turn, run_s=time.monotonic() - start, failed=str(exc), room=record.room
                )
            )
            self._supervision.failed("brain", exc)  # the next turn's analysis is its restart
        else:
            self._apply(record.turn, state, start, record.room)
            self._supervision.recovered("brain")
        if me is not None:
            self._unfinished.pop(me, None)
