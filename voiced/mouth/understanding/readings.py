"""Other readings of the same audio, for when the ear's best one is not understood.

Whisper's beam search keeps several readings; the best is what the ear heard. When that one means
nothing here ("Set the room to 50%"), the next may ("Set the bedroom to 50%"). A reading is only
tried when it cannot turn a mishearing into a wrong effect, so it must not, against the best one:

- drop a name, number, direction or setting the best one heard ("…light blue" → "…light",
  "fuser intensity" → "diffuser"), or more than one word;
- swap one name, number or direction for another ("bedroom" → "bathroom", "on" → "up");
- bring in a word that widens or points elsewhere ("every", "them", "that", "all", "not"), or
  lose an "every" or "all" but for a name ("every bump" → "the lamp", this room's).

Pure: words in, words out (measured on the spoken bench's audio: see README, "Understanding").
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable, Iterable, Sequence

from voiced.devices.vocabulary import HomeVocabulary
from voiced.language import english
from voiced.mouth.understanding.text import looped

_SETS = english().word_sets
DIRECTIONS = _SETS["directions"]
QUANTIFIERS = _SETS["quantifiers"]
POINTING = _SETS["pointing"]
# Words in the home's names that name nothing by themselves ("living room" is a room, "room" is not).
GENERIC = _SETS["name_generic"]
TEMPERATURES = _SETS["name_whites"]
# Words that say which setting of a device a value is for: "diffuser intensity" is not "diffuser".
SETTINGS = _SETS["settings"]
_WORD = re.compile(r"[a-z0-9%']+")


def words_of(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def name_words(vocabulary: HomeVocabulary) -> frozenset[str]:
    """Every word that, alone, names something in this home: a room, device, scent, colour, genre."""
    phrases = (*vocabulary.terms, *vocabulary.aliases, *vocabulary.colours)
    found = {w for phrase in phrases for w in words_of(phrase)} | TEMPERATURES
    return frozenset(found - GENERIC)


def safe_readings(
    heard: str, others: Iterable[str], names: frozenset[str], unknown: frozenset[str] = frozenset()
) -> list[str]:
    """The readings in `others` that may be tried in place of `heard`, in their order. `unknown`:
    words of `heard` nothing here knows; a reading may swap one, never drop it ("turn on the light
    wind" is not "turn on the light": the unknown word was what to turn on)."""
    best = words_of(heard)
    chosen: list[str] = []
    seen = {tuple(best)}
    for other in others:
        reading = words_of(other)
        if tuple(reading) in seen or not reading:
            continue  # the same words: a comma more is no new reading
        seen.add(tuple(reading))
        if _safe(best, reading, names, unknown):
            chosen.append(other)
    return chosen


def _safe(
    best: Sequence[str], reading: Sequence[str], names: frozenset[str], unknown: frozenset[str]
) -> bool:
    for op, a1, a2, b1, b2 in difflib.SequenceMatcher(a=best, b=reading, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        removed, added = best[a1:a2], reading[b1:b2]
        if any(w in english().widening for w in added):
            return False
        if _after_quantifier(best, a1) and added:
            return False  # "every bump" → "every lamp": a guessed noun that "every" would reach all of
        if POINTING & set(removed) and not any(_is_name(names, w) for w in added):
            return False  # "that room lamp" → "the room lamp": this room's is a guess, "bedroom" is not
        if QUANTIFIERS & set(removed) and not any(_is_name(names, w) for w in added):
            return False  # "every bump" → "the lamp": this room's lamp is a guess, a name is not
        if op == "delete" and (len(removed) > 1 or unknown & set(removed)):
            return False  # "play the song, glad to loom" → "play the song": what to play was dropped
        for kind in (functools.partial(_is_name, names), _is_direction, _is_setting):
            lost = {_singular(w) for w in removed if kind(w)}
            gained = {_singular(w) for w in added if kind(w)}
            if lost and not gained and (op == "delete" or kind is _is_setting):
                # a name dropped, or a setting even in passing ("fuser intensity" → "diffuser"): the
                # reading says less than was heard ("Sandalwood" → "Set the" is a mishearing mended)
                return False
            if lost and gained and lost != gained:
                return False  # one name swapped for another: a guess between two things
    return True


def _after_quantifier(words: Sequence[str], at: int) -> bool:
    before = [w for w in words[max(0, at - 2) : at] if w != english().article]
    return bool(before) and before[-1] in QUANTIFIERS


# A kind of thing adds nothing to a name: "lavender" or "lavender aroma" is no question.
KINDS = _SETS["reading_kinds"]
# "light" → "light blue": a word or two. A reading that adds a whole sentence ("blues" → "blues can
# you play some blues") is the decoder looping, not a more specific request.
MAX_QUALIFIER_WORDS = 2
_FUNCTION_WORDS = _SETS["reading_small"]


def _is_name(names: frozenset[str], word: str) -> bool:
    # any "...room" is a room to Whisper's ear, ours or not ("bathroom" for "bedroom")
    return (
        word in names
        or _singular(word) in names
        or (word.endswith(english().room_suffix) and word != english().room_suffix)
        or any(c.isdigit() for c in word)
    )


def _is_direction(word: str) -> bool:
    return word in DIRECTIONS


def _is_setting(word: str) -> bool:
    return word in SETTINGS


def _singular(word: str) -> str:
    return word[:-1] if word.endswith("s") and len(word) > 3 else word


def unsure_part(heard: str, others: Iterable[str], names: frozenset[str]) -> tuple[str, str] | None:
    """Where another reading is more specific than the best one, which would act: it says a name
    where the best says "every" ("every lamp" or "bedroom lamp"), or it has a name the best lacks
    ("light" or "light blue"). The two phrases, to ask which was meant; None if there is no such."""
    best = words_of(heard)
    for other in others:
        reading = words_of(other)
        matcher = difflib.SequenceMatcher(a=best, b=reading, autojunk=False)
        for op, a1, a2, b1, b2 in matcher.get_opcodes():
            removed, added = best[a1:a2], reading[b1:b2]
            if not any(_is_name(names, w) for w in added):
                continue
            if op == "replace" and QUANTIFIERS & set(removed):
                after = best[a2 : a2 + 1] if a2 < len(best) and best[a2].isalpha() else []
                return " ".join([*removed, *after]), " ".join([*added, *after])
            # "light" or "light blue": the addition qualifies a word ("the" or "the scent" asks nothing)
            qualifies = len(added) <= MAX_QUALIFIER_WORDS and not looped(other) and not set(added) <= KINDS
            if op == "insert" and a1 > 0 and qualifies and best[a1 - 1] not in _FUNCTION_WORDS:
                return best[a1 - 1], " ".join([best[a1 - 1], *added])
    return None


# A device named by its kind: the word other readings may show was heard short ("light" / "lightben").
NOUNS = _SETS["reading_nouns"]
DOUBTING_READINGS = 2  # of the next few: one may be noise, two agree that something was there


def doubted_noun(heard: str, others: Sequence[str], unknown: Callable[[str], bool]) -> str | None:
    """The kind word the request hangs on ("Turn on the light"), when at least two of the ear's next
    readings go on right after it with a word nothing here knows ("light bench", "lightben"): the
    audio held more than the best reading says, and what was said may be another thing altogether
    (the spoken bench: "turn on the oven" heard "Turn on the light"). A comma between ("lavender,
    sound") is a pause with noise after it, not a longer name, unless the kind word ends the best
    reading. None if there is no such doubt."""
    best = heard.split()
    words = [_bare(token) for token in best]
    at = next((i for i in range(len(words) - 1, -1, -1) if words[i] in NOUNS), None)
    if at is None:
        return None
    # the request ends on the kind word ("Turn on the light."): what other readings heard after it,
    # even after a pause ("Turn on the light, wind."), is what the best one left out
    last = at == len(words) - 1
    doubting = 0
    for other in others[:4]:
        tokens = other.split()
        if len(tokens) <= at or [_bare(t) for t in tokens[:at]] != words[:at]:
            continue
        noun = _bare(tokens[at])
        glued = noun != words[at] and noun.startswith(words[at]) and unknown(noun)
        goes_on = (
            noun == words[at]
            and (last or not re.search(r"[,.;:!?]$", tokens[at]))
            and len(tokens) > at + 1
            and tokens[at + 1 : at + 2] != best[at + 1 : at + 2]
            and unknown(_bare(tokens[at + 1]))
        )
        doubting += glued or goes_on
    return words[at] if doubting >= DOUBTING_READINGS else None


def _bare(token: str) -> str:
    return "".join(words_of(token))
