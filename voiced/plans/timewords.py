"""Time words in a request, pure and clock-free: "in ten minutes", "at 7", "then", "over 15 minutes".

`parts(text)` cuts a request at "then" and takes each part's time words out of its text, so the
words left are a plain command for the local understanding.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

_UNITS = {"second": 1, "sec": 1, "minute": 60, "min": 60, "hour": 3600}
_SMALL = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60}
_NUMBER = (
    r"(?:\d{1,4}|(?:twenty|thirty|forty|fifty|sixty)(?:[\s-](?:one|two|three|four|five|six|seven|eight|nine))?"
    r"|" + "|".join(_SMALL) + r"|an?|a few|a couple of|half an?)"
)
_UNIT = r"(?P<unit>seconds?|secs?|minutes?|mins?|hours?)"
_IN = re.compile(rf"\b(?:in|after)\s+(?P<n>{_NUMBER})\s+{_UNIT}\b")
_OVER = re.compile(rf"\b(?:over|during)\s+(?:the\s+next\s+)?(?P<n>{_NUMBER})\s+{_UNIT}\b")
_AT = re.compile(
    rf"\bat\s+(?P<h>{_NUMBER})(?:[:.](?P<m>\d\d))?\s*(?P<ampm>a\.?m\.?|p\.?m\.?|o'?clock|in the morning|"
    r"in the evening|tonight)?(?=\W|$)(?!\s*(?:%|percent|degrees))"  # "at 40 percent" is no time
)
_THEN = re.compile(r"\s*,?\s*\b(?:and\s+)?(?:then|after that|afterwards)\b\s*,?\s*")
TRIGGERS = re.compile(
    r"\bwhen\s+(?:i|we)\s+(?:leave|get home|come home|go out|go to bed|wake up|arrive)\b"
    r"|\bwhen\s+\w+\s+arrives?\b"
)


def number(words: str) -> float:
    words = words.strip().replace("-", " ")
    if words.isdigit():
        return float(words)
    if words in ("a", "an"):
        return 1.0
    if words.startswith("half"):
        return 0.5
    if words == "a few":
        return 3.0
    if words == "a couple of":
        return 2.0
    if words in _SMALL:
        return float(_SMALL.index(words))
    head, _, tail = words.partition(" ")
    return float(_TENS.get(head, 0) + (_SMALL.index(tail) if tail in _SMALL else 0))


def _seconds(n: str, unit: str) -> float:
    return number(n) * _UNITS[unit.rstrip("s")]


def next_time(hour: int, minute: int, ampm: str | None, now: datetime) -> datetime:
    """The next moment the clock shows hour:minute; without am/pm, the earlier of the two readings."""
    ampm = (ampm or "").replace(".", "").replace("'", "")
    candidates: list[int] = []
    if ampm in ("am", "in the morning") and hour <= 12:
        candidates = [hour % 12]
    elif ampm in ("pm", "in the evening", "tonight") and hour <= 12:
        candidates = [hour % 12 + 12]
    elif hour >= 13:
        candidates = [hour % 24]
    else:
        candidates = [hour % 12, hour % 12 + 12]
    best: datetime | None = None
    for h in candidates:
        at = now.replace(hour=h, minute=minute, second=0, microsecond=0)
        if at <= now:
            at += timedelta(days=1)
        if best is None or at < best:
            best = at
    assert best is not None
    return best


@dataclass(frozen=True)
class Part:
    """One stretch of a request between "then"s: its words, and its time words read."""

    text: str
    then: bool  # it followed a "then"
    delay_s: float | None = None  # "in ten minutes"
    at: datetime | None = None  # "at 7"
    over_s: float | None = None  # "over 15 minutes"


def parts(text: str, now: datetime) -> list[Part]:
    found: list[Part] = []
    for i, chunk in enumerate(_THEN.split(text.lower())):
        chunk = chunk.strip(" ,.;")
        if not chunk:
            continue
        delay = at = over = None
        if (m := _IN.search(chunk)) is not None:
            delay = _seconds(m["n"], m["unit"])
            chunk = chunk[: m.start()] + chunk[m.end() :]
        if (m := _OVER.search(chunk)) is not None:
            over = _seconds(m["n"], m["unit"])
            chunk = chunk[: m.start()] + chunk[m.end() :]
        if (m := _AT.search(chunk)) is not None:
            hour = int(number(m["h"]))
            minute = int(m["m"]) if m["m"] else 0
            if 0 <= hour <= 23 and 0 <= minute <= 59:
                at = next_time(hour, minute, m["ampm"], now)
                chunk = chunk[: m.start()] + chunk[m.end() :]
        found.append(Part(" ".join(chunk.split()).strip(" ,."), i > 0, delay, at, over))
    return found


def has_time_words(text: str) -> bool:
    lowered = text.lower()
    return any(p.search(lowered) for p in (_IN, _OVER, _AT, _THEN))
