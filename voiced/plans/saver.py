"""LangGraph's SQLite checkpointer, knowing which of its writes are still in flight.

A run that is cancelled can leave LangGraph writing its finished branches' results in a task of its
own. Closing the connection under that write leaves the SQLite file locked (the write's statement is
never finalized, so the connection lingers with its transaction open) for as long as the process
lives: another connection to the file, a new checkpointer after a restart in-process, fails with
"database is locked". `settle` waits for those writes (not ours to cancel) before the close.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from voiced.tasks import STOP_TIMEOUT_S

_LOGGER = logging.getLogger(__name__)


class SettlingSaver(AsyncSqliteSaver):
    @classmethod
    @contextlib.asynccontextmanager
    async def opened(cls, path: str) -> AsyncIterator[SettlingSaver]:
        """The checkpointer on `path`, its writes settled before its connection closes."""
        async with cls.from_conn_string(path) as saver:
            assert isinstance(saver, SettlingSaver)
            try:
                yield saver
            finally:
                await saver.settle()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._writing: set[asyncio.Task[Any]] = set()

    async def aput(self, *args: Any, **kwargs: Any) -> Any:
        return await self._tracked(super().aput(*args, **kwargs))

    async def aput_writes(self, *args: Any, **kwargs: Any) -> None:
        await self._tracked(super().aput_writes(*args, **kwargs))

    async def _tracked(self, write: Any) -> Any:
        task = asyncio.current_task()
        if task is not None:
            self._writing.add(task)
        try:
            return await write
        finally:
            if task is not None:
                self._writing.discard(task)

    async def settle(self, timeout_s: float = STOP_TIMEOUT_S) -> None:
        """Wait (at most `timeout_s`) for the writes still in flight in tasks other than this one."""
        others = {t for t in self._writing if t is not asyncio.current_task() and not t.done()}
        if others:
            _done, pending = await asyncio.wait(others, timeout=timeout_s)
            if pending:
                _LOGGER.error("%d checkpoint write(s) did not end within %.1f s", len(pending), timeout_s)
