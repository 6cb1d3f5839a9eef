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
from voiced.language import Language, Phrase, find, opens, phrase, words
from voiced.mouth.understanding.hearing import common_words
from voiced.mouth.understanding.reported import (
    is_conditional,
    is_for_later,
    is_negated,
    is_reported,
    without_later,
)

# A clause ends at sentence punctuation, a comma, a semicolon or a dash; a comma inside a number
# ("4,000") or a full stop inside an abbreviation ("p.m.") does not end one.
_CLAUSE_END = re.compile(r"(?<=[.!?;])\s+|,(?!\d)\s*|\s+[\u2014\u2013-]+\s+|[\u2014\u2013]")


@dataclass(frozen=True)
class Remarks:
    meaningful: tuple[Phrase, ...]
    plays: tuple[Phrase, ...]  # after a request to play, the words may be what to play
    places: tuple[Phrase, ...]  # devices, their kinds and rooms: a statement naming one is kept
    feelings: tuple[Phrase, ...]  # "I'm freezing": how the room feels asks for a change
    content: tuple[Phrase, ...]  # what a request can be about: places, values, moods
    known: frozenset[str]  # every word the language or the home gives meaning to
    language: Language

    @classmethod
    def of(cls, vocabulary: HomeVocabulary, language: Language, moods: Iterable[Phrase] = ()) -> Remarks:
        lang = language
        # the home's own phrases, each read once: places and values are also meaningful and content
        rooms_and_aliases = {phrase(v) for v in (*vocabulary.rooms, *vocabulary.aliases)}
        devices = {phrase(d.replace("_", " ")) for d in vocabulary.devices}
        devices.update(phrase(said) for said, _ in vocabulary.named)
        places = {*lang.device_nouns, *lang.room_words, *(p for g in lang.kinds.values() for p in g)}
        places |= rooms_and_aliases | devices
        values = (vocabulary.colours, vocabulary.scents, vocabulary.genres, vocabulary.titles)
        about = set(moods) | rooms_and_aliases | {phrase(v) for group in values for v in group}
        feelings = {p for g in (lang.too_much, lang.too_little) for ps in g.values() for p in ps}
        feelings.update(p for by_way in lang.felt.values() for inner in by_way.values() for p in inner)
        plays = {phrase(w) for w in lang.asks_to_play}
        found = places | about | feelings | plays
        for group in (lang.absent, lang.power, lang.whites, lang.music_actions):
            found.update(p for phrases in group.values() for p in phrases)
        for phrases in (
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
        ):
            found.update(phrases)
        found.update((*lang.amounts, *lang.minutes, *lang.numbers))
        found.update(p for p in lang.pointers if len(p) > 1)  # "that one"; "it" alone is everywhere
        found.update(phrase(w) for key in ("request_verbs", "conditions") for w in lang.guards[key])
        plain = lang.fillers
        return cls(
            meaningful=tuple(p for p in found if p and not (len(p) == 1 and p[0] in plain)),
            plays=tuple(plays),
            places=tuple(p for p in places if p),
            feelings=tuple(feelings),
            content=tuple(p for p in places | about if p),
            known=frozenset(w for p in found for w in p) | lang.known | lang.our_names,
            language=language,
        )

    def addressed(self, text: str) -> str | None:
        """Who a request is said to when it opens with someone's name or title and a comma ("Jake,
        kill the lights!", "Lady Mary, ..."): someone else, not us. None when it opens otherwise."""
        clauses = [c for c in _CLAUSE_END.split(text, maxsplit=1) if c.strip(" .!?;,")]
        rest = words(clauses[-1]) if len(clauses) == 2 else []
        said_to = set(self.language.word_sets["said_to_them"]) & set(rest)  # the rest speaks to them
        if said_to and (someone := self._a_name(clauses[0])) is not None:
            return someone  # "Jonah! Turn your music down": a name, written as one, then "you"
        if len(clauses) < 2 or not re.match(r"\s*[\w' ]+,", text):
            return None
        name = words(clauses[0])
        if len(name) == 1 and name[0] in self.language.fillers:
            return None  # "Lord, that's loud": an exclamation, no one spoken to
        if not 1 <= len(name) <= self.language.name_words or not self.language.others.intersection(name):
            return None
        return None if self.known.intersection(name) - self.language.others else clauses[0].strip()

    def _a_name(self, clause: str) -> str | None:
        """The one word of `clause` (fillers aside) when it is written with a capital and is no word of
        ours nor a word of the dictionary in lower case: someone's name ("Priya", "Hey Jonah")."""
        said = [w for w in clause.strip(" ,!.?").split() if w.lower() not in self.language.fillers]
        if len(said) != 1 or not said[0][:1].isupper() or not said[0].isalpha():
            return None
        word, common = said[0].lower(), common_words()
        if not common:
            return None  # no dictionary to tell a name from a word: no guess
        return None if word in self.known or word in common else said[0]

    def is_statement(self, clause: str) -> bool:
        """Someone said to do or be something ("she hung up", "the peppermint is giving me a headache"):
        talk about the world, unless it names a device or room, says how the room feels, wishes, or
        is reported or negated speech."""
        lang = self.language
        tokens = words(clause)
        while tokens and tokens[0] in lang.fillers:
            tokens = tokens[1:]
        opening = [p for p in lang.subjects if tuple(tokens[: len(p)]) == p]
        if opening:
            rest = tokens[len(opening[0]) :]
            if not rest and not any(w in lang.finite_verbs for w in opening[0]):
                return False  # "she", alone
        elif tokens and tokens[0] in lang.determiners and lang.finite_verbs.intersection(tokens[1:4]):
            rest = tokens[1:]  # "the kids are...", "my wife's..." (a verb within the first words)
        else:
            return False
        if find(rest[:5], lang.wishes) or find(tokens, self.places) or find(tokens, self.feelings):
            return False
        return not (is_reported(clause, lang) or is_negated(clause, lang))

    def is_remark(self, clause: str) -> bool:
        tokens = words(clause)
        if len(tokens) < self.language.talk_least_words or any(t.isdigit() for t in tokens):
            return False
        if len(tokens) <= self.language.speaker_words and tokens[0] in self.language.determiners:
            return False  # "my brother, turn off the lights": who is speaking, or whose words
        lang = self.language
        asks = opens(tokens, lang.question_openers) and not opens(tokens, lang.asking_openers)
        if find(tokens, self.meaningful) or asks:  # a question or an exclamation is no remark; "would you" is
            return False
        if is_for_later(clause, lang) and not lang.finite_verbs.intersection(tokens):
            return False  # "in an hour": when to act on the rest
        return not (is_reported(clause, lang) or is_negated(clause, lang) or is_conditional(clause, lang))

    def _corrects(self, clause: str) -> bool:
        """Whether a clause opens (after fillers) with a correcting phrase ("I meant", "I said")."""
        tokens = [t for t in words(clause) if t not in self.language.fillers]
        return any(tuple(tokens[: len(p)]) == p for p in self.language.correcting)

    def without(self, text: str) -> str:
        """`text` without its remarks; `text` itself when it is all remarks or has none. A statement
        that carries what a request is about ("we've got guests over for dinner") stays, without its
        times, when the request beside it names nothing or points back ("set the mood for it")."""
        clauses = [c for c in _CLAUSE_END.split(text) if c and c.strip(" .!?;,")]
        kept: list[tuple[int, str]] = []
        talk: list[tuple[int, str]] = []
        for i, clause in enumerate(clauses):
            if i == 0 and words(clause) and self.language.our_names.issuperset(words(clause)):
                continue  # "Alexa, ...": our name
            if find(words(clause), self.plays):  # "play the song, glad to loom": the title, misheard
                kept += list(enumerate(clauses))[i:]
                break
            if self._corrects(clause):  # "sorry, I meant sixty": what was said, said right
                kept.append((i, clause))
                continue
            if self.is_remark(clause):
                continue
            if self.is_statement(clause):
                if find(words(clause), self.content):
                    talk.append((i, clause))
                continue
            kept.append((i, clause))
        asked = [w for _, clause in kept for w in words(clause)]
        if all(w in self.language.fillers for w in asked):
            return text
        if talk and (not find(asked, self.content) or find(asked, self.language.pointers)):
            timeless = [(i, without_later(c, self.language)) for i, c in talk]
            if len(kept) + len(talk) == len(clauses) and all(
                t == " ".join(words(c)) for (_, t), (_, c) in zip(timeless, talk, strict=True)
            ):
                return text
            kept = sorted([*kept, *timeless])
        elif len(kept) == len(clauses):
            return text
        return ", ".join(c.strip() for _, c in kept)
