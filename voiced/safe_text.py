"""Text made safe once, at the edge where it enters: typed lines, HTTP bodies, MQTT payloads,
discovery configs, LLM output and Whisper output all pass `clean` before anything stores, logs
or publishes them.

A lone surrogate ("\\ud800", legal in JSON, in a Python str, never in UTF-8) cannot be encoded:
left in, it breaks the first write to SQLite, MQTT or a log file, far from where it came in. A
control character can forge a log line or a terminal's colours. Both become U+FFFD; a line break
or tab in free text becomes a space (no field we keep is multi-line).
"""

from __future__ import annotations

import json
import re
from typing import Any

REPLACEMENT = "\ufffd"
_UNSAFE = re.compile(r"[\ud800-\udfff\x00-\x1f\x7f-\x9f\u2028\u2029]")
_BREAKS = re.compile(r"[\t\n\r]")
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = re.compile(r"[\[\]{}]")
MAX_JSON_DEPTH = 32
MAX_NUMBER_CHARS = 40  # longer than any value a device or a field takes (a float's repr is <= 24)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


class UnsafeJson(ValueError):
    """JSON nested deeper than MAX_JSON_DEPTH or with a number longer than MAX_NUMBER_CHARS."""


def clean(text: str, *, keep_breaks: bool = False) -> str:
    """`text` with lone surrogates and control characters as U+FFFD, line breaks and tabs as spaces
    (`keep_breaks`: kept, for free text such as an LLM's reply, where a line break means a pause)."""
    if text.isascii() and text.isprintable():  # the usual case, at C speed
        return text
    if not keep_breaks:
        text = _BREAKS.sub(" ", text)
    return _UNSAFE.sub(lambda found: found.group() if found.group() in "\t\n\r" else REPLACEMENT, text)


def escape(text: str) -> str:
    """Control characters and lone surrogates as visible escapes (for logs: a value cannot forge a
    line or colour the terminal, and what it held can still be read)."""
    return _CONTROL.sub(
        lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256 else f"\\u{ord(m.group()):04x}", text
    )


def clean_value(value: Any) -> Any:
    """Every string in a JSON value (keys too) cleaned; other values as they were."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {clean(str(key)): clean_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [clean_value(item) for item in value]
    return value


def decode(payload: bytes) -> str:
    """Bytes from outside as cleaned text: invalid UTF-8 becomes U+FFFD, never an exception."""
    return clean(payload.decode("utf-8", errors="replace"))


def loads(
    text: str | bytes, *, max_depth: int = MAX_JSON_DEPTH, max_number_chars: int = MAX_NUMBER_CHARS
) -> Any:
    """`json.loads`, refusing deep nesting and huge numbers (UnsafeJson) before they cost a
    RecursionError or a 5,000-digit int; strings come back cleaned. JSONDecodeError as usual."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    brackets = text.count("[") + text.count("{")
    deepest = depth(text) if brackets > max_depth else 0
    if deepest > max_depth:
        raise UnsafeJson(f"nested {deepest} levels deep; at most {max_depth}")

    def whole(literal: str) -> int:
        if len(literal) > max_number_chars:
            raise UnsafeJson(f"a number {len(literal)} digits long; at most {max_number_chars}")
        return int(literal)

    def real(literal: str) -> float:
        if len(literal) > max_number_chars:
            raise UnsafeJson(f"a number {len(literal)} characters long; at most {max_number_chars}")
        return float(literal)

    return clean_value(json.loads(text, parse_int=whole, parse_float=real, parse_constant=_constant))


def depth(text: str) -> int:
    """The deepest nesting of [ and { outside strings (counted, not parsed: it cannot recurse)."""
    deepest = level = 0
    for bracket in _BRACKETS.findall(_STRINGS.sub("", text)):
        level += 1 if bracket in "[{" else -1
        deepest = max(deepest, level)
    return deepest


def _constant(literal: str) -> float:
    raise UnsafeJson(f"{literal} is not a JSON number")
