"""The home's words for the entity frame: a way to say each device, room, scent, genre, colour and
title, as phrases, read once per registry; and which devices the ones said reach."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from voiced.devices.colours import COLORS
from voiced.devices.registry import DeviceRegistry
from voiced.devices.vocabulary import HomeVocabulary
from voiced.language import Language, Phrase, find, phrase
from voiced.mouth.understanding import values


@dataclass(frozen=True)
class Words:
    """The home's words, read once per registry."""

    devices: dict[Phrase, str]  # a way to say a device -> its name
    rooms: dict[Phrase, str]
    kinds: dict[str, str]  # device name -> kind
    in_room: dict[str, str]  # device name -> its room
    scents: tuple[Phrase, ...]
    genres: tuple[Phrase, ...]
    colours: tuple[Phrase, ...]
    titles: dict[Phrase, str]
    title_phrases: tuple[Phrase, ...]
    own: frozenset[Phrase] = frozenset()  # one word of one device's name ("lamp" of the desk lamp)

    @classmethod
    def of(cls, registry: DeviceRegistry) -> Words:
        vocabulary = HomeVocabulary.of(registry)
        # a whole name first; one word of it only when no other device's name has that word
        own: dict[Phrase, str] = {(word,): name for word, name in vocabulary.own_words().items()}
        return cls(
            devices={**own, **{phrase(text): name for text, name in vocabulary.named}},
            rooms={phrase(room): room for room in vocabulary.rooms},
            kinds={d.name: d.kind for d in registry},
            in_room={d.name: (d.room or "").lower() for d in registry},
            scents=tuple(phrase(s) for s in vocabulary.scents),
            genres=tuple(phrase(g) for g in vocabulary.genres),
            colours=tuple(phrase(c) for c in COLORS),
            titles={phrase(t): t for t in vocabulary.titles},
            title_phrases=tuple(phrase(t) for t in vocabulary.titles),
            own=frozenset(own),
        )

    def room_names(self, synonyms: Mapping[str, tuple[Phrase, ...]]) -> dict[Phrase, str]:
        """The rooms, and what else people call the ones this home has ("the front room")."""
        have = set(self.rooms.values())
        return {**{p: room for room, ps in synonyms.items() if room in have for p in ps}, **self.rooms}

    def of_kind(self, kind: str) -> list[str]:
        return [n for n, k in self.kinds.items() if k == kind]

    def titles_in(self, tokens: list[str], taken: set[int], besides: Collection[Phrase] = ()) -> list[Phrase]:
        """The library's titles said, but those that are `besides`; a genre said as it is ("some
        blues") is no title heard with an "-s" ("Blue")."""
        exact = {
            i
            for s, p in find(tokens, self.genres, set(taken))
            if tuple(tokens[s : s + len(p)]) == p
            for i in range(s, s + len(p))
        }
        kept = [
            (s, p)
            for s, p in find(tokens, self.title_phrases, set(taken))
            if p not in besides
            and (tuple(tokens[s : s + len(p)]) == p or not exact.intersection(range(s, s + len(p))))
        ]
        taken.update(i for s, p in kept for i in range(s, s + len(p)))
        return [p for _, p in kept]

    def targets(
        self,
        kind: str,
        devices: list[str],
        rooms: list[str],
        every: bool,
        last: tuple[str, ...],
        room: str | None,
    ) -> list[str]:
        """The devices of `kind` that the devices and rooms named reach ("every" one said, or the
        only one); none named, the last acted on if all of `kind`, else this room's."""
        of_kind = self.of_kind(kind)
        chosen = [d for d in devices if d in of_kind]
        chosen += [d for d in of_kind if self.in_room[d] in rooms and d not in chosen]
        if chosen:
            return chosen
        if devices or (rooms and kind == "light"):
            return []  # a device or room named that has none of this kind
        if every or len(of_kind) == 1:
            return of_kind
        if last and all(self.kinds.get(d) == kind for d in last):
            return list(last)
        return [d for d in of_kind if room and self.in_room[d] == room.lower()]  # our own room's


def plain_rooms(text: str, synonyms: Mapping[str, tuple[Phrase, ...]], words: Words) -> str:
    """`text` with another name of a room this home has said as the room's own ("dim the front room
    light" is "dim the living room light"), so every pass and every later "as well" reads it; a name the
    home itself gives a device or room stays as it is."""
    ours = {*words.devices, *words.rooms}
    for p, room in words.room_names(synonyms).items():
        if p not in ours:
            text = re.sub(rf"\b{re.escape(' '.join(p))}\b", room, text, flags=re.IGNORECASE)
    return text


def asked_alone(text: str, words: Words, lang: Language) -> str | None:
    """A genre or a library title said alone, typed, with only courtesy around it ("lofi pls",
    "Bohemian Rhapsody, please"): the request to play it, said plainly; else None. A word alone read
    from audio, or beside another request, may be part of something else."""
    tokens = phrase(text)
    if not values.alone(list(tokens), [*words.genres, *words.title_phrases], set(), lang):
        return None
    return " ".join([lang.asks_to_play[0], *(t for t in tokens if t not in lang.fillers)])
