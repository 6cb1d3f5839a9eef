"""Remarks: the parts of an utterance said around a request that ask for nothing ("okay, I'm back,
resume the music"; "it's our anniversary tonight. Something romantic").

An utterance is cut into clauses at its punctuation. A clause is a remark when none of its words is
one the home or the language gives meaning to: no device, room, kind (present or absent), value,
number, direction, power word, mood, title, pointer phrase, correction, negation, condition,
question opener or request verb, and no guard of its own (reported speech); a time ("in an hour")
counts only in a clause with no verb of its own ("I have finals tomorrow" is talk). Such a clause is dropped
before the request is read, so a time word in it ("tonight") does not make the request one for
later, and it is not a part "not understood" that stops the rest. An utterance made only of remarks
is kept as it was; so are the clauses after a request to play, which may name what to play. Pure:
the words come from the language file and the home's vocabulary.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from voiced.devices.vocabulary import HomeVocabulary
from voiced.language import Language, Phrase, find, phrase, words
from voiced.mouth.understanding.reported import is_conditional, is_for_later, is_negated, is_reported

# A clause ends at sentence punctuation, a comma, a semicolon or a dash; a comma inside a number
# ("4,000") or a full stop inside an abbreviation ("p.m.") does not end one.
_CLAUSE_END = re.compile(r"(?<=[.!?;])\s+|,(?!\d)\s*|\s+[\u2014\u2013-]+\s+|[\u2014\u2013]")
_NOUN_PHRASE = 3  # words: "the manual", "my little brother"
_SHORTEST = 2  # words: a lone word is a filler, a value or a mood, never dropped as talk


@dataclass(frozen=True)
class Remarks:
    meaningful: tuple[Phrase, ...]
    openers: tuple[Phrase, ...]  # a question's first words: meaningful only where a clause starts
    plays: tuple[Phrase, ...]  # after a request to play, the words may be what to play
    language: Language

    @classmethod
    def of(cls, vocabulary: HomeVocabulary, language: Language, moods: Iterable[Phrase] = ()) -> Remarks:
        found: set[Phrase] = set(moods)
        lang = language

        def add(groups: Iterable[Iterable[Phrase]]) -> None:
            for group in groups:
                found.update(group)

        add(lang.kinds.values())
        add(lang.absent.values())
        add(lang.power.values())
        add(lang.whites.values())
        add(lang.music_actions.values())
        add(lang.too_much.values())
        add(lang.too_little.values())
        add(inner for by_way in lang.felt.values() for inner in by_way.values())
        add(
            (
                lang.device_nouns,
                lang.room_words,
                lang.every,
                lang.here,
                lang.up,
                lang.down,
                lang.percent,
                lang.also,
                lang.pair,
                lang.again,
                lang.many,
                lang.correcting,
                lang.negations,
                lang.play_words,
                lang.music_only,
                lang.past,
            )
        )
        found.update(lang.amounts)
        found.update(lang.minutes)
        found.update(lang.numbers)
        found.update(p for p in lang.pointers if len(p) > 1)  # "that one"; "it" alone is everywhere
        for key in ("request_verbs", "conditions"):
            found.update(phrase(w) for w in lang.guards[key])
        found.update(phrase(w) for w in lang.asks_to_play)
        for values in (
            vocabulary.colours,
            vocabulary.scents,
            vocabulary.genres,
            vocabulary.rooms,
            vocabulary.aliases,
            vocabulary.titles,
        ):
            found.update(phrase(v) for v in values)
        found.update(phrase(d.replace("_", " ")) for d in vocabulary.devices)
        found.update(phrase(said) for said, _ in vocabulary.named)
        plain = lang.fillers
        kept = tuple(p for p in found if p and not (len(p) == 1 and p[0] in plain))
        plays = tuple(phrase(w) for w in lang.asks_to_play)
        return cls(meaningful=kept, openers=lang.question_openers, plays=plays, language=language)

    def is_remark(self, clause: str) -> bool:
        tokens = words(clause)
        if len(tokens) < _SHORTEST or any(t.isdigit() for t in tokens):
            return False
        if len(tokens) <= _NOUN_PHRASE and tokens[0] in self.language.determiners:
            return False  # "my brother, turn off the lights": who is speaking, or whose words
        if find(tokens, self.meaningful) or any(tuple(tokens[: len(p)]) == p for p in self.openers):
            return False
        lang = self.language
        if is_for_later(clause, lang) and not lang.finite_verbs.intersection(tokens):
            return False  # "in an hour": when to act on the rest
        return not (is_reported(clause, lang) or is_negated(clause, lang) or is_conditional(clause, lang))

    def without(self, text: str) -> str:
        """`text` without its remarks; `text` itself when it is all remarks or has none."""
        clauses = [c for c in _CLAUSE_END.split(text) if c and c.strip(" .!?;,")]
        kept: list[str] = []
        for i, clause in enumerate(clauses):
            if find(words(clause), self.plays):  # "play the song, glad to loom": the title, misheard
                kept += clauses[i:]
                break
            if not self.is_remark(clause):
                kept.append(clause)
        if not kept or len(kept) == len(clauses):
            return text
        return ", ".join(c.strip() for c in kept)
