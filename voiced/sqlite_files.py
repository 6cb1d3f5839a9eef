"""Every SQLite file the daemon owns (brain, plans, scenes) is opened, checked and recovered one way.

At start `open_checked` reads every page (`pragma quick_check`) and, where we know the schema, the
tables' shape. A file SQLite calls damaged (malformed pages, not a database) or whose tables are
not ours (one dropped, a view in its place, columns missing) is moved aside with its -wal/-shm/
-journal sidecars, renamed with the UTC time, said in ONE log line (which file, why, where it went),
and a fresh file starts: a damaged file must not make every start fail (a restart loop under
systemd). While running, `recover` does the same for a failure `is_damage` recognises, so the store
reopens fresh and the turn goes on. What is not the file's fault (a directory in its place, no
permission, a missing folder) is a ConfigError naming the config key.
"""

from __future__ import annotations

import logging
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from voiced.errors import ConfigError

_LOGGER = logging.getLogger(__name__)
_DAMAGED = (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
SIDECARS = ("-wal", "-shm", "-journal")  # a new file must not pick up the old one's journal


@dataclass(frozen=True)
class Table:
    """One of our tables and the columns it must have (more may follow: added by later versions)."""

    name: str
    columns: tuple[str, ...]


class Damaged(Exception):
    """The file is SQLite's to call damaged, or its tables are not ours."""


class Unreadable(sqlite3.DatabaseError):
    """A value we stored does not read back (bytes changed inside a row: no page check sees that)."""


def is_damage(exc: BaseException) -> bool:
    """A failure that moving the file aside cures: damaged pages, not a database, a table gone."""
    if isinstance(exc, Unreadable | UnicodeDecodeError):  # SQLite's own messages quote changed bytes too
        return True
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    if getattr(exc, "sqlite_errorcode", 0) & 0xFF in _DAMAGED:  # extended codes too
        return True
    # a table dropped under us; text whose bytes were changed
    return str(exc).startswith(("no such table", "no such column", "Could not decode to UTF-8"))


class SqliteFile:
    """`what` names the file in the log ("plans' ledger"); `key` is its config key for errors."""

    def __init__(
        self,
        path: Path,
        *,
        what: str,
        key: str,
        tables: tuple[Table, ...] = (),
        afresh: str = "starting afresh",
    ) -> None:
        self.path = path
        self.afresh = afresh  # what starts instead, in the log line
        self.what = what
        self.key = key
        self.tables = tables
        self.moved_aside: list[Path] = []  # where each damaged copy went, oldest first

    def open_checked(self) -> Path | None:
        """Check the file before anything writes to it; a damaged one is moved aside (returned)."""
        if self.path.parent and not self.path.parent.is_dir():
            raise ConfigError(f"{self.key}: folder {self.path.parent} does not exist")
        if self.path.exists() and not self.path.is_file():
            raise ConfigError(f"{self.key}: {self.path} is not a file (a directory or a device?)")
        try:
            self.check()
        except Damaged as exc:
            aside = self._move_aside(str(exc))
            try:
                self.check()
            except Damaged as again:  # a fresh file: only a broken disk would do this
                raise ConfigError(f"{self.key}: a new {self.path} is damaged too ({again})") from None
            return aside
        return None

    def check(self) -> None:
        """Raises Damaged (the file's fault) or ConfigError (not the file's: locked, no permission)."""
        if not self.path.exists():
            return
        try:
            with closing(sqlite3.connect(self.path, timeout=5)) as db:
                db.text_factory = lambda raw: raw.decode("utf-8", "replace")  # damaged text is still read
                problems = [row[0] for row in db.execute("pragma quick_check(3)")]
                if problems != ["ok"]:
                    raise Damaged(" ".join(" ".join(str(p) for p in problems).split()))  # one line
                self._check_tables(db)
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
            if is_damage(exc):
                raise Damaged(str(exc)) from None
            raise ConfigError(f"{self.key}: {self.path} is not a usable SQLite database ({exc})") from None

    def _check_tables(self, db: sqlite3.Connection) -> None:
        names = [table.name for table in self.tables]
        marks = ",".join("?" * len(names))
        kinds: dict[str, set[str]] = {}
        for kind, name in db.execute(
            f"select type, tbl_name from sqlite_master where tbl_name in ({marks})", names
        ):
            kinds.setdefault(name, set()).add(kind)
        if not kinds:
            return  # a new file (or emptied to 0 bytes): our tables are added
        for table in self.tables:
            if table.name not in kinds:
                raise Damaged(f"its {table.name} table is missing")
            columns = [row[1] for row in db.execute(f"pragma table_info({table.name})")]
            if (
                "table" not in kinds[table.name]
                or kinds[table.name] & {"view", "trigger"}
                or not set(table.columns) <= set(columns)
            ):
                shown = ", ".join(columns) or "none"
                raise Damaged(f"its {table.name} table has another shape (columns {shown})")

    def recover(self, exc: BaseException) -> Path:
        """A failure while running: the file is moved aside; the caller reopens it fresh."""
        return self._move_aside(f"failed while running: {exc}")

    def _move_aside(self, why: str) -> Path:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        aside = self.path.with_name(f"{self.path.name}.damaged-{stamp}")
        number = 1
        while aside.exists():  # damaged twice in one second: keep both
            number += 1
            aside = self.path.with_name(f"{self.path.name}.damaged-{stamp}-{number}")
        try:
            for suffix in ("", *SIDECARS):
                source = self.path.with_name(self.path.name + suffix)
                if source.exists():
                    source.rename(aside.with_name(aside.name + suffix))
        except OSError as exc:
            raise ConfigError(
                f"{self.key}: {self.path} is damaged ({why}) and could not be moved aside ({exc})"
            ) from None
        _LOGGER.error(
            "%s: %s is damaged (%s); moved it aside to %s, %s", self.what, self.path, why, aside, self.afresh
        )
        self.moved_aside.append(aside)
        return aside
