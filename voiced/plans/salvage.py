"""The rows of a damaged ledger that still read back, copied into its fresh file.

Damage rarely spares nothing: a page of step records gone can leave the index of plans whole. What
reads back (row by row, up to the first row SQLite refuses, its JSON still JSON) is kept, so a plan
the user confirmed is still known after its ledger was moved aside, and a step done is not sent again.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from contextlib import closing
from pathlib import Path

_LOGGER = logging.getLogger(__name__)
_KEPT = {  # table → its columns worth keeping, and those holding JSON
    "plan_index": (
        ("task_id", "requirement", "created_at", "initial", "finished", "confirmed"),
        ("initial",),
    ),
    "plan_ledger": (("task_id", "step", "attempt", "state", "outcome", "at"), ("outcome",)),
}


def salvage(damaged: Path, into: sqlite3.Connection, what: str) -> int:
    """Copy what still reads back from `damaged` (opened read-only) into `into`; the rows copied."""
    copied = 0
    try:
        with closing(sqlite3.connect(f"file:{damaged}?mode=ro", uri=True)) as old:
            for table, (wanted, json_columns) in _KEPT.items():
                copied += _copy(old, into, table, wanted, json_columns)
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:  # too damaged to open at all
        _LOGGER.debug("%s: nothing read back from %s (%s)", what, damaged, exc)
    if copied:
        _LOGGER.info("%s: %d row(s) read back from the damaged %s", what, copied, damaged.name)
    return copied


def _copy(
    old: sqlite3.Connection,
    into: sqlite3.Connection,
    table: str,
    wanted: tuple[str, ...],
    json_columns: tuple[str, ...],
) -> int:
    present = [row[1] for row in old.execute(f"pragma table_info({table})")]
    columns = [c for c in wanted if c in present]
    if "task_id" not in columns:
        return 0
    cursor = old.execute(f"select {', '.join(columns)} from {table}")
    copied = 0
    while True:
        try:
            row = cursor.fetchone()
        except (sqlite3.DatabaseError, UnicodeDecodeError):
            return copied  # the rest is past the damage
        if row is None:
            return copied
        if not all(_is_json(row[columns.index(c)]) for c in json_columns if c in columns):
            continue
        marks = ", ".join("?" * len(columns))
        into.execute(f"insert or ignore into {table} ({', '.join(columns)}) values ({marks})", row)
        copied += 1


def _is_json(value: object) -> bool:
    try:
        return isinstance(json.loads(value), dict) if isinstance(value, str) else False
    except ValueError:
        return False
