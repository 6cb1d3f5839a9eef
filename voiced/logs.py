"""One log format for every logger, which no call site can forge.

Every message is escaped after it is formatted (`safe_text.escape`: control characters and lone
surrogates as visible escapes), so a newline in a device name, a payload or an LLM's tool call
cannot start a line that looks like ours. A traceback's lines are indented and escaped the same
way (an exception's message is text from anywhere): only a record's first line starts at the margin.
"""

from __future__ import annotations

import logging

from voiced.safe_text import escape

CONTINUATION = "\n    "


class SafeFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        safe = logging.makeLogRecord(record.__dict__)  # other handlers keep the record as it was
        safe.msg = escape(record.getMessage())
        safe.args = None
        text = super().format(safe)
        head, _, tail = text.partition("\n")  # the traceback: its lines indented, each escaped
        return CONTINUATION.join([head, *(escape(line) for line in tail.split("\n"))]) if tail else head


def configure(level: str, *, timestamps: bool) -> None:
    """The root logger's one handler, on standard error."""
    stamp = "%(asctime)s " if timestamps else ""
    handler = logging.StreamHandler()
    handler.setFormatter(SafeFormatter(f"{stamp}%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level.upper(), handlers=[handler], force=True)
