"""The rehearsed replies kept on disk (`tts.rehearsal_file`), so that a restart plays them at once
instead of synthesizing them again (~20 s of CPU for a home of ten devices).

Each reply is kept under the voice that said it (the piper file and its settings, its `identity`):
a reply of another voice is never played, and is deleted when the file is opened. Audio is 16-bit
PCM at the voice's own rate, as piper gives it. The file is opened, checked and recovered as every
SQLite file of ours (`sqlite_files`); a failure while running is logged and costs nothing but the
keeping: the reply is still played, and rehearsed again at the next start.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path

import numpy as np

from voiced.sqlite_files import SqliteFile, Table, is_damage

_LOGGER = logging.getLogger(__name__)
TABLES = (Table("replies", ("voice", "sentence", "audio")),)
_SCHEMA = (
    "create table if not exists replies (voice text not null, sentence text not null, "
    "audio blob not null, primary key (voice, sentence))"
)


class RehearsalFile:
    """Blocking: opened and written off the event loop (the rehearsal's thread)."""

    def __init__(self, path: Path, voice: str) -> None:
        self.path = path
        self._voice = voice
        what, key = "rehearsed replies", "tts.rehearsal_file"
        self._file = SqliteFile(path, what=what, key=key, tables=TABLES, afresh="rehearsing afresh")
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._failed = False  # logged once; the replies are then kept in memory only

    def open(self) -> dict[str, np.ndarray]:
        """This voice's replies kept by an earlier run (another voice's are deleted)."""
        self._file.open_checked()
        with self._lock:
            try:
                return self._read()
            except sqlite3.Error as exc:
                return self._afresh(exc)

    def _read(self) -> dict[str, np.ndarray]:
        self._db = db = sqlite3.connect(self.path, check_same_thread=False, timeout=5)
        db.execute(_SCHEMA)
        with db:
            db.execute("delete from replies where voice != ?", (self._voice,))
        rows = db.execute("select sentence, audio from replies where voice = ?", (self._voice,))
        return {sentence: np.frombuffer(audio, dtype=np.int16) for sentence, audio in rows}

    def save(self, sentence: str, audio: np.ndarray) -> None:
        with self._lock:
            if self._db is None or self._failed:
                return
            try:
                with self._db:
                    self._db.execute(
                        "insert or replace into replies (voice, sentence, audio) values (?, ?, ?)",
                        (self._voice, sentence, np.asarray(audio, dtype=np.int16).tobytes()),
                    )
            except sqlite3.Error as exc:
                self._afresh(exc)

    def _afresh(self, exc: sqlite3.Error) -> dict[str, np.ndarray]:
        """After a failure: a damaged file is moved aside and a fresh one opened; anything else (or
        a fresh file failing too) stops the keeping. What the file now holds (nothing, or {})."""
        if not is_damage(exc):
            self._fail(exc)
            return {}
        self._close()
        self._file.recover(exc)
        try:
            return self._read()
        except sqlite3.Error as again:
            self._fail(again)
            return {}

    def _fail(self, exc: BaseException) -> None:
        self._failed = True
        _LOGGER.warning(
            "rehearsed replies: %s cannot be written (%s); replies are rehearsed again at each start",
            self.path,
            exc,
        )

    def _close(self) -> None:
        db, self._db = self._db, None
        if db is not None:
            db.close()

    def close(self) -> None:
        with self._lock:
            self._close()
