"""Ways a SQLite file of ours gets damaged, each applied to a closed file (its sidecars beside it).

`table` is the file's main table (the one a "dropped table" drops). Shared by tests/test_stores.py
and the reliability bench (bench/reliability/stores.py). A directory in a file's place is not here:
that is a config error (exit 2), not damage.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

PAGE = 4096
Damage = Callable[[Path, str, random.Random], None]


def _patch(path: Path, at: int, data: bytes) -> None:
    body = bytearray(path.read_bytes())
    at = at if at >= 0 else max(0, len(body) + at)
    body[at : at + len(data)] = data
    path.write_bytes(bytes(body))


def _sql(path: Path, *statements: str) -> None:
    with closing(sqlite3.connect(path)) as db, db:
        for statement in statements:
            db.execute(statement)
    with closing(sqlite3.connect(path)) as db:
        db.execute("pragma wal_checkpoint(truncate)")


def _columns(path: Path, table: str) -> str:
    with closing(sqlite3.connect(path)) as db:
        return ", ".join(f"{row[1]} as {row[1]}" for row in db.execute(f"pragma table_info({table})"))


def _view_in_place(path: Path, table: str) -> None:
    """The table's rows behind a view of the same name and columns: it reads, but is not ours."""
    _sql(path, f"create table kept as select * from {table}", f"drop table {table}")
    _sql(path, f"create view {table} as select {_columns(path, 'kept')} from kept")


def _sprinkled(path: Path, rng: random.Random) -> None:
    body = bytearray(path.read_bytes())
    for _ in range(64):
        body[rng.randrange(100, len(body))] ^= 0xA5
    path.write_bytes(bytes(body))


DAMAGES: dict[str, Damage] = {
    "magic-flipped": lambda p, t, r: _patch(p, 0, bytes(b ^ 0xFF for b in p.read_bytes()[:16])),
    "header-random": lambda p, t, r: _patch(p, 0, r.randbytes(100)),
    "page-size-zero": lambda p, t, r: _patch(p, 16, b"\x00\x03"),
    "schema-page-random": lambda p, t, r: _patch(p, 100, r.randbytes(PAGE - 100)),
    "page-2-random": lambda p, t, r: _patch(p, PAGE, r.randbytes(PAGE)),
    "page-2-zeroed": lambda p, t, r: _patch(p, PAGE, bytes(PAGE)),
    "last-page-random": lambda p, t, r: _patch(p, -PAGE, r.randbytes(PAGE)),
    "bytes-sprinkled": lambda p, t, r: _sprinkled(p, r),
    "truncated-to-0": lambda p, t, r: p.write_bytes(b""),
    "truncated-to-100": lambda p, t, r: p.write_bytes(p.read_bytes()[:100]),
    "truncated-to-a-page": lambda p, t, r: p.write_bytes(p.read_bytes()[:PAGE]),
    "truncated-to-half": lambda p, t, r: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]),
    "garbage-appended": lambda p, t, r: p.write_bytes(p.read_bytes() + r.randbytes(3 * PAGE)),
    "a-text-file": lambda p, t, r: p.write_text("this is not a database\n" * 400),
    "random-bytes-file": lambda p, t, r: p.write_bytes(r.randbytes(8 * PAGE)),
    "one-newline": lambda p, t, r: p.write_bytes(b"\n"),
    "table-dropped": lambda p, t, r: _sql(p, f"drop table {t}"),
    "all-tables-dropped": lambda p, t, r: _sql(p, *(f"drop table {name}" for name in _tables(p))),
    "table-of-another-shape": lambda p, t, r: _sql(
        p, f"drop table {t}", f"create table {t} (id integer, blob blob)"
    ),
    "a-view-in-its-place": lambda p, t, r: _view_in_place(p, t),
    "wal-garbage": lambda p, t, r: p.with_name(p.name + "-wal").write_bytes(r.randbytes(5 * PAGE)),
    "shm-garbage": lambda p, t, r: p.with_name(p.name + "-shm").write_bytes(r.randbytes(8 * PAGE)),
    "journal-garbage": lambda p, t, r: p.with_name(p.name + "-journal").write_bytes(r.randbytes(2 * PAGE)),
}


def _tables(path: Path) -> list[str]:
    with closing(sqlite3.connect(path)) as db:
        return [row[0] for row in db.execute("select name from sqlite_master where type = 'table'")]
