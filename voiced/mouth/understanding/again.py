"""The last request again, for other devices: "the bedroom as well" after "make this room blue" is
the last turn's frame aimed at the devices of the same kinds that the follow-up names. Pure."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from voiced.language import Phrase, phrase
from voiced.mouth.understanding.frame import Frame
from voiced.mouth.understanding.home_words import Words


def retargeted(last: Frame, follow: Frame, words: Words, rooms: Mapping[Phrase, str]) -> Frame | None:
    """`last` for the devices `follow` names (or those in the rooms it names) of the kinds `last`
    acted on (any kind, when `last` only switched on or off: "and the music too"); None when it names
    none of those kinds, or only devices `last` already reached."""
    values = dataclasses.replace(last, power=None, targets=(), kind=None, named=(), recalled=False)
    only_power = last.power is not None and values == Frame()
    kinds = set(words.kinds.values()) if only_power else {words.kinds[d] for d in last.targets}
    named = [d for d in follow.targets if words.kinds.get(d) in kinds]
    places = {rooms[phrase(n)] for n in follow.named if phrase(n) in rooms}
    there = [d for d, r in words.in_room.items() if r in places and words.kinds[d] in kinds]
    targets = tuple(dict.fromkeys([*named, *there]))
    if not targets or set(targets) <= set(last.targets):
        return None
    kind = last.kind if {words.kinds[d] for d in targets} == {last.kind} else "mixed"
    return dataclasses.replace(
        last, targets=targets, kind=kind, named=follow.named, follow_up=False, recalled=False
    )
