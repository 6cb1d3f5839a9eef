"""The state in SQLite: one row per session, rewritten in a transaction after every analysis.

WAL with synchronous=FULL: a kill -9 at any moment leaves either the previous state or the new one.
A file SQLite calls damaged (malformed pages, not a database, truncated) or whose `states` table has
another shape is moved aside, renamed with the time, and a new session starts in a new file, at start
or when a read or write fails so while running (voiced/sqlite_files.py, as every store of ours). What
is not the file's fault (a directory in its place, no permission, locked) is a ConfigError naming
brain.state_file.
"""

from __future__ import annotations

import logging
import sqlite3
import uuid
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from voiced.brain.state import ConversationState
from voiced.errors import ConfigError
from voiced.sqlite_files import SqliteFile, Table, is_damage

_LOGGER = logging.getLogger(__name__)
_SCHEMA = """
create table if not exists states (
    session_id text primary key,
    body text not null,
    updated text not null
)
"""
STATES = Table("states", ("session_id", "body", "updated"))
T = TypeVar("T")


class StateStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = SqliteFile(
            path, what="brain", key="brain.state_file", tables=(STATES,), afresh="starting a new session"
        )
        self.moved_aside: Path | None = self._file.open_checked()  # where a damaged file went
        self._prepare()

    def _prepare(self) -> None:
        try:
            with closing(self._connect()) as db, db:
                db.execute("pragma journal_mode=wal")
                db.execute(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise ConfigError(
                f"brain.state_file: {self.path} is not a usable SQLite database ({exc})"
            ) from None

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=5)
        db.execute("pragma synchronous=full")
        return db

    def _recovering(self, work: Callable[[], T]) -> T:
        """`work`, once more on a fresh file if this one proves damaged while running."""
        try:
            return work()
        except sqlite3.DatabaseError as exc:
            if not is_damage(exc):
                raise
            self.moved_aside = self._file.recover(exc)
            self._prepare()
            return work()

    def open_session(self, *, new: bool) -> ConversationState:
        """The latest session, or a fresh one when asked (or when there is none)."""
        if not new:
            latest = self.load()
            if latest is not None:
                _LOGGER.info(
                    "brain: resuming session %s (%d turns)", latest.session_id, latest.processed_turns
                )
                return latest
        state = ConversationState(session_id=uuid.uuid4().hex[:12])
        self.save(state)
        _LOGGER.info("brain: new session %s", state.session_id)
        return state

    def load(self, session_id: str | None = None) -> ConversationState | None:
        def read() -> tuple[str] | None:
            with closing(self._connect()) as db:
                if session_id is None:
                    return db.execute("select body from states order by updated desc limit 1").fetchone()  # type: ignore[no-any-return]
                return db.execute("select body from states where session_id = ?", (session_id,)).fetchone()  # type: ignore[no-any-return]

        row = self._recovering(read)
        if row is None:
            return None
        try:
            return ConversationState.model_validate_json(row[0])
        except ValidationError as exc:
            _LOGGER.error(
                "brain: stored state in %s is unreadable (%d errors); starting over",
                self.path,
                exc.error_count(),
            )
            return None

    def save(self, state: ConversationState) -> None:
        body = state.model_dump_json()

        def write() -> None:
            with closing(self._connect()) as db, db:  # one transaction: all or nothing
                db.execute(
                    "insert into states (session_id, body, updated) values (?, ?, ?) "
                    "on conflict(session_id) do update set body = excluded.body, updated = excluded.updated",
                    (state.session_id, body, state.last_updated.isoformat()),
                )

        self._recovering(write)
