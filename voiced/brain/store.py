"""The state in SQLite: one row per session, rewritten in a transaction after every analysis.

WAL with synchronous=FULL: a kill -9 at any moment leaves either the previous state or the new one.
A file SQLite calls damaged (malformed pages, not a database, truncated) or whose `states` table has
another shape is moved aside, renamed with the time, and a new session starts in a new file: a
damaged file must not make every start fail (a restart loop under systemd). What is not the file's
fault (a directory in its place, no permission, locked) is a ConfigError naming brain.state_file.
"""

from __future__ import annotations

import logging
import sqlite3
import uuid
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from voiced.brain.state import ConversationState
from voiced.errors import ConfigError

_LOGGER = logging.getLogger(__name__)
_SCHEMA = """
create table if not exists states (
    session_id text primary key,
    body text not null,
    updated text not null
)
"""
_COLUMNS = ["session_id", "body", "updated"]
_DAMAGED = (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
_SIDECARS = ("-wal", "-shm", "-journal")  # a new file must not pick up the old one's journal


class _Damaged(Exception):
    """The file is SQLite's to call damaged, or its schema is not ours."""


class StateStore:
    def __init__(self, path: Path) -> None:
        if path.parent and not path.parent.is_dir():
            raise ConfigError(f"brain.state_file: folder {path.parent} does not exist")
        if path.exists() and not path.is_file():
            raise ConfigError(f"brain.state_file: {path} is not a file (a directory or a device?)")
        self.path = path
        self.moved_aside: Path | None = None  # where a damaged file went
        try:
            self._prepare()
        except _Damaged as exc:
            self.moved_aside = self._move_aside(str(exc))
            self._open_new()

    def _prepare(self) -> None:
        try:
            with closing(self._connect()) as db, db:
                self._check(db)  # before anything is written: a damaged file is kept as it was
                db.execute("pragma journal_mode=wal")
                db.execute(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            if getattr(exc, "sqlite_errorcode", 0) & 0xFF in _DAMAGED:  # extended codes too
                raise _Damaged(str(exc)) from None
            raise ConfigError(
                f"brain.state_file: {self.path} is not a usable SQLite database ({exc})"
            ) from None

    @staticmethod
    def _check(db: sqlite3.Connection) -> None:
        """quick_check reads every page: damage shows now, not at the first save mid-conversation."""
        problems = [row[0] for row in db.execute("pragma quick_check(3)")]
        if problems != ["ok"]:
            raise _Damaged(" ".join(" ".join(str(problem) for problem in problems).split()))  # one line
        kinds = [row[0] for row in db.execute("select type from sqlite_master where tbl_name = 'states'")]
        if not kinds:
            return  # a new file, or someone else's database: our table is added
        columns = [row[1] for row in db.execute("pragma table_info(states)")]
        if "table" not in kinds or columns != _COLUMNS or "trigger" in kinds or "view" in kinds:
            raise _Damaged(f"its states table has another shape (columns {', '.join(columns) or 'none'})")

    def _move_aside(self, why: str) -> Path:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        aside = self.path.with_name(f"{self.path.name}.damaged-{stamp}")
        number = 1
        while aside.exists():  # damaged twice in one second: keep both
            number += 1
            aside = self.path.with_name(f"{self.path.name}.damaged-{stamp}-{number}")
        try:
            for suffix in ("", *_SIDECARS):
                source = self.path.with_name(self.path.name + suffix)
                if source.exists():
                    source.rename(aside.with_name(aside.name + suffix))
        except OSError as exc:
            raise ConfigError(
                f"brain.state_file: {self.path} is damaged ({why}) and could not be moved aside ({exc})"
            ) from None
        _LOGGER.error(
            "brain: %s is damaged (%s); moved it aside to %s, starting a new session", self.path, why, aside
        )
        return aside

    def _open_new(self) -> None:
        try:
            self._prepare()
        except _Damaged as exc:  # a fresh file: only a broken disk would do this
            raise ConfigError(f"brain.state_file: a new {self.path} is damaged too ({exc})") from None

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=5)
        db.execute("pragma synchronous=full")
        return db

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
        with closing(self._connect()) as db:
            if session_id is None:
                row = db.execute("select body from states order by updated desc limit 1").fetchone()
            else:
                row = db.execute("select body from states where session_id = ?", (session_id,)).fetchone()
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
        with closing(self._connect()) as db, db:  # one transaction: all or nothing
            db.execute(
                "insert into states (session_id, body, updated) values (?, ?, ?) "
                "on conflict(session_id) do update set body = excluded.body, updated = excluded.updated",
                (state.session_id, body, state.last_updated.isoformat()),
            )
