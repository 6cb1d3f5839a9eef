"""Reading preferences and routine out of plain words: no model, just the home's vocabulary."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from voiced.devices.vocabulary import HomeVocabulary

_CLAUSE = re.compile(r"\s*(?:[,.;!?]|\bbut\b|\band\b|\bthough\b)\s*")
_NEGATIVE = re.compile(r"\b(?:don ?t|do not|not|never|hate|dislike|no|without|can ?t stand)\b")
_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "midnight": 12, "noon": 12,
}  # fmt: skip
_TIME = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s*(am|pm|a m|p m)?\b|\b(" + "|".join(_NUMBER_WORDS) + r")\b")
PARTS_OF_DAY = ("morning", "afternoon", "evening", "night")


@dataclass
class Heard:
    """What one utterance says about the user."""

    liked_scents: list[str] = field(default_factory=list)
    disliked_scents: list[str] = field(default_factory=list)
    liked_genres: list[str] = field(default_factory=list)
    disliked_genres: list[str] = field(default_factory=list)
    rooms: list[str] = field(default_factory=list)
    wake_time: str | None = None
    bed_time: str | None = None
    light: dict[str, dict[str, object]] = field(default_factory=dict)  # part of day -> habit fields


def _normal(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9:' ]+", " ", text.lower().replace("'", "")).split())


def _time_in(clause: str, *, evening: bool) -> str | None:
    """ "seven", "7:30", "11 pm"; `evening`: a bare 6..11 means pm (going to bed at eleven)."""
    match = _TIME.search(clause)
    if match is None:
        return None
    if match.group(4):
        hour, minute = _NUMBER_WORDS[match.group(4)], 0
    else:
        hour, minute = int(match.group(1)), int(match.group(2) or 0)
    after = re.match(r"\s*(am|pm|a m|p m)\b", clause[match.end() :])
    half = (match.group(3) or (after.group(1) if after else "")).replace(" ", "")
    if hour < 12 and (half == "pm" or (evening and not half and hour >= 6)):
        hour += 12
    if hour > 23 or minute > 59:
        return None
    return f"{hour:02d}:{minute:02d}"


def _habit(clause: str) -> dict[str, object]:
    habit: dict[str, object] = {}
    if re.search(r"\b(?:warm|warmer|cozy|cosy|cozier|yellow)\b", clause):
        habit["warmth"] = "warm"
    elif re.search(r"\b(?:cool|cooler|cold|colder|white|daylight)\b", clause):
        habit["warmth"] = "cool"
    if re.search(r"\b(?:dim|dimmer|low|soft|dark|darker)\b", clause):
        habit["brightness_pct"] = 30
    elif re.search(r"\b(?:bright|brighter)\b", clause):
        habit["brightness_pct"] = 90
    return habit


def read(text: str, vocabulary: HomeVocabulary) -> Heard:
    heard = Heard()
    habits: list[tuple[list[str], dict[str, object]]] = []  # parts of day (maybe none yet), habit
    for raw in _CLAUSE.split(text.lower()):
        clause = _normal(raw)
        if not clause:
            continue
        negative = bool(_NEGATIVE.search(clause))
        for scent in vocabulary.scents:
            if re.search(rf"\b{re.escape(scent)}\b", clause):
                (heard.disliked_scents if negative else heard.liked_scents).append(scent)
        for genre in vocabulary.genres:
            if re.search(rf"\b{re.escape(genre)}\b", clause):
                (heard.disliked_genres if negative else heard.liked_genres).append(genre)
        for room in vocabulary.rooms:
            if re.search(rf"\b{re.escape(room)}\b", clause) and not negative:
                heard.rooms.append(room)
        if re.search(r"\b(?:get up|wake|wakes|waking|up at|rise)\b", clause):
            heard.wake_time = _time_in(clause, evening=False) or heard.wake_time
        elif re.search(r"\b(?:bed|sleep|asleep)\b", clause):
            heard.bed_time = _time_in(clause, evening=True) or heard.bed_time
        parts = [part for part in PARTS_OF_DAY if part in clause]
        habit = _habit(clause)
        if habit or parts:
            habits.append((parts, habit))
    # "warm and dim in the evening": a habit without a time of day takes the next one's.
    pending: dict[str, object] = {}
    for parts, habit in habits:
        if not parts:
            pending.update(habit)
            continue
        for part in parts:
            heard.light.setdefault(part, {}).update({**pending, **habit})
        pending = {}
    if pending:
        heard.light.setdefault("evening", {}).update(pending)
    heard.light = {part: fields for part, fields in heard.light.items() if fields}
    return heard


def _sound(word: str) -> str:
    """A crude consonant skeleton: first letter, then consonants with look-alikes merged."""
    rest = word[1:].replace("ph", "f").translate(str.maketrans("zcq", "skk"))
    rest = re.sub(r"[aeiouyhw]", "", rest)
    return word[0].translate(str.maketrans("zcq", "skk")) + re.sub(r"(.)\1+", r"\1", rest)


def misheard(text: str, vocabulary: HomeVocabulary) -> tuple[str, str] | None:
    """A word that is probably one of the home's terms misheard ("jess" for "jazz"), and that term."""
    terms = [t for t in vocabulary.terms if " " not in t]
    for word in _normal(text).split():
        if len(word) < 3 or word in terms:
            continue
        # Whisper keeps the consonants more often than the vowels ("jess" for "jazz").
        for term in terms:
            if _sound(term) == _sound(word) or difflib.SequenceMatcher(None, word, term).ratio() >= 0.8:
                return word, term
    return None
