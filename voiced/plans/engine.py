"""PlanEngine: plans on the graph, checkpointed in SQLite, resumed after a restart.

One asyncio task per plan that is running (named, kept, cancelled and awaited); one timer per plan
waiting for its confirmation (`plans.confirm_timeout_s` cancels it and says so). The checkpoint is
the task's record: every view the API gives is read from it.

Its files are ours to keep sound (voiced/sqlite_files.py): a damaged one is moved aside at start, or
when it fails while running (then the plans are resumed from the ledger on a fresh file, and the turn
goes on). A plan the user confirmed is marked so in the ledger: with its checkpoints lost it still
goes ahead (the ledger keeps a done step from being sent twice), never cancelled for lack of an
answer; one still waiting for its yes waits again, its timeout counted afresh. Finished plans are
pruned (`plans.keep_days`, `plans.keep_finished`), so the files stay bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

from langgraph.types import Command

from voiced.bus import EventBus
from voiced.config import PlansConfig
from voiced.events import (
    PlanCancelled,
    PlanCompleted,
    PlanCreated,
    PlanDecision,
    PlanFailed,
    PlanWaitingConfirmation,
)
from voiced.language.replies import say
from voiced.plans.checkpoints import Checkpoints
from voiced.plans.graph import StepRunner, build_graph
from voiced.plans.ledger import Ledger
from voiced.plans.model import (
    FINISHED,
    ExecutionPlan,
    TaskState,
    cancelled_entry,
    new_state,
    plan_of,
    task_view,
)
from voiced.plans.supervisor import Supervisor, by_rules
from voiced.plans.words import PlanWords, no_answer_line, outcome_line, status_words
from voiced.sqlite_files import is_damage
from voiced.tasks import cancel_and_wait

_LOGGER = logging.getLogger(__name__)
CONFIRMED_WITHIN_S = 2.0  # how long a confirmation waits for the plan's run to record that it goes ahead
DAY_S = 86400.0
T = TypeVar("T")


class Say(Protocol):
    def __call__(self, text: str, turn: int, wanted: Callable[[], bool] | None = None) -> Awaitable[bool]: ...


class NotWaiting(Exception):
    """A confirmation for a plan that is not waiting for one (HTTP 409)."""


class UnknownTask(KeyError):
    pass


class PlanEngine:
    def __init__(
        self,
        config: PlansConfig,
        path: Path,
        bus: EventBus,
        steps: Callable[[Ledger], StepRunner],
        *,
        say: Say | None = None,
        clock: Callable[[], float] = time.time,
        supervisor: Supervisor = by_rules,
        words: PlanWords | None = None,
    ) -> None:
        self._config = config
        self._words = words or PlanWords()
        self._path = path
        self._bus = bus
        self._say = say
        self._clock = clock
        # Its own file: the checkpointer's connection holds write transactions across awaits.
        self.ledger = Ledger(path.with_name(f"{path.stem}-ledger{path.suffix}"))
        graph = build_graph(
            bus, steps(self.ledger), grace_s=config.grace_s, clock=clock, supervisor=supervisor
        )
        self._checkpoints = Checkpoints(path, graph, what="plans' checkpoints", key="plans.checkpoint_file")
        self._recovering = asyncio.Lock()
        self._runs: dict[str, asyncio.Task[None]] = {}
        self._timers: dict[str, asyncio.Task[None]] = {}
        self._open: list[str] = []  # plans not finished, oldest first: what each turn looks at
        self._spoken: set[asyncio.Task[bool]] = set()

    @property
    def _graph(self) -> Any:
        return self._checkpoints.graph

    async def start(self) -> list[str]:
        """Open the checkpoints and resume every unfinished plan; returns the resumed ids."""
        await self._checkpoints.open()
        resumed = await self._resume_all()
        await self.prune()
        return resumed

    async def aclose(self) -> None:
        await cancel_and_wait([*self._runs.values(), *self._timers.values(), *self._spoken])
        self._runs.clear()
        self._timers.clear()
        await self._checkpoints.aclose()
        self.ledger.close()

    async def _recover(self, failure: BaseException, generation: int) -> None:
        """The checkpoints failed while running: a fresh file, every unfinished plan resumed from
        the ledger (runs and timers of the old file stopped first: they would write to it)."""
        async with self._recovering:
            if self._checkpoints.generation != generation:
                return  # another caller has already started the fresh file
            me = asyncio.current_task()
            await cancel_and_wait([t for t in [*self._runs.values(), *self._timers.values()] if t is not me])
            self._runs = {k: t for k, t in self._runs.items() if t is me}
            self._timers.clear()
            await self._checkpoints.reopen(failure)
            self._open.clear()
            await self._resume_all()

    async def prune(self) -> list[str]:
        """Delete finished plans older than `plans.keep_days` or beyond the newest `plans.keep_finished`."""
        before = self._clock() - self._config.keep_days * DAY_S
        gone = self.ledger.prunable(before=before, keep=self._config.keep_finished)
        if gone:
            await self._checkpoints.forget(gone)
            self.ledger.forget(gone)
            _LOGGER.info("plans: pruned %d finished plan(s), %s to %s", len(gone), gone[0], gone[-1])
        return gone

    async def _tidy(self, task_id: str) -> None:
        """A plan finished: its last checkpoint is all it needs, and the oldest may go."""
        generation = self._checkpoints.generation
        try:
            await self._checkpoints.keep_last_only(task_id)
            await self.prune()
        except Exception as exc:
            if not is_damage(exc):
                raise
            await self._recover(exc, generation)

    def _cfg(self, task_id: str) -> dict[str, Any]:
        return {"configurable": {"thread_id": task_id}, "recursion_limit": 1000}

    async def _checked(self, read: Callable[[], Awaitable[T]]) -> T:
        """`read` from the checkpoints; once more on a fresh file if they prove damaged."""
        generation = self._checkpoints.generation
        try:
            return await read()
        except Exception as exc:
            if is_damage(exc):
                await self._recover(exc, generation)
            elif self._checkpoints.generation != generation:  # closed under us by a recovery
                async with self._recovering:
                    pass  # under way: wait for the fresh file
            else:
                raise
            return await read()

    async def _new_id(self) -> str:
        number = self.ledger.next_number()
        while await self._checkpoints.known(f"plan-{number}"):  # the ledger lost, its checkpoints not
            number += 1
        return f"plan-{number}"

    async def state(self, task_id: str) -> TaskState:
        snapshot = await self._checked(lambda: self._checkpoints.snapshot(self._cfg(task_id)))
        if not snapshot.values:
            initial = self.ledger.initial(task_id)  # created, its first checkpoint not written yet
            if initial is None:
                raise UnknownTask(task_id)
            return initial  # type: ignore[return-value]
        return snapshot.values  # type: ignore[no-any-return]

    async def view(self, task_id: str) -> dict[str, Any]:
        return task_view(await self.state(task_id))

    async def views(self) -> list[dict[str, Any]]:
        found = []
        for task_id in self.ledger.plans():
            with contextlib.suppress(UnknownTask):
                found.append(await self.view(task_id))
        return found

    async def create(
        self, requirement: str, plan: ExecutionPlan, *, needs_confirmation: bool
    ) -> dict[str, Any]:
        """Start a plan: it waits for a confirmation (returned once it does) or runs at once."""
        task_id = await self._checked(self._new_id)
        now = self._clock()
        state = new_state(task_id, requirement, now, plan, needs_confirmation=needs_confirmation)
        self.ledger.add_plan(task_id, requirement, now, dict(state))
        self._open.append(task_id)
        self._bus.publish(
            PlanCreated(
                task_id=task_id,
                detail=plan.name,
                data={"requirement": requirement, "steps": len(plan.steps), "confirm": needs_confirmation},
            )
        )
        run = self._drive(task_id, state)
        if needs_confirmation:
            await asyncio.wait([run])
        return await self.view(task_id)

    def _drive(self, task_id: str, given: Any) -> asyncio.Task[None]:
        task = asyncio.create_task(self._run(task_id, given), name=f"plan-run-{task_id}")
        self._runs[task_id] = task
        task.add_done_callback(
            lambda done: self._runs.pop(task_id, None) if self._runs.get(task_id) is done else None
        )
        return task

    async def _run(self, task_id: str, given: Any) -> None:
        generation = self._checkpoints.generation
        try:
            await self._graph.ainvoke(given, self._cfg(task_id), durability="sync")
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if is_damage(exc):  # the checkpoints' file: a fresh one, this plan resumed from the ledger
                await self._recover(exc, generation)
                return
            _LOGGER.exception("%s failed", task_id)
            await self._graph.aupdate_state(
                self._cfg(task_id), {"status": "failed", "result": f"the plan broke: {exc}"}, as_node="finish"
            )
        state = await self.state(task_id)
        status = state.get("status")
        if status == "waiting_confirmation":
            said = self._words.read_back(plan_of(state), state.get("waiting_since", self._clock()))
            self._bus.publish(PlanWaitingConfirmation(task_id=task_id, detail=said))
            await self._arm(task_id, state)
        elif status in FINISHED:
            self._finished(task_id, state)
            await self._tidy(task_id)

    async def _arm(self, task_id: str, state: TaskState) -> None:
        old = self._timers.pop(task_id, None)
        if old is not None and old is not asyncio.current_task():
            await cancel_and_wait([old])
        left = self._config.confirm_timeout_s - (self._clock() - state.get("waiting_since", self._clock()))
        self._timers[task_id] = asyncio.create_task(self._expire(task_id, left), name=f"plan-timer-{task_id}")

    async def _expire(self, task_id: str, left: float) -> None:
        await asyncio.sleep(max(0.0, left))
        self._timers.pop(task_id, None)
        state = await self.state(task_id)
        if state.get("status") != "waiting_confirmation":
            return
        await self._answer(task_id, {"approved": False, "reason": "no answer in time"})
        self._announce(no_answer_line(state))

    def _closed(self, task_id: str) -> None:
        if task_id in self._open:
            self._open.remove(task_id)
        self.ledger.finish(task_id)

    def _finished(self, task_id: str, state: TaskState) -> None:
        self._closed(task_id)
        status, result = state.get("status"), state.get("result", "")
        event = {"completed": PlanCompleted, "failed": PlanFailed}.get(str(status), PlanCancelled)
        self._bus.publish(event(task_id=task_id, detail=result))
        if status != "cancelled":
            self._announce(outcome_line(state))

    def _announce(self, text: str) -> None:
        if self._say is None:
            return
        say = self._say

        async def tell() -> bool:
            return await say(text, 0)

        spoken = asyncio.create_task(tell(), name="plan-news")
        self._spoken.add(spoken)
        spoken.add_done_callback(self._spoken.discard)

    async def _answer(self, task_id: str, answer: dict[str, Any]) -> str:
        timer = self._timers.pop(task_id, None)
        if timer is not None and timer is not asyncio.current_task():
            await cancel_and_wait([timer])
        run = self._drive(task_id, Command(resume=answer))
        if not answer.get("approved") or answer.get("plan") is not None:
            await asyncio.wait([run])  # quick: back to the question, or cancelled
            return str((await self.state(task_id)).get("status"))
        # the run goes on in the background; its first checkpoint says it is no longer waiting, and
        # whoever reads the task next (the dashboard refreshing after its click) must see that
        deadline = asyncio.get_running_loop().time() + CONFIRMED_WITHIN_S
        while not run.done() and asyncio.get_running_loop().time() < deadline:
            if (await self.state(task_id)).get("status") != "waiting_confirmation":
                break
            await asyncio.sleep(0.01)
        return "executing"

    async def confirm(
        self, task_id: str, approved: bool, notes: str = "", plan: ExecutionPlan | None = None
    ) -> str:
        """Approve, refuse, or change (`plan`: read back and asked again); the new status."""
        state = await self.state(task_id)
        if state.get("status") != "waiting_confirmation":
            raise NotWaiting(
                say("plan_not_waiting", task=task_id, status=status_words(str(state.get("status"))))
            )
        answer: dict[str, Any] = {"approved": approved, "notes": notes}
        if plan is not None:
            answer["plan"] = plan.model_dump(mode="json")
        elif not approved:
            answer["reason"] = f"refused{': ' + notes if notes else ''}"
        else:  # kept apart from the checkpoints: the yes survives their loss
            self.ledger.confirm(
                task_id, {**state, "status": "executing", "waiting_for": "", "user_notes": notes}
            )
        return await self._answer(task_id, answer)

    async def cancel(self, task_id: str, reason: str) -> str:
        """End a plan that has not finished; nothing of it is published after this returns."""
        state = await self.state(task_id)
        if state.get("status") in FINISHED:
            raise NotWaiting(f"{task_id} {status_words(str(state.get('status')))}")
        live = [t for t in (self._runs.pop(task_id, None), self._timers.pop(task_id, None)) if t is not None]
        await cancel_and_wait(live)
        step = int(state.get("current_step", 0))
        end = cancelled_entry(step, reason, self._clock())
        await self._graph.aupdate_state(
            self._cfg(task_id),
            {"status": "cancelled", "waiting_for": "", "result": reason, "execution_history": [end]},
            as_node="finish",
        )
        self._closed(task_id)
        self._bus.publish(
            PlanDecision(task_id=task_id, step=step, detail=reason, data={"decision": "end", "by": "rules"})
        )
        self._bus.publish(PlanCancelled(task_id=task_id, detail=reason))
        await self._tidy(task_id)
        return "cancelled"

    async def waiting(self) -> TaskState | None:
        """The latest plan waiting for a confirmation."""
        for task_id in reversed(list(self._open)):
            state = await self.state(task_id)
            if state.get("status") == "waiting_confirmation":
                return state
        return None

    async def active(self) -> list[dict[str, Any]]:
        """The plans not finished, oldest first (no plan open: nothing is read)."""
        views = [await self.view(task_id) for task_id in list(self._open)]
        return [v for v in views if v["status"] not in FINISHED]

    async def _resume_all(self) -> list[str]:
        resumed: list[str] = []
        for task_id in self.ledger.plans(unfinished=True, last=1000):
            snapshot = await self._checkpoints.snapshot(self._cfg(task_id))
            state = snapshot.values
            initial = self.ledger.initial(task_id)
            confirmed = initial is not None and initial.get("status") == "executing"
            if not state and initial is not None:
                # killed before its first checkpoint, or its checkpoints lost: from the ledger, a
                # confirmed plan going ahead, one not yet confirmed asking again
                resumed.append(task_id)
                self._open.append(task_id)
                self._drive(task_id, initial)
                continue
            if not state or state.get("status") in FINISHED:
                self.ledger.finish(task_id)
                continue
            if state.get("status") == "waiting_confirmation" and snapshot.next == ("review",):
                resumed.append(task_id)
                self._open.append(task_id)
                if confirmed:  # the yes was recorded, its checkpoint not yet: it goes ahead
                    notes = str((initial or {}).get("user_notes", ""))
                    self._drive(task_id, Command(resume={"approved": True, "notes": notes}))
                else:
                    await self._arm(task_id, state)
                continue
            if snapshot.next:
                _LOGGER.info("%s: resuming at %s", task_id, ", ".join(snapshot.next))
                resumed.append(task_id)
                self._open.append(task_id)
                self._drive(task_id, None)
        return resumed
