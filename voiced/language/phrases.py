"""Phrases: the one tokenizer, and where phrases occur in a text's words (longest first, each word
taken once)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

_TOKEN = re.compile(r"\d+|[a-z]+(?:'[a-z]+)?")

Phrase = tuple[str, ...]


def words(text: str) -> list[str]:
    """Lower-case words and digit runs; apostrophes kept inside words ("what's"), all else dropped."""
    return _TOKEN.findall(text.lower().replace("\u2019", "'").replace("-", " "))


def phrase(text: str) -> Phrase:
    return tuple(words(text))


_Index = dict[str, list[tuple[int, Phrase]]]


@functools.lru_cache(maxsize=1024)  # the language's and the home's classes, and a few made of them
def _index(phrases: tuple[Phrase, ...]) -> _Index:
    """The phrases by their first word (a one-word phrase also by its plural), each with its rank:
    longer phrases first, then in the order given."""
    ranked = sorted(enumerate(phrases), key=lambda item: (-len(item[1]), item[0]))
    index: _Index = {}
    for rank, (_, p) in enumerate(ranked):
        if not p:
            continue
        index.setdefault(p[0], []).append((rank, p))
        if len(p) == 1:
            index.setdefault(p[0] + "s", []).append((rank, p))
    return index


def find(
    tokens: list[str], phrases: Iterable[Phrase], taken: set[int] | None = None
) -> list[tuple[int, Phrase]]:
    """Where each phrase occurs in `tokens` (longest phrases first, a word counted once): (start, phrase).
    A plural "-s" on the last word of the text matches the phrase's singular ("lights", "lamps")."""
    used = set() if taken is None else taken
    index = _index(phrases if isinstance(phrases, tuple) else tuple(phrases))
    found: list[tuple[int, bool, int, int, Phrase]] = []
    for i, token in enumerate(tokens):
        for rank, p in index.get(token, ()):
            got = tokens[i : i + len(p)]
            exact = tuple(got) == p
            if len(got) == len(p) and (exact or (tuple(got[:-1]) == p[:-1] and got[-1] == p[-1] + "s")):
                found.append((-len(p), not exact, rank, i, p))  # "blues" the genre before "blue" + s
    out: list[tuple[int, Phrase]] = []
    for *_, i, p in sorted(found):
        span = range(i, i + len(p))
        if not any(j in used for j in span):
            out.append((i, p))
            used.update(span)
    return sorted(out)


def has(tokens: list[str], phrases: Iterable[Phrase]) -> bool:
    return bool(find(tokens, phrases))


def opens(tokens: list[str], phrases: Iterable[Phrase]) -> bool:
    return any(tuple(tokens[: len(p)]) == p for p in phrases)
