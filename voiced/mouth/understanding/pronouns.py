"""'It', 'them', 'that one': the devices last acted on, within an utterance and across turns."""

from __future__ import annotations

import re

from voiced.language import english
from voiced.mouth.understanding.grammar import human
from voiced.mouth.understanding.home import Match, Slot

_LANG = english()
_PRONOUN = re.compile(r"\b(?:" + "|".join(map(re.escape, _LANG.word_lists["pronouns"])) + r")\b(?!')")
_IDIOM = re.compile(r"\b(?:" + "|".join(map(re.escape, _LANG.word_lists["pronoun_idioms"])) + r")\b")


def resolve(text: str, last: tuple[str, ...]) -> tuple[str, str | None]:
    """The text with a pronoun replaced by the first device last acted on, and that device."""
    if not last or _IDIOM.search(text) or not _PRONOUN.search(text):
        return text, None
    stand_in = last[0]
    return _PRONOUN.sub(f"{_LANG.article} {human(stand_in)}", text, count=1), stand_in


def dangling(text: str, last: tuple[str, ...]) -> bool:
    """ "Change it to green" with nothing acted on before (or after a miss): "it" points nowhere."""
    here = re.search(r"\b(?:here|this room)\b", text)  # "make it brighter in here": the room is named
    return not last and bool(_PRONOUN.search(text)) and not _IDIOM.search(text) and not here


def widen(match: Match, stand_in: str | None, last: tuple[str, ...]) -> Match:
    """ "Them" meant every device last acted on: the stand-in in the match becomes the group."""
    if stand_in is None or len(last) < 2 or match.get("name") != stand_in:
        return match
    slots = dict(match.slots)
    slots["name"] = Slot(",".join(last), slots["name"].text)
    return Match(match.intent, slots, match.fuzzy, match.wild)


def topic_first(tokens: list[str], devices: dict[tuple[str, ...], str]) -> str | None:
    """ "Diffuser, make it 30": one device named first, then a request about "it": the request with
    "it" as that device; None when the words are not so."""
    at = 0
    while at < len(tokens) and tokens[at] in _LANG.determiners:
        at += 1
    named = [p for p in devices if tuple(tokens[at : at + len(p)]) == p]
    if not named:
        return None
    name = max(named, key=len)
    after = tokens[at + len(name) :]
    rest = " ".join(after)
    others = any(tuple(after[i : i + len(p)]) == p for p in devices for i in range(len(after)))
    if others or not _PRONOUN.search(rest) or _IDIOM.search(rest):
        return None  # "the kitchen light and the bedroom one, turn them off": not one device
    return resolve(rest, (devices[name],))[0]
