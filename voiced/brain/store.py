"""The state in SQLite: one row per session, rewritten in a transaction after every analysis.

WAL with synchronous=FULL: a kill -9 at any moment leaves either the previous state or the new one.
"""

from __future__ import annotations

import logging
import sqlite3
import uuid
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


class StateStore:
    def __init__(self, path: Path) -> None:
        if path.parent and not path.parent.is_dir():
            raise ConfigError(f"brain.state_file: folder {path.parent} does not exist")
        self.path = path
        try:
            with self._connect() as db:
                db.execute("pragma journal_mode=wal")
                db.execute(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise ConfigError(f"brain.state_file: {path} is not a usable SQLite database ({exc})") from None

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
        with self._connect() as db:
            if session_id is None:
                row = db.execute("select body from states order by updated desc limit 1").fetchone()
            else:
                row = db.execute("select body from states where session_id = ?", (session_id,)).fetchone()
        if row is None:
            return None
        try:
            return ConversationState.model_validate_json(row[0])
        except ValidationError as exc:
            _LOGGER.error("brain: stored state in %s is unreadable (%s); starting over", self.path, exc)
            return None

    def save(self, state: ConversationState) -> None:
        body = state.model_dump_json()
        with self._connect() as db:  # one transaction: all or nothing
            db.execute(
                "insert into states (session_id, body, updated) values (?, ?, ?) "
                "on conflict(session_id) do update set body = excluded.body, updated = excluded.updated",
                (state.session_id, body, state.last_updated.isoformat()),
            )
