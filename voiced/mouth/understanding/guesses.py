"""When a fuzzy guess may act: every word explained, its own key word said, its target named.

HA's fuzzy matcher scores word n-grams and skips words it does not know, so on its own it
turns "the kitchen light is on" into "turn off the kitchen light" and "turn on the garden
lights" into "this room's light green". A guess is taken only when each word of the utterance is
a slot it filled, a stop word, or a word its intent uses; when one of the intent's key words
was said (and none of the opposite); and, for lights, when a name or a room (or "here", "all")
was said rather than taken from context.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from voiced.language import Language, english, has
from voiced.mouth.understanding.home import Slot


@dataclass(frozen=True)
class Policy:
    keys: frozenset[str] | None  # one must be said (None: the slots say enough)
    words: frozenset[str] = frozenset()  # more words the intent may use
    target: bool = False  # a name or a room must be said
    forbid: frozenset[str] = frozenset()  # words of the opposite request
    needs: tuple[str, ...] = ()  # slots that must have been said
    also: frozenset[str] | None = None  # and one of these too


@functools.cache
def policies(lang: Language) -> dict[str, Policy]:
    """Each intent's policy, from the language file's `guess_policies`."""

    def said(raw: Mapping[str, Any], key: str) -> frozenset[str]:
        found = [str(w) for w in raw.get(key, ())]
        return frozenset(w for w in found if w != "$light") | (
            lang.guess_light if "$light" in found else frozenset()
        )

    made: dict[str, Policy] = {}
    for intent, raw in lang.guess_policies.items():
        keys = said(raw, "keys") if "keys" in raw else None
        made[intent] = Policy(
            keys,
            said(raw, "words") | (keys or frozenset()),
            target=bool(raw.get("target", False)),
            forbid=said(raw, "forbid"),
            needs=tuple(str(n) for n in raw.get("needs", ())),
            also=said(raw, "also") if "also" in raw else None,
        )
    return made


def acceptable(intent: str, slots: dict[str, Slot], text: str, stop_words: Collection[str]) -> bool:
    """Whether a fuzzy guess (`intent` as the fuzzy matcher names it) may be acted on."""
    lang = english()
    policy = policies(lang).get(intent)
    if policy is None:
        return False  # questions, time, scenes: never guessed
    words = text.split()
    said = {w for slot in slots.values() for w in slot.text.lower().split()}
    if any(
        w not in said
        and w not in stop_words
        and w not in lang.guess_generic
        and w not in lang.guess_scope
        and w not in policy.words
        for w in words
    ):
        return False
    if policy.keys is not None and not policy.keys & set(words):
        return False
    if policy.also is not None and not policy.also & set(words):
        return False
    if policy.forbid & set(words):
        return False
    if any(not (k in slots and slots[k].text) for k in policy.needs):
        return False
    if policy.target:
        if has(words, lang.guess_unnamed_room):
            return False  # a room not named and not this one
        named = any(slots[k].text for k in ("name", "area") if k in slots)
        return named or bool(lang.guess_scope & set(words))
    return True
