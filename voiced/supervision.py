"""Background tasks that must keep running, kept running: one owner restarts what raises.

A task that raises is logged once (with its traceback), counted, and started again after a
backoff that grows while it keeps failing; until a restarted task has run `healthy_after_s`
without raising, the daemon reports itself degraded (`/healthz`). A task that returns is done.
Cancellation is never a failure: `aclose` (or the caller's own cancellation) stops everything.

`crash` raises an exception in a named task as if its body had raised it: how the reliability
bench and the tests check that each task comes back.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

from voiced.tasks import cancel_and_wait

_LOGGER = logging.getLogger(__name__)

BACKOFF_S = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)
HEALTHY_AFTER_S = 10.0


class Supervision:
    def __init__(
        self, *, backoff_s: Sequence[float] = BACKOFF_S, healthy_after_s: float = HEALTHY_AFTER_S
    ) -> None:
        self._backoff_s = tuple(backoff_s)
        self._healthy_after_s = healthy_after_s
        self._keepers: dict[str, asyncio.Task[None]] = {}
        self._faults: dict[str, asyncio.Future[BaseException]] = {}
        self._running: dict[str, asyncio.Task[None]] = {}
        self.restarts: dict[str, int] = {}
        self._failing: set[str] = set()

    def start(self, name: str, body: Callable[[], Awaitable[None]]) -> None:
        """Run `body()` as the task `name`, again after each exception it raises."""
        if name in self._keepers:
            raise ValueError(f"a task named {name!r} is supervised already")
        self.restarts.setdefault(name, 0)
        self._keepers[name] = asyncio.create_task(self._keep(name, body), name=f"keep-{name}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._keepers)

    @property
    def degraded(self) -> tuple[str, ...]:
        """The tasks that raised and have not yet run `healthy_after_s` since."""
        return tuple(sorted(self._failing))

    def running(self, name: str) -> bool:
        task = self._running.get(name)
        return task is not None and not task.done()

    def crash(self, name: str, exc: BaseException | None = None) -> None:
        """Make the task `name` fail with `exc` now (for the bench and the tests)."""
        fault = self._faults.get(name)
        if fault is None:
            raise KeyError(f"no supervised task named {name!r}")
        if not fault.done():
            fault.set_result(exc or RuntimeError(f"{name}: a fault injected by the supervisor's crash()"))

    async def aclose(self) -> None:
        await cancel_and_wait(self._keepers.values())
        self._keepers.clear()

    async def _keep(self, name: str, body: Callable[[], Awaitable[None]]) -> None:
        failures = 0
        while True:
            fault: asyncio.Future[BaseException] = asyncio.get_running_loop().create_future()
            self._faults[name] = fault
            run = asyncio.ensure_future(body())
            if isinstance(run, asyncio.Task):
                run.set_name(name)
            self._running[name] = run  # type: ignore[assignment]
            try:
                error = await self._watch(name, run, fault)
            finally:
                await cancel_and_wait([run])
            if error is None:
                self._failing.discard(name)
                return
            failures += 1
            self.restarts[name] += 1
            self._failing.add(name)
            wait_s = self._backoff_s[min(failures, len(self._backoff_s)) - 1]
            _LOGGER.error(
                "task %s failed (%d time(s)); restarting it in %.1f s",
                name,
                failures,
                wait_s,
                exc_info=(type(error), error, error.__traceback__),
            )
            await asyncio.sleep(wait_s)

    async def _watch(
        self, name: str, run: asyncio.Future[None], fault: asyncio.Future[BaseException]
    ) -> BaseException | None:
        """The exception that ended this run (None: it returned), clearing `degraded` once it is healthy."""
        healthy_in = self._healthy_after_s if name in self._failing else None
        while True:
            done, _ = await asyncio.wait({run, fault}, timeout=healthy_in, return_when=asyncio.FIRST_COMPLETED)
            if fault in done:
                return fault.result()
            if run in done:
                if run.cancelled():
                    raise asyncio.CancelledError(f"{name} was cancelled by someone else")
                return run.exception()
            self._failing.discard(name)  # ran healthy_after_s without raising
            healthy_in = None
