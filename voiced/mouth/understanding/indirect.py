"""Indirect phrasings said as the direct request they stand for, before any template sees them.

"Would you mind lighting up the kitchen" is "light up the kitchen"; "could you possibly turn off
the bedroom light" is "turn off the bedroom light"; "4000 K" is "4000 kelvin"; a value said alone
after a request ("about sixty percent") is "set it to sixty percent", so "it" decides what it is
for (and asks which one when nothing was acted on before). The words are the language file's
(`indirect` in voiced/language/en.yaml); this module only joins them into patterns.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass

from voiced.language import Language, english


@dataclass(frozen=True)
class _Indirect:
    asking: re.Pattern[str]
    gerunds: Mapping[str, str]
    about: re.Pattern[str]
    kelvin: str
    bare: re.Pattern[str]
    bare_said: str


@functools.cache
def _indirect(lang: Language) -> _Indirect:
    """The language file's indirect phrasings, joined into patterns."""
    raw = lang.indirect
    number = str(raw["number"])
    openers = "|".join(str(w) for w in raw["bare_openers"])
    return _Indirect(
        asking=re.compile("^(?:" + "|".join(str(p) for p in raw["asking"]) + ")"),
        gerunds={str(k): str(v) for k, v in raw["gerunds"].items()},
        about=re.compile(rf"\b(?:{'|'.join(str(w) for w in raw['about'])}) (?={number} percent\b)"),
        kelvin=str(raw["kelvin"]),
        bare=re.compile(rf"^(?:(?:{openers}) )?({number} percent)$"),
        bare_said=str(raw["bare_said"]),
    )


_KELVIN = re.compile(r"\b(\d{4,5}) ?k\b")


def direct(segment: str) -> str:
    """The segment as the direct request it stands for (cleaned text in, cleaned text out)."""
    said = _indirect(english())
    asked = said.asking.sub("", segment, count=1)
    if asked != segment:
        first, _, rest = asked.partition(" ")
        asked = f"{said.gerunds.get(first, first)} {rest}".strip()
    text = said.about.sub("", asked)
    text = _KELVIN.sub(rf"\1 {said.kelvin}", text)
    bare = said.bare.match(text)
    return f"{said.bare_said} {bare.group(1)}" if bare else text
