"""What was sent, kept apart from the checkpoints: no step of a plan is published twice.

A step is marked `sending` before its command goes out and `done` (with its outcome) after; both are
committed before the call returns. A step found `done` after a restart is not sent again; one found
`sending` was cut off mid-way: if its device already shows the command it is taken as done, else it
is sent (it never reached the device). The same SQLite file holds the index of plans, and whether
the user confirmed each: a confirmed plan goes ahead after a restart even if its checkpoints are lost.
A damaged file is moved aside and a fresh one started, at start or while running
(voiced/sqlite_files.py); finished plans are pruned (`prunable`, `forget`).

Scenes keep a ledger of their own (voiced/vibe/runner.py), in a file of its own or in memory
(":memory:", when scenes are not kept across restarts): `plan_index` is then the index of scenes.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from voiced.plans.salvage import salvage
from voiced.sqlite_files import SqliteFile, Table, Unreadable, is_damage

_SCHEMA = """
CREATE TABLE IF NOT EXISTS plan_index (
    task_id TEXT PRIMARY KEY, requirement TEXT, created_at REAL, initial TEXT, finished INTEGER DEFAULT 0
);
CREATE TABLE IF NOT EXISTS plan_ledger (
    task_id TEXT, step INTEGER, attempt INTEGER, state TEXT, outcome TEXT, at REAL,
    PRIMARY KEY (task_id, step, attempt)
);
"""
TABLES = (
    Table("plan_index", ("task_id", "requirement", "created_at", "initial")),
    Table("plan_ledger", ("task_id", "step", "attempt", "state", "outcome", "at")),
)
_ADDED = {"finished": "INTEGER DEFAULT 0", "confirmed": "INTEGER DEFAULT 0"}  # by later versions
T = TypeVar("T")


class Ledger:
    """`what` names the file in the log; `key` is its config key (errors that are not the file's)."""

    def __init__(
        self, path: Path | str, *, what: str = "plans' ledger", key: str = "plans.checkpoint_file"
    ) -> None:
        self._file = (
            None if str(path) == ":memory:" else SqliteFile(Path(path), what=what, key=key, tables=TABLES)
        )
        self.moved_aside = self._file.open_checked() if self._file is not None else None
        self._path = path
        self._db = self._connect()
        self._lock = threading.Lock()
        if self.moved_aside is not None:
            salvage(self.moved_aside, self._db, what)

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self._path, timeout=10, check_same_thread=False, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.executescript(_SCHEMA)
        columns = {row[1] for row in db.execute("PRAGMA table_info(plan_index)")}
        for column, kind in _ADDED.items():
            if column not in columns:  # a ledger from before the column
                db.execute(f"ALTER TABLE plan_index ADD COLUMN {column} {kind}")
        return db

    def _do(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """`work` under the lock; once more on a fresh file if this one proves damaged while running."""
        with self._lock:
            try:
                return work(self._db)
            except sqlite3.DatabaseError as exc:
                if self._file is None or not is_damage(exc):
                    raise
                self._db.close()
                self.moved_aside = self._file.recover(exc)
                self._db = self._connect()
                salvage(self.moved_aside, self._db, self._file.what)
                return work(self._db)

    def close(self) -> None:
        self._db.close()

    def add_plan(self, task_id: str, requirement: str, created_at: float, initial: dict[str, Any]) -> None:
        """`initial`: the graph's input, read until its first checkpoint is written (or after a kill)."""
        self._do(
            lambda db: db.execute(
                "INSERT OR REPLACE INTO plan_index (task_id, requirement, created_at, initial, finished) "
                "VALUES (?, ?, ?, ?, 0)",
                (task_id, requirement, created_at, json.dumps(initial)),
            )
        )

    def confirm(self, task_id: str, initial: dict[str, Any]) -> None:
        """The user said yes: `initial` (the plan as confirmed, going ahead) is what a restart runs
        when the checkpoints are lost; it is never asked again."""
        self._do(
            lambda db: db.execute(
                "UPDATE plan_index SET initial = ?, confirmed = 1 WHERE task_id = ?",
                (json.dumps(initial), task_id),
            )
        )

    def initial(self, task_id: str) -> dict[str, Any] | None:
        def read(db: sqlite3.Connection) -> dict[str, Any] | None:
            row = db.execute("SELECT initial FROM plan_index WHERE task_id = ?", (task_id,)).fetchone()
            return _decoded(row[0]) if row else None

        return self._do(read)

    def plans(self, *, unfinished: bool = False, last: int = 100) -> list[str]:
        """The newest `last` plans' ids, oldest first (`unfinished`: those not yet marked finished)."""
        where = "WHERE finished = 0" if unfinished else ""
        rows = self._do(
            lambda db: db.execute(
                f"SELECT task_id FROM plan_index {where} ORDER BY created_at DESC, rowid DESC LIMIT ?",
                (last,),
            ).fetchall()
        )
        return [row[0] for row in reversed(rows)]

    def finish(self, task_id: str) -> None:
        self._do(lambda db: db.execute("UPDATE plan_index SET finished = 1 WHERE task_id = ?", (task_id,)))

    def next_number(self) -> int:
        """One more than the highest number in the ids ("plan-41" → 42): ids are never reused while
        their plan is kept, however many older ones were pruned."""
        row = self._do(
            lambda db: db.execute(
                "SELECT MAX(CAST(substr(task_id, instr(task_id, '-') + 1) AS INTEGER)) FROM plan_index"
            ).fetchone()
        )
        return int(row[0] or 0) + 1

    def count(self) -> int:
        return int(self._do(lambda db: db.execute("SELECT COUNT(*) FROM plan_index").fetchone()[0]))

    def prunable(self, *, before: float, keep: int) -> list[str]:
        """Finished plans created before `before`, or beyond the newest `keep` finished ones."""
        rows = self._do(
            lambda db: db.execute(
                "SELECT task_id FROM plan_index WHERE finished = 1 AND (created_at < ? OR task_id NOT IN "
                "(SELECT task_id FROM plan_index WHERE finished = 1 "
                "ORDER BY created_at DESC, rowid DESC LIMIT ?))",
                (before, keep),
            ).fetchall()
        )
        return [row[0] for row in rows]

    def forget(self, task_ids: list[str]) -> None:
        """Delete these plans' index rows and their steps, then give the WAL back to the file."""

        def delete(db: sqlite3.Connection) -> None:
            db.executemany("DELETE FROM plan_index WHERE task_id = ?", [(t,) for t in task_ids])
            db.executemany("DELETE FROM plan_ledger WHERE task_id = ?", [(t,) for t in task_ids])
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

        self._do(delete)

    def mark(
        self, task_id: str, step: int, attempt: int, state: str, outcome: dict[str, Any] | None = None
    ) -> None:
        self._do(
            lambda db: db.execute(
                "INSERT OR REPLACE INTO plan_ledger VALUES (?, ?, ?, ?, ?, ?)",
                (task_id, step, attempt, state, json.dumps(outcome or {}), time.time()),
            )
        )

    def seen(self, task_id: str, step: int) -> tuple[str, dict[str, Any]] | None:
        """The furthest any attempt of this step got: ("done", outcome) or ("sending", {})."""

        def read(db: sqlite3.Connection) -> tuple[str, dict[str, Any]] | None:
            rows = db.execute(
                "SELECT state, outcome FROM plan_ledger WHERE task_id = ? AND step = ? ORDER BY attempt DESC",
                (task_id, step),
            ).fetchall()
            return (rows[0][0], _decoded(rows[0][1])) if rows else None

        return self._do(read)

    def attempt(self, task_id: str, step: int, attempt: int) -> tuple[str, dict[str, Any]] | None:
        def read(db: sqlite3.Connection) -> tuple[str, dict[str, Any]] | None:
            row = db.execute(
                "SELECT state, outcome FROM plan_ledger WHERE task_id = ? AND step = ? AND attempt = ?",
                (task_id, step, attempt),
            ).fetchone()
            return (row[0], _decoded(row[1])) if row else None

        return self._do(read)


def _decoded(text: str) -> dict[str, Any]:
    """A JSON object we stored; Unreadable (the file is damaged) if it no longer is one."""
    try:
        value = json.loads(text)
    except (ValueError, TypeError) as exc:
        raise Unreadable(f"a stored value is not JSON any more ({exc})") from None
    if not isinstance(value, dict):
        raise Unreadable(f"a stored value is not a JSON object any more ({type(value).__name__})")
    return value
