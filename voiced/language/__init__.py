"""A language as data: the words for kinds, values and actions (`en.yaml`), and the one tokenizer.

A phrase is a tuple of words. `Language.find(words, phrases)` gives where each phrase occurs, the
longest first, each word taken once.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from voiced.language.phrases import Phrase, find, has, opens, phrase, words
from voiced.yamlfile import load_yaml

__all__ = ["HERE", "KindName", "Language", "Phrase", "english", "find", "has", "opens", "phrase", "words"]

HERE = Path(__file__).resolve().parent


def _phrases(items: Iterable[Any]) -> tuple[Phrase, ...]:
    found = {phrase(str(item)) for item in items}
    return tuple(sorted((p for p in found if p), key=lambda p: (-len(p), p)))


def _pointed(raw: Mapping[str, Any]) -> list[str]:
    """What a correcting pointer points at: "one", "ones" or a device noun ("not that lamp")."""
    return ["one", "ones", *(str(n) for n in raw["device_nouns"]), *(f"{n}s" for n in raw["device_nouns"])]


def _classes(raw: Mapping[str, Iterable[Any]]) -> dict[str, tuple[Phrase, ...]]:
    return {str(name): _phrases(items) for name, items in raw.items()}


def _values(raw: Mapping[str, Any]) -> dict[Phrase, int]:
    return {phrase(str(k)): int(v) for k, v in raw.items()}


@dataclass(frozen=True)
class KindName:
    """How a kind of device is said: one of it, several, all of a home's, and the words that ask for it."""

    one: str
    all: str
    many: str  # several of it: "lights", "music players"
    asked_by: tuple[Phrase, ...] = ()

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> KindName:
        return cls(str(raw["one"]), str(raw["all"]), str(raw["many"]), _phrases(raw.get("asked_by", ())))


@dataclass(frozen=True, eq=False)
class Language:
    kinds: dict[str, tuple[Phrase, ...]]
    kind_names: dict[str, KindName]
    many_kinds: str  # devices of several kinds: "devices"
    device_nouns: tuple[Phrase, ...]
    determiners: frozenset[str]
    absent: dict[str, tuple[Phrase, ...]]
    self_timed_kinds: frozenset[str]  # kinds with a timer: "stop after 30 min" is how long they run
    off_after: tuple[str, str]  # the patterns of "(make it) stop after" (regex parts, in order)
    off_after_said: str  # what they are said as: "for"
    doing_before: frozenset[str]  # "I must study", "to hoover": a thing's word said as what one does
    room_words: tuple[Phrase, ...]
    room_synonyms: dict[str, tuple[Phrase, ...]]  # a room's name -> what else people call it
    own_rooms: dict[str, tuple[Phrase, ...]]  # ... when where the speaker is is not known
    talk_subjects: frozenset[str]  # open talk after a request, with nothing between
    level_at: tuple[Phrase, ...]  # "jazz at 25": a level said after a value
    lone_power: tuple[Phrase, ...]  # on or off said alone: for the device last acted on
    title_closers: frozenset[str]  # "instead" closing a title to play
    landmarks: dict[str, tuple[Phrase, ...]]  # a room's name -> what is in it ("my bed", "the fridge")
    every: tuple[Phrase, ...]
    past_subjects: tuple[Phrase, ...]
    past_between: tuple[Phrase, ...]
    past_verbs: frozenset[str]
    past_of_devices: frozenset[str]
    everything: tuple[Phrase, ...]  # every device of every kind
    beside: tuple[Phrase, ...]  # place or cause before a thing the home lacks
    more_of: tuple[Phrase, ...]  # "more dark": the way it feels
    level_from: frozenset[str]  # "from 72 to 48": where it is now
    level_of: frozenset[str]  # "an intensity of 60"
    level_on: frozenset[str]  # "80 on the living room light"
    naming_joiners: frozenset[str]  # "the light of the bedroom"
    less_of: tuple[Phrase, ...]  # "less bright": the other way
    excepting: tuple[Phrase, ...]
    here: tuple[Phrase, ...]
    power: dict[str, tuple[Phrase, ...]]
    up: tuple[Phrase, ...]
    down: tuple[Phrase, ...]
    too_much: dict[str, tuple[Phrase, ...]]
    too_little: dict[str, tuple[Phrase, ...]]
    degree: tuple[Phrase, ...]
    felt: dict[str, dict[str, tuple[Phrase, ...]]]
    whites: dict[str, tuple[Phrase, ...]]
    amounts: dict[Phrase, int]
    music_actions: dict[str, tuple[Phrase, ...]]
    minutes: dict[Phrase, int]
    numbers: dict[Phrase, int]
    percent: tuple[Phrase, ...]
    approximately: frozenset[str]
    question_openers: tuple[Phrase, ...]
    asking_openers: tuple[Phrase, ...]
    exclaiming: tuple[Phrase, ...]  # "what a day": a question's opening that asks nothing
    times_of_day: frozenset[Phrase]  # weaker evidence of a mood than a mood word
    past: tuple[Phrase, ...]
    also: tuple[Phrase, ...]
    follow_openers: tuple[Phrase, ...]
    follow_closers: frozenset[str]
    step_openers: frozenset[str]
    fillers: frozenset[str]
    value_verbs: frozenset[str]  # "set", "bring": known words that ask for the value said with them
    unfinished: frozenset[str]  # a part ending so is finished by the next: "up to, er, seventy"
    play_words: tuple[Phrase, ...]
    pointers: tuple[Phrase, ...]
    pair: tuple[Phrase, ...]  # "both": the last two devices acted on, when the last request had one
    again: tuple[Phrase, ...]  # "a bit more": the last change's direction again
    many: tuple[Phrase, ...]  # "the lights": a kind's every device, not the one last acted on
    correcting: tuple[Phrase, ...]  # "no", "i meant": a correction opens so
    correcting_after: tuple[Phrase, ...]  # "actually": closes the right thing said after the wrong
    correction_words: frozenset[str]  # small words said around the right thing ("the other one")
    guards: dict[str, tuple[str, ...]]  # reported speech, negation, later, conditions: patterns' parts
    misheard_openings: tuple[tuple[str, str], ...]  # (heard, said) at a segment's start
    separators: tuple[str, ...]
    joining: str  # "and": rooms sharing one plural device noun, joined again (text.py)
    goes_on: frozenset[str]  # a last word that promises more: the turn is not over
    courtesy: tuple[str, ...]
    openers: frozenset[str]
    answers: dict[str, frozenset[str]]  # "yes", "after_yes", "no"
    title_small_words: frozenset[str]
    title_dangling: frozenset[str]
    asks_to_play: tuple[str, ...]
    not_percent: frozenset[str]  # a number before one of these is no percentage ("7 o'clock")
    music_only: tuple[Phrase, ...]  # words that only the music takes ("skip this one")
    vague_music: frozenset[str]  # "ambient stuff": the genre, not a title to look up
    where_played: tuple[str, ...]  # "jazz on the speaker": what follows is where, not what
    negations: tuple[Phrase, ...]
    being: tuple[Phrase, ...]
    undo: tuple[Phrase, ...]  # "put it back how it was": the last change taken back
    undo_around: tuple[str, str]  # "put the lounge back": the words around one device taken back
    finite_verbs: frozenset[str]  # a clause with one has a verb of its own (remarks.py)
    subjects: tuple[Phrase, ...]  # "she hung up": a clause opening so is talk, not a request (remarks.py)
    wishes: tuple[Phrase, ...]  # "I want", "we need": a subject's wish is a request
    our_names: frozenset[str]  # what people call us: dropped where a request opens with one
    others: frozenset[str]  # names and titles of people: a request opening with one is for them
    function_words: frozenset[str]
    alone_words: int  # at most this many words: a value or action said alone is for the last device
    mood_time_weight: float  # a time of day as evidence of a mood, against 1 for a mood word
    mood_least: float  # the evidence a mood needs to be taken (moods.py)
    talk_least_words: int  # a clause shorter is never dropped as talk (remarks.py)
    speaker_words: int  # "my brother, ...": who speaks, at most this long (remarks.py)
    name_words: int  # "Lady Mary, ...": a name said to someone else, at most this long (remarks.py)
    confusions: tuple[tuple[Phrase, Phrase], ...]  # (heard, said): a request's opening words misheard
    never_guessed: frozenset[str]  # a request opening with one is never a fuzzy guess (matcher.py)
    guess_fillers: frozenset[str]  # a fuzzy guess may leave these out (matcher.py)
    guess_generic: frozenset[str]  # any fuzzy guess may hold these (guesses.py)
    guess_everywhere: frozenset[str]  # "all", "house": a guess that says one has its target (guesses.py)
    guess_here: frozenset[str]  # "here", "room": so has one that says this
    guess_light: frozenset[str]
    guess_policies: Mapping[str, Mapping[str, Any]]  # when a guess of each intent may act (guesses.py)
    guess_unnamed_room: tuple[Phrase, ...]
    widening: frozenset[str]  # another reading of the audio may not bring one in (readings.py)
    search_openers: frozenset[str]  # dropped from the start of a search (media.py)
    word_sets: dict[str, frozenset[str]]  # small sets read by name, each by the file said beside it
    word_lists: dict[str, tuple[str, ...]]  # the same, where their order counts
    scene_names: dict[str, tuple[str, ...]]  # our scenes as things to turn on (grammar.py)
    warm_up: tuple[str, ...]  # requests said once at start (learning.py)
    bare_room: str  # a pattern: "the room" as Whisper writes "bedroom" (asking.py)
    room_suffix: str
    here_alone: frozenset[str]
    here_in: str
    article: str
    plain_not: str  # "not": a correction's opening, and the negation a feeling may hold
    lasting: str  # "for": how long ("for twenty minutes"; "lavender for 15", said last, is minutes)
    thing_articles: tuple[str, ...]  # off the front of a thing we cannot do (answers.py)
    unstressed_openings: dict[str, str]  # heard: said ("the" + "fuser": "diffuser") (hearing.py)
    indirect: Mapping[str, Any]  # indirect phrasings said as the direct request (indirect.py)
    misheard_patterns: tuple[tuple[str, str, str], ...]  # (stage, pattern, said): Whisper's slips (text.py)
    white_bands: tuple[int, int]  # (warm_from, cool_to) in mireds (whites.py)

    @property
    def guess_scope(self) -> frozenset[str]:
        """A guess saying one of these has its target: everywhere, or here."""
        return self.guess_everywhere | self.guess_here

    @functools.cached_property
    def courtesy_phrases(self) -> tuple[Phrase, ...]:
        return tuple(phrase(c) for c in self.courtesy)

    @functools.cached_property
    def minutes_longest_first(self) -> tuple[tuple[Phrase, int], ...]:
        return tuple(sorted(self.minutes.items(), key=lambda item: -len(item[0])))

    @functools.cached_property
    def known(self) -> frozenset[str]:
        """Every word some class of this file holds as a word of its own, and every word of the phrases
        that ask for something ("carry" of "carry on"); a place's words only whole ("room" of "living
        room" is not known alone)."""
        out: set[str] = set(self.fillers) | set(self.function_words) | set(self.value_verbs)

        def single(group: object) -> None:
            if isinstance(group, tuple):
                out.update(p[0] for p in group if isinstance(p, tuple) and len(p) == 1)

        for group in (self.music_actions, self.power, self.whites, self.too_much, self.too_little):
            out.update(w for phrases in group.values() for p in phrases for w in p)  # "carry" of "carry on"
        for phrases in (self.up, self.down, self.again, self.degree, self.also, self.pointers, self.pair):
            out.update(w for p in phrases for w in p)
        out.update(w for p in (*self.amounts, *self.minutes) for w in p)
        for value in vars(self).values():
            if not isinstance(value, dict):
                single(value)
                continue
            out.update(p[0] for p in value if isinstance(p, tuple) and len(p) == 1)
            for inner in value.values():
                for group in inner.values() if isinstance(inner, dict) else [inner]:
                    single(group)
        return frozenset(out)

    @classmethod
    def load(cls, path: Path) -> Language:
        raw = load_yaml(path)
        _words_only(raw, str(path))
        return cls(
            kinds=_classes(raw["kinds"]),
            kind_names={str(k): KindName.of(v) for k, v in raw["kind_names"].items()},
            many_kinds=str(raw["many_kinds"]),
            device_nouns=_phrases(raw["device_nouns"]),
            determiners=frozenset(str(w) for w in raw["determiners"]),
            absent=_classes(raw["absent"]),
            doing_before=frozenset(str(w) for w in raw["doing_before"]),
            self_timed_kinds=frozenset(str(w) for w in raw["self_timed_kinds"]),
            off_after=(str(raw["off_after"][0]), str(raw["off_after"][1])),
            off_after_said=str(raw["off_after_said"]),
            room_words=_phrases(raw["room_words"]),
            room_synonyms=_classes(raw["room_synonyms"]),
            own_rooms=_classes(raw["own_rooms"]),
            talk_subjects=frozenset(str(w) for w in raw["talk_subjects"]),
            level_at=_phrases(raw["level_at"]),
            lone_power=_phrases(raw["lone_power"]),
            title_closers=frozenset(str(w) for w in raw["title_closers"]),
            landmarks=_classes(raw["landmarks"]),
            every=_phrases(raw["every"]),
            past_subjects=_phrases(raw["past_subjects"]),
            past_between=_phrases(raw["past_between"]),
            everything=_phrases(raw["everything"]),
            beside=_phrases(raw["beside"]),
            more_of=_phrases(raw["more_of"]),
            less_of=_phrases(raw["less_of"]),
            excepting=_phrases(raw["except"]),
            here=_phrases(raw["here"]),
            power=_classes(raw["power"]),
            up=_phrases(raw["up"]),
            down=_phrases(raw["down"]),
            too_much=_classes(raw["too_much"]),
            too_little=_classes(raw["too_little"]),
            degree=_phrases(raw["degree"]),
            felt={str(k): _classes(v) for k, v in raw["felt"].items()},
            whites=_classes(raw["whites"]),
            amounts=_values(raw["amounts"]),
            music_actions=_classes(raw["music_actions"]),
            minutes=_values(raw["minutes"]),
            numbers=_values(raw["numbers"]),
            percent=_phrases(raw["percent"]),
            approximately=frozenset(str(w) for w in raw["approximately"]),
            question_openers=_phrases(raw["question_openers"]),
            asking_openers=_phrases(raw["asking_openers"]),
            exclaiming=_phrases(raw["exclaiming"]),
            times_of_day=frozenset(_phrases(raw["times_of_day"])),
            past=_phrases(raw["past"]),
            also=_phrases(raw["also"]),
            follow_openers=_phrases(raw["follow_openers"]),
            follow_closers=frozenset(str(w) for w in raw["follow_closers"]),
            step_openers=frozenset(str(w) for w in raw["step_openers"]),
            fillers=frozenset(str(w) for w in raw["fillers"]),
            unfinished=frozenset(str(w) for w in raw["unfinished"]),
            value_verbs=frozenset(str(w) for w in raw["value_verbs"]),
            play_words=_phrases(raw["play_words"]),
            pointers=_phrases(raw["pointers"]),
            pair=_phrases(raw["pair"]),
            again=_phrases(raw["again"]),
            many=_phrases(raw["many"]),
            correcting=_phrases(
                [*raw["correcting"], *(f"{p} {n}" for p in raw["correcting_pointers"] for n in _pointed(raw))]
            ),
            correcting_after=_phrases(raw["correcting_after"]),
            correction_words=frozenset(str(w) for w in raw["correction_words"]),
            guards={str(k): tuple(str(w) for w in v) for k, v in raw["guards"].items()},
            misheard_openings=tuple((str(c["heard"]), str(c["said"])) for c in raw["misheard_openings"]),
            separators=tuple(str(w) for w in raw["separators"]),
            joining=str(raw["joining"]),
            goes_on=frozenset(str(w) for w in raw["goes_on"]),
            courtesy=tuple(str(w) for w in raw["courtesy"]),
            openers=frozenset(str(w) for w in raw["openers"]),
            answers={str(k): frozenset(str(w) for w in v) for k, v in raw["answers"].items()},
            title_small_words=frozenset(str(w) for w in raw["title_small_words"]),
            title_dangling=frozenset(str(w) for w in raw["title_dangling"]),
            asks_to_play=tuple(str(w) for w in raw["asks_to_play"]),
            not_percent=frozenset(str(w) for w in raw["not_percent"]),
            music_only=_phrases(raw["music_only"]),
            vague_music=frozenset(str(w) for w in raw["vague_music"]),
            where_played=tuple(str(w) for w in raw["where_played"]),
            negations=_phrases(raw["negations"]),
            being=_phrases(raw["being"]),
            undo=_phrases(raw["undo"]),
            undo_around=(str(raw["undo_around"][0]), str(raw["undo_around"][1])),
            finite_verbs=frozenset(str(w) for w in raw["finite_verbs"]),
            subjects=_phrases(raw["subjects"]),
            wishes=_phrases(raw["wishes"]),
            our_names=frozenset(str(w) for w in raw["our_names"]),
            others=frozenset(str(w) for w in raw["others"]),
            function_words=frozenset(str(w) for w in raw["function_words"]),
            alone_words=int(raw["alone_words"]),
            mood_time_weight=float(raw["mood_time_weight"]),
            mood_least=float(raw["mood_least"]),
            talk_least_words=int(raw["talk_least_words"]),
            speaker_words=int(raw["speaker_words"]),
            name_words=int(raw["name_words"]),
            confusions=tuple((phrase(str(c["heard"])), phrase(str(c["said"]))) for c in raw["confusions"]),
            **{
                k: frozenset(str(w) for w in raw[k])
                for k in (
                    "past_verbs",
                    "past_of_devices",
                    "level_from",
                    "level_of",
                    "level_on",
                    "naming_joiners",
                    "never_guessed",
                    "guess_fillers",
                    "guess_generic",
                    "guess_everywhere",
                    "guess_here",
                    "guess_light",
                    "widening",
                    "search_openers",
                )
            },
            guess_policies=MappingProxyType(dict(raw["guess_policies"])),
            guess_unnamed_room=_phrases(raw["guess_unnamed_room"]),
            word_sets={str(k): frozenset(str(w) for w in v) for k, v in raw["word_sets"].items()},
            word_lists={str(k): tuple(str(w) for w in v) for k, v in raw["word_lists"].items()},
            scene_names={str(k): tuple(str(w) for w in v) for k, v in raw["scene_names"].items()},
            warm_up=tuple(str(w) for w in raw["warm_up"]),
            bare_room=str(raw["bare_room"]),
            room_suffix=str(raw["room_suffix"]),
            here_alone=frozenset(str(w) for w in raw["here_alone"]),
            here_in=str(raw["here_in"]),
            article=str(raw["article"]),
            plain_not=str(raw["plain_not"]),
            lasting=str(raw["lasting"]),
            thing_articles=tuple(str(w) for w in raw["thing_articles"]),
            unstressed_openings={str(u["heard"]): str(u["said"]) for u in raw["unstressed_openings"]},
            indirect=MappingProxyType(dict(raw["indirect"])),
            misheard_patterns=tuple(
                (str(m["stage"]), str(m["pattern"]), str(m["said"])) for m in raw["misheard_patterns"]
            ),
            white_bands=(int(raw["white_bands"]["warm_from"]), int(raw["white_bands"]["cool_to"])),
        )


def _words_only(raw: Any, where: str) -> None:
    """YAML reads a bare yes, no, on or off as true or false: a word list holding one is refused by
    name, or "no" would silently become the word "false"."""
    if isinstance(raw, dict):
        for key, value in raw.items():
            _words_only(value, f"{where}: {key}")
    elif isinstance(raw, list):
        for item in raw:
            if isinstance(item, bool):
                raise ValueError(f"{where}: a word was read as {item!r} (quote yes, no, on and off)")
            _words_only(item, where)


@functools.cache
def english() -> Language:
    return Language.load(HERE / "en.yaml")
