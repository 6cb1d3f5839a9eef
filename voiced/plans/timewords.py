"""Time words in a request, pure and clock-free: "in ten minutes", "at 7", "then", "over 15 minutes",
"for 10 minutes".

`parts(text)` cuts a request at "then" and takes each part's time words out of its text, so the
words left are a plain command for the local understanding. Clauses joined by "and" or a comma are
parts of their own when they are for different times: "turn on the kitchen light now and turn it off
in 2 minutes" (a clause says "now", or more than one has time words); `each_clause` cuts them so
whatever their time words (the planner's second reading, when the whole one means nothing).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from voiced.plans.words import plan_language

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
_FOR = re.compile(rf"\bfor\s+(?:the\s+next\s+)?(?P<n>{_NUMBER})\s+{_UNIT}\b")
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


@functools.cache
def _now_words() -> re.Pattern[str]:
    said = sorted((str(w) for w in plan_language()["now"]), key=len, reverse=True)
    return re.compile(r"\b(?:" + "|".join(re.escape(w) for w in said) + r")\b")


@functools.cache
def _clause_opening() -> re.Pattern[str]:
    """What a clause of its own begins with, after "and" or a comma: a verb, or time words."""
    verbs = "|".join(re.escape(str(v)) for v in plan_language()["verbs"])
    return re.compile(rf"(?:please\s+)?(?:{verbs})\b|(?:in|after)\s+{_NUMBER}\s+{_UNIT}\b|at\s+{_NUMBER}\b")


def clauses(chunk: str) -> list[str]:
    """ "turn on the kitchen light now and turn it off in 2 minutes" → its two clauses."""
    found: list[str] = []
    start = 0
    for joint in re.finditer(r"\s*,\s*(?:and\s+)?|\s+and\s+", chunk):
        if _clause_opening().match(chunk, joint.end()) and chunk[start : joint.start()].strip():
            found.append(chunk[start : joint.start()])
            start = joint.end()
    found.append(chunk[start:])
    return [c.strip(" ,.;") for c in found if c.strip(" ,.;")]


@dataclass(frozen=True)
class Part:
    """One stretch of a request between "then"s: its words, and its time words read."""

    text: str
    then: bool  # it followed a "then"
    delay_s: float | None = None  # "in ten minutes"
    at: datetime | None = None  # "at 7"
    over_s: float | None = None  # "over 15 minutes"
    now: bool = False  # it said it is for now
    for_s: float | None = None  # "for 10 minutes": undone after this long

    @property
    def timed(self) -> bool:
        return any(v is not None for v in (self.delay_s, self.at, self.over_s, self.for_s))


def parts(text: str, now: datetime, *, each_clause: bool = False) -> list[Part]:
    found: list[Part] = []
    for i, chunk in enumerate(_THEN.split(text.lower())):
        chunk = chunk.strip(" ,.;")
        if not chunk:
            continue
        pieces = [_read(clause, i > 0, now) for clause in clauses(chunk)]
        apart = sum(p.timed for p in pieces) > 1 or any(p.now for p in pieces)
        if len(pieces) > 1 and (apart or each_clause):
            found += pieces
        else:
            found.append(_read(chunk, i > 0, now))
    return found


def _read(chunk: str, then: bool, now: datetime) -> Part:
    """One clause's time words, taken out of its text."""
    delay = at = over = lasting = None
    if (m := _FOR.search(chunk)) is not None:
        lasting = _seconds(m["n"], m["unit"])
        chunk = chunk[: m.start()] + chunk[m.end() :]
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
    said_now = _now_words().search(chunk) is not None
    chunk = _now_words().sub(" ", chunk)
    return Part(" ".join(chunk.split()).strip(" ,."), then, delay, at, over, said_now, lasting)


def has_time_words(text: str) -> bool:
    lowered = text.lower()
    return any(p.search(lowered) for p in (_IN, _OVER, _AT, _THEN, _FOR))
