"""Background tasks that must keep running, kept running: one owner restarts what raises.

A task that raises is logged once (with its traceback), counted, and started again after a
backoff that grows while it keeps failing; until a restarted task has run `healthy_after_s`
without raising, the daemon reports itself degraded (`/healthz`). A task that returns is done.
Cancellation is never a failure: `aclose` (or the caller's own cancellation) stops everything.
Work done one item at a time (the brain's analysis of each turn) reports to the same place with
`failed` and `recovered`: the next item is its restart.

Each failure and recovery is a `TaskFailed` / `TaskRecovered` on the bus (the metrics count them).
`crash` raises an exception in a named task as if its body had raised it: how the reliability
bench and the tests check that each task comes back.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

from voiced.bus import EventBus, Subscription
from voiced.events import TaskFailed, TaskRecovered
from voiced.tasks import cancel_and_wait

_LOGGER = logging.getLogger(__name__)

BACKOFF_S = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)
HEALTHY_AFTER_S = 10.0
FIRST = asyncio.FIRST_COMPLETED


class Supervision:
    def __init__(
        self,
        bus: EventBus | None = None,
        *,
        backoff_s: Sequence[float] = BACKOFF_S,
        healthy_after_s: float = HEALTHY_AFTER_S,
    ) -> None:
        self._bus = bus
        self._backoff_s = tuple(backoff_s)
        self._healthy_after_s = healthy_after_s
        self._keepers: dict[str, asyncio.Task[None]] = {}
        self._faults: dict[str, asyncio.Future[BaseException]] = {}
        self._running: dict[str, asyncio.Future[None]] = {}
        self.failures: dict[str, int] = {}
        self._failing: set[str] = set()
        self._subscriptions: dict[str, tuple[EventBus, Subscription]] = {}

    def report_to(self, bus: EventBus) -> None:
        """Publish failures and recoveries on `bus` from now on."""
        self._bus = bus

    def start(self, name: str, body: Callable[[], Awaitable[None]]) -> None:
        """Run `body()` as the task `name`, again after each exception it raises."""
        if name in self._keepers:
            raise ValueError(f"a task named {name!r} is supervised already")
        self.failures.setdefault(name, 0)
        self._keepers[name] = asyncio.create_task(self._keep(name, body), name=f"keep-{name}")

    def follow(self, name: str, bus: EventBus, body: Callable[[Subscription], Awaitable[None]]) -> None:
        """`start` a task that reads `bus`: its subscription is made once, here, and kept across
        restarts, so what is published while it restarts waits for it instead of being lost."""
        events = bus.subscribe(name)
        self._subscriptions[name] = (bus, events)
        self.start(name, lambda: body(events))

    async def stop(self, name: str) -> None:
        """Stop the task `name` (its owner is closing); no-op when there is none."""
        keeper = self._keepers.pop(name, None)
        if keeper is not None:
            await cancel_and_wait([keeper])
        if (followed := self._subscriptions.pop(name, None)) is not None:
            followed[0].unsubscribe(followed[1])

    async def aclose(self) -> None:
        for name in list(self._keepers):
            await self.stop(name)

    @property
    def names(self) -> tuple[str, ...]:
        """The tasks still kept (not returned, not stopped)."""
        return tuple(name for name, keeper in self._keepers.items() if not keeper.done())

    @property
    def degraded(self) -> tuple[str, ...]:
        """The tasks that raised and have not yet run `healthy_after_s` since."""
        return tuple(sorted(self._failing))

    def running(self, name: str) -> bool:
        run = self._running.get(name)
        return run is not None and not run.done()

    def crash(self, name: str, exc: BaseException | None = None) -> None:
        """Make the task `name` fail with `exc` now (for the bench and the tests)."""
        fault = self._faults.get(name)
        if fault is None or name not in self.names:
            raise KeyError(f"no supervised task named {name!r}")
        if not fault.done():
            fault.set_result(exc or RuntimeError(f"{name}: a fault injected by Supervision.crash"))

    def failed(self, name: str, exc: BaseException) -> None:
        """One item of `name`'s work raised (already logged by its owner): counted, degraded."""
        self.failures[name] = self.failures.get(name, 0) + 1
        self._failing.add(name)
        self._publish(TaskFailed(task=name, error=_described(exc), restart_in_s=0.0))

    def recovered(self, name: str) -> None:
        """An item of `name`'s work went well: no longer degraded."""
        if name in self._failing:
            self._failing.discard(name)
            self._publish(TaskRecovered(task=name))

    async def _keep(self, name: str, body: Callable[[], Awaitable[None]]) -> None:
        streak = 0
        while True:
            fault: asyncio.Future[BaseException] = asyncio.get_running_loop().create_future()
            self._faults[name] = fault
            run = asyncio.ensure_future(body())
            if isinstance(run, asyncio.Task):
                run.set_name(name)
            self._running[name] = run
            try:
                error = await self._watch(name, run, fault)
            finally:
                await cancel_and_wait([run])
            if error is None:
                self.recovered(name)
                return
            streak = 0 if name not in self._failing else streak
            streak += 1
            wait_s = self._backoff_s[min(streak, len(self._backoff_s)) - 1]
            self.failures[name] += 1
            self._failing.add(name)
            _LOGGER.error(
                "task %s failed (%d in a row); restarting it in %.1f s",
                name,
                streak,
                wait_s,
                exc_info=(type(error), error, error.__traceback__),
            )
            self._publish(TaskFailed(task=name, error=_described(error), restart_in_s=wait_s))
            await asyncio.sleep(wait_s)

    async def _watch(
        self, name: str, run: asyncio.Future[None], fault: asyncio.Future[BaseException]
    ) -> BaseException | None:
        """The exception that ended this run (None: it returned); marks it well once it has run
        `healthy_after_s` after a failure."""
        healthy_in = self._healthy_after_s if name in self._failing else None
        while True:
            either: set[asyncio.Future[object]] = {run, fault}  # type: ignore[arg-type]
            done, _ = await asyncio.wait(either, timeout=healthy_in, return_when=FIRST)
            if fault in done:
                return fault.result()
            if run in done:
                if run.cancelled():  # only we hold it: someone cancelled the task by name
                    return asyncio.CancelledError(f"{name} was cancelled from outside")
                return run.exception()
            self.recovered(name)
            healthy_in = None

    def _publish(self, event: TaskFailed | TaskRecovered) -> None:
        if self._bus is not None:
            self._bus.publish(event)


def _described(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:300]
