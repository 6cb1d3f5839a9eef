"""LangGraph's checkpoints in one SQLite file, for the plans and for the scenes.

The file is checked before the saver opens it and moved aside when damaged (voiced/sqlite_files.py);
`reopen` does the same when it fails while running, and compiles the graph again on a fresh file.
Finished threads are kept small and few: `keep_last_only` drops a finished run's intermediate
checkpoints (a plan's are ~24 KB, its last one a few), `forget` deletes pruned threads and gives the
WAL back, so the file stays bounded however many plans are made.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Any

from langgraph.graph import StateGraph

from voiced.plans.saver import SettlingSaver
from voiced.sqlite_files import SqliteFile, Table

_LOGGER = logging.getLogger(__name__)
# LangGraph's own schema (langgraph.checkpoint.sqlite.aio setup()): the columns it reads
TABLES = (
    Table(
        "checkpoints",
        (
            "thread_id",
            "checkpoint_ns",
            "checkpoint_id",
            "parent_checkpoint_id",
            "type",
            "checkpoint",
            "metadata",
        ),
    ),
    Table(
        "writes",
        ("thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx", "channel", "type", "value"),
    ),
)


class Checkpoints:
    """`graph`: the graph compiled on the open file; `generation` counts the files started afresh."""

    def __init__(self, path: Path, graph_def: StateGraph[Any], *, what: str, key: str) -> None:
        self.file = SqliteFile(path, what=what, key=key, tables=TABLES)
        self._graph_def = graph_def
        self._stack = contextlib.AsyncExitStack()
        self._saver: SettlingSaver | None = None
        self.graph: Any = None
        self.generation = 0

    async def open(self) -> None:
        await asyncio.to_thread(self.file.open_checked)  # reads every page: off the event loop
        saver = await self._stack.enter_async_context(SettlingSaver.opened(str(self.file.path)))
        await saver.setup()  # the tables now, not at the first write mid-plan
        self._saver = saver
        self.graph = self._graph_def.compile(checkpointer=saver)

    async def reopen(self, failure: BaseException) -> None:
        """The file failed while running: close it, move it aside, start a fresh one."""
        self.generation += 1  # first: a reader failing on the closed file knows why
        await self.aclose()
        await asyncio.to_thread(self.file.recover, failure)
        await self.open()

    async def aclose(self) -> None:
        self._saver = None
        await self._stack.aclose()
        self._stack = contextlib.AsyncExitStack()

    def _opened(self) -> SettlingSaver:
        if self._saver is None:
            raise RuntimeError(f"{self.file.what}: {self.file.path} is not open")
        return self._saver

    async def snapshot(self, config: Any) -> Any:
        """The thread's state; a checkpoint whose bytes no longer decode (changed inside its row: no
        page check sees that) is deleted, said in one log line, and the thread reads as empty."""
        try:
            return await self.graph.aget_state(config)
        except ValueError as exc:  # LangGraph's serializer on changed bytes
            thread = config["configurable"]["thread_id"]
            _LOGGER.error(
                "%s: the checkpoint of %s in %s does not decode (%s); deleted it, %s goes on without",
                self.file.what,
                thread,
                self.file.path,
                exc,
                thread,
            )
            await self.forget([thread])
            return await self.graph.aget_state(config)

    async def known(self, thread_id: str) -> bool:
        """Whether the file holds checkpoints of this thread (an id must not pick up another's)."""
        config: Any = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        return await self._opened().aget_tuple(config) is not None

    async def keep_last_only(self, thread_id: str) -> None:
        """A finished thread needs only its last checkpoint (what the API shows)."""
        saver = self._opened()
        async with saver.lock, saver.conn.cursor() as cursor:
            for table in ("checkpoints", "writes"):
                await cursor.execute(
                    f"DELETE FROM {table} WHERE thread_id = ? AND checkpoint_id != "  # our table names
                    "(SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = ?)",
                    (thread_id, thread_id),
                )
            await saver.conn.commit()

    async def forget(self, thread_ids: list[str]) -> None:
        """Delete these threads, then give the WAL back to the file (it stays bounded)."""
        saver = self._opened()
        for thread_id in thread_ids:
            await saver.adelete_thread(thread_id)
        async with saver.lock:
            await saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
