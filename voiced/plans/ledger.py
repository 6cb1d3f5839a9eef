"""What was sent, kept apart from the checkpoints: no step of a plan is published twice.

A step is marked `sending` before its command goes out and `done` (with its outcome) after; both are
committed before the call returns. A step found `done` after a restart is not sent again; one found
`sending` was cut off mid-way: if its device already shows the command it is taken as done, else it
is sent (it never reached the device). The same SQLite file holds the index of plans.

Scenes keep a ledger of their own (voiced/vibe/runner.py), in a file of its own or in memory
(":memory:", when scenes are not kept across restarts): `plan_index` is then the index of scenes.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS plan_index (
    task_id TEXT PRIMARY KEY, requirement TEXT, created_at REAL, initial TEXT, finished INTEGER DEFAULT 0
);
CREATE TABLE IF NOT EXISTS plan_ledger (
    task_id TEXT, step INTEGER, attempt INTEGER, state TEXT, outcome TEXT, at REAL,
    PRIMARY KEY (task_id, step, attempt)
);
"""


class Ledger:
    def __init__(self, path: Path | str) -> None:
        self._db = sqlite3.connect(path, timeout=10, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(_SCHEMA)
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(plan_index)")}
        if "finished" not in columns:  # a ledger from before the column
            self._db.execute("ALTER TABLE plan_index ADD COLUMN finished INTEGER DEFAULT 0")
        self._lock = threading.Lock()

    def close(self) -> None:
        self._db.close()

    def add_plan(self, task_id: str, requirement: str, created_at: float, initial: dict[str, Any]) -> None:
        """`initial`: the graph's input, read until its first checkpoint is written (or after a kill)."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO plan_index VALUES (?, ?, ?, ?, 0)",
                (task_id, requirement, created_at, json.dumps(initial)),
            )

    def initial(self, task_id: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT initial FROM plan_index WHERE task_id = ?", (task_id,)).fetchone()
        return json.loads(row[0]) if row else None

    def plans(self, *, unfinished: bool = False, last: int = 100) -> list[str]:
        """The newest `last` plans' ids, oldest first (`unfinished`: those not yet marked finished)."""
        where = "WHERE finished = 0" if unfinished else ""
        with self._lock:
            rows = self._db.execute(
                f"SELECT task_id FROM plan_index {where} ORDER BY created_at DESC, task_id DESC LIMIT ?",
                (last,),
            ).fetchall()
        return [row[0] for row in reversed(rows)]

    def finish(self, task_id: str) -> None:
        with self._lock:
            self._db.execute("UPDATE plan_index SET finished = 1 WHERE task_id = ?", (task_id,))

    def count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM plan_index").fetchone()[0])

    def mark(
        self, task_id: str, step: int, attempt: int, state: str, outcome: dict[str, Any] | None = None
    ) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO plan_ledger VALUES (?, ?, ?, ?, ?, ?)",
                (task_id, step, attempt, state, json.dumps(outcome or {}), time.time()),
            )

    def seen(self, task_id: str, step: int) -> tuple[str, dict[str, Any]] | None:
        """The furthest any attempt of this step got: ("done", outcome) or ("sending", {})."""
        with self._lock:
            rows = self._db.execute(
                "SELECT state, outcome FROM plan_ledger WHERE task_id = ? AND step = ? ORDER BY attempt DESC",
                (task_id, step),
            ).fetchall()
        return (rows[0][0], json.loads(rows[0][1])) if rows else None

    def attempt(self, task_id: str, step: int, attempt: int) -> tuple[str, dict[str, Any]] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT state, outcome FROM plan_ledger WHERE task_id = ? AND step = ? AND attempt = ?",
                (task_id, step, attempt),
            ).fetchone()
        return (row[0], json.loads(row[1])) if row else None
