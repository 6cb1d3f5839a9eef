"""Hearing errors: words Whisper got wrong, resolved against the home's own vocabulary.

Only words the grammar does not know are candidates. Each is compared, with the words
around it, to the home's phrases (device names, rooms, scents, genres, colours) by spelling
and by sound (metaphone). One clear winner replaces it; two close ones are a question.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

import jellyfish

from voiced.devices.vocabulary import HomeVocabulary
from voiced.language import english
from voiced.language.replies import say

log = logging.getLogger(__name__)
DICTIONARIES = (Path("/usr/share/dict/american-english"), Path("/usr/share/dict/words"))  # Debian wamerican
ACCEPT = 0.7  # a phrase this similar (0..1) to what was heard may replace it
MARGIN = 0.08  # and must beat any other meaning by this much, else we ask
_WORD = re.compile(r"[a-z][a-z']*")
_KINDS = english().word_sets["light_nouns"]


@dataclass(frozen=True)
class Phrase:
    text: str
    meaning: str  # phrases with one meaning never compete ("lounge" and "living room light")
    spoken: str  # how to say it in a question: "the bedroom"


@dataclass(frozen=True)
class Heard:
    text: str  # the corrected text (unchanged when nothing was corrected)
    changes: tuple[tuple[str, str], ...] = ()  # (heard, meant)
    ambiguous: tuple[str, tuple[Phrase, ...]] | None = None  # what was heard, the close candidates

    @property
    def widens(self) -> bool:
        """Whether a correction made a kind of device after "every" or "all" ("every lump" → "every
        lamp"): a guess that would reach every light. Guesses may name one thing, never all."""
        kinds = "|".join(re.escape(meant) for _, meant in self.changes if meant in _KINDS)
        return (
            bool(kinds) and re.search(rf"\b(?:every|all|each)(?: the)? (?:{kinds})\b", self.text) is not None
        )


@lru_cache(maxsize=4096)  # the home's phrases and the words heard, sounded over and over
def _sound(text: str) -> str:
    key = jellyfish.metaphone(text)
    return "".join(ch for i, ch in enumerate(key) if i == 0 or ch != key[i - 1])  # "SSNT" -> "SNT"


@cache
def english_words() -> frozenset[str]:
    """English words (Debian's wamerican): a real word heard is only corrected if it sounds the same."""
    for path in DICTIONARIES:
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="ignore")
            return frozenset(w.lower() for w in text.split() if w.isalpha())
    log.warning("no English word list in %s; misheard names are corrected by spelling alone", DICTIONARIES[0])
    return frozenset()


@cache
def common_words() -> frozenset[str]:
    """The dictionary's words written in lower case: "lights", not "Jonah" (a name, written only so)."""
    for path in DICTIONARIES:
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="ignore")
            return frozenset(w for w in text.split() if w.isalpha() and w.islower())
    return frozenset()


def _similarity(heard: str, phrase: str) -> float:
    spelled = 1 - jellyfish.levenshtein_distance(heard, phrase) / max(len(heard), len(phrase))
    a, b = _sound(heard), _sound(phrase)
    sounded = 1 - jellyfish.levenshtein_distance(a, b) / max(len(a), len(b), 1)
    score = (spelled + sounded) / 2
    return min(1.0, score + 0.15) if a == b else score


class Vocabulary:
    def __init__(self, phrases: list[Phrase], known: set[str], english: frozenset[str] = frozenset()) -> None:
        self._phrases = phrases
        self._english = english
        self._known = known | {w for p in phrases for w in p.text.split()}

    def unknown(self, text: str) -> list[str]:
        """Words neither the grammar nor the home knows ("garage" in "turn on the garage light")."""
        return [w for w in text.split() if w.isalpha() and w not in self._known and w[:-1] not in self._known]

    def hear(self, text: str) -> Heard:
        tokens = text.split()
        changes: list[tuple[str, str]] = []
        i = 0
        while i < len(tokens):
            if tokens[i] in self._known or not tokens[i].isalpha():
                i += 1
                continue
            best = self._best(tokens, i)
            if best is None:
                i += 1
                continue
            start, end, ranked = best
            heard = " ".join(tokens[start:end])
            if len(ranked) > 1 and ranked[0][0] - ranked[1][0] < MARGIN:
                return Heard(text, tuple(changes), (heard, (ranked[0][1], ranked[1][1])))
            meant = ranked[0][1].text
            changes.append((heard, meant))
            tokens[start:end] = meant.split()
            i = start + len(meant.split())
        return Heard(" ".join(tokens), tuple(changes))

    def _may_be(self, word: str, phrase: str) -> bool:
        """A real word ("bathroom") may stand for a name only if it sounds like one ("sand": scent)."""
        if word not in self._english:
            return True
        return any(_sound(word) == _sound(part) for part in phrase.split())

    def _best(self, tokens: list[str], i: int) -> tuple[int, int, list[tuple[float, Phrase]]] | None:
        """The window around token i that best matches a phrase, with the best phrase per meaning."""
        found: tuple[int, int, list[tuple[float, Phrase]]] | None = None
        top = 0.0
        phrases = [(p, len(p.text.split())) for p in self._phrases if self._may_be(tokens[i], p.text)]
        unstressed = english().unstressed_openings
        for start in range(max(0, i - 1), i + 1):
            for end in range(i + 1, min(len(tokens), start + 3) + 1):
                heard = " ".join(tokens[start:end])
                by_meaning: dict[str, tuple[float, Phrase]] = {}
                for phrase, size in phrases:
                    if abs(size - (end - start)) > 1:
                        continue
                    score = _similarity(heard, phrase.text)
                    syllable = unstressed.get(tokens[start]) if end - start == 2 else None
                    if syllable is not None:  # an unstressed first syllable heard as a word of its own
                        score = max(score, _similarity(syllable + tokens[start + 1], phrase.text))
                    if score >= ACCEPT and score > by_meaning.get(phrase.meaning, (0.0, phrase))[0]:
                        by_meaning[phrase.meaning] = (score, phrase)
                ranked = sorted(by_meaning.values(), key=lambda item: item[0], reverse=True)
                if ranked and ranked[0][0] > top:
                    top, found = ranked[0][0], (start, end, ranked)
        return found


def home_phrases(vocabulary: HomeVocabulary, rooms: list[str]) -> list[Phrase]:
    phrases = [
        Phrase(text, name, say("the_device", device=name.replace("_", " ")))
        for text, name in vocabulary.named
    ]
    phrases += [Phrase(scent, f"scent:{scent}", scent) for scent in vocabulary.scents]
    phrases += [Phrase(genre, f"genre:{genre}", genre) for genre in vocabulary.genres]
    for room in rooms:
        phrases.append(Phrase(room, f"room:{room}", say("the_room", room=room)))
    for colour in vocabulary.colours:
        phrases.append(Phrase(colour, f"colour:{colour}", colour))
    named = {p.text for p in phrases}
    for word in english().word_lists["hearing_words"]:
        if word not in named:  # "diffuser" is already the diffuser: one meaning, never a question
            phrases.append(Phrase(word, f"word:{word}", word))
    return phrases


def slips_only(changes: tuple[tuple[str, str], ...]) -> bool:
    """Whether every word a correction replaced is no English word ("kitchne", "peppermnt"): a slip of
    the keys, where a real word ("film", "radio") was meant as said."""
    known, small = english_words(), english().function_words  # "the diffusor": "the" went, no slip
    # "lo fi" -> "lofi": the words replaced, run together, are what was typed
    gone = [[w for w in old.split() if w not in new.split() and w not in small] for old, new in changes]
    long_words = {w for ws in gone for w in ws if len(w) > 3}  # "film kitchne": "film" was meant
    return not known.intersection(long_words | {"".join(ws) for ws in gone})
