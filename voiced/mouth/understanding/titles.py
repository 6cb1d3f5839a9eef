"""Titles to search for that the ear was unsure of: asked back before anything plays.

A title is free text, so the grammar cannot tell "Claire to learn" from "Clair de Lune"; only the
ear can say it doubted the words. A search for words it doubted is read back first ("Did you say
'claire to learn'?"), and a yes plays it.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from voiced.devices.model import DeviceCommand, MusicSet
from voiced.language import english
from voiced.language.replies import say

AGREEING = 3  # the ear's other readings that must all hear a doubted one-word title for it to play


def doubted_title(
    commands: Sequence[DeviceCommand], doubtful: Collection[str], alternatives: Sequence[str] = ()
) -> str | None:
    """The first title to search for that has a word the ear doubted (but a one-word title every one
    of at least three other readings has: "queen"), that one of the ear's other
    readings of the audio does not have ("Miles David" beside "Miles Davis"), or that reads as a
    broken phrase rather than a name (only small words, or ending on "is", "the", "my", ...)."""
    for command in commands:
        if not isinstance(command, MusicSet) or not command.query:
            continue
        words = command.query.split()
        lang = english()
        if all(w in lang.title_small_words for w in words) or words[-1] in lang.title_dangling:
            return command.query
        agreed = all(f" {' '.join(words)} " in f" {' '.join(_words(a))} " for a in alternatives)
        if not agreed or (set(words) & set(doubtful) and not _overruled(words, alternatives)):
            return command.query
    return None


def doubted_value(
    commands: Sequence[DeviceCommand], doubtful: Collection[str], alternatives: Sequence[str] = ()
) -> str | None:
    """A genre or scent to act on that the ear doubted hearing (a genre misheard in noise is another
    genre played), unless every one of at least AGREEING other readings has it too."""
    for command in commands:
        for value in (getattr(command, "genre", None), getattr(command, "scent", None)):
            if not isinstance(value, str) or not set(_words(value)) & set(doubtful):
                continue
            agreed = len(alternatives) >= AGREEING and all(
                f" {value} " in f" {' '.join(_words(a))} " for a in alternatives
            )
            if not agreed:
                return value
    return None


def _overruled(words: list[str], alternatives: Sequence[str]) -> bool:
    """A doubted one-word title ("queen") every one of the ear's other readings has too (at least
    AGREEING of them): the beams agree on the word, so it was heard right. A title of several words
    ("claire to learn") is read back all the same: one doubted word in it may be any of them."""
    return len(words) == 1 and len(alternatives) >= AGREEING


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def ask(title: str) -> str:
    return say("title_asked", title=title)


def ask_said(text: str) -> str:
    return say("said_asked", text=text.strip().rstrip(".,!?"))


def yes_or_no(text: str) -> bool | None:
    """True for a yes, False for a no, None for anything else (a request of its own)."""
    words = text.lower().replace(",", " ").replace(".", " ").replace("!", " ").replace("?", " ").split()
    if not words or len(words) > 4:
        return None
    yes, after_yes, no = (english().answers[k] for k in ("yes", "after_yes", "no"))
    if words[0] in no or any(w in no for w in words):
        return False
    if words[0] in yes and all(w in yes or w in after_yes for w in words):
        return True
    return None


def may_name_a_title(text: str) -> bool:
    """Whether a transcript may hold a title to search for, so the ear should weigh its words."""
    words = f" {' '.join(text.lower().replace(',', ' ').replace('.', ' ').split())} "
    return any(f" {cue} " in words for cue in english().asks_to_play)
