"""A second ear: another Whisper model, heard only when the first one's words would not be acted on.

tiny.en mishears robotic and hurried voices ("Sandalwood, fuser, intensity to 70%" for "set the
diffuser intensity to 70%") and doubts names it heard right ("Abbey Road"). The base model, ~1.7x
slower, hears many of those right, and its own mistakes are others. So when the local intents would
not act on the first reading (not understood, a question back, a title read back), the same audio
is heard again by the second model:
- both heard the same words: the first's other readings, beams of the same model ("Abby Road"
  beside "Abbey Road"), give way to the second model's, and so does its doubt of a word; a word
  both doubted, or one that is no word of the language and not in all the first's readings
  ("Norjones"), stays doubtful;
- the second reading is one the intents act on without searching for a title (free text: "Play
  the song, play the room." for "Clair de Lune" would search for "room"), is like the first, and is
  not a sentence of the prompt (on words it cannot make out, base recites one: "Turn on the
  light." for "turn on the oven"): it is taken;
- else the first stands, with its question.
The cost, ~0.3-0.5 s, falls only on requests that would otherwise fail or ask back.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Collection
from difflib import SequenceMatcher

import numpy as np

from voiced.ear.transcriber import Hearing, Transcriber

_LOGGER = logging.getLogger(__name__)
Acts = Callable[[Hearing], bool]  # whether the local intents would act on it without asking back
_WORD = re.compile(r"[a-z0-9']+")


def _words(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


def likeness(first: str, second: str) -> float:
    """How alike two readings are, 0..1, by their letters (punctuation and case aside)."""
    return SequenceMatcher(None, _words(first), _words(second)).ratio()


def reconsidered(
    first: Hearing,
    second: Hearing,
    takes: Acts,
    min_likeness: float,
    recited: Collection[str] = (),
    is_word: Callable[[str], bool] = lambda _word: True,
) -> Hearing:
    """What to take from two models' readings of one utterance, the first not acted on (pure).
    `takes`: whether the intents act on a reading without searching for a title. `recited`: the
    prompt's sentences: a second reading that is one of them is neither taken nor counted as
    agreeing. `is_word`: whether a word is a word of the language (a dictionary's)."""
    if _words(second.text) in {_words(r) for r in recited}:
        return first
    if _words(first.text) == _words(second.text):
        # Two models agree on every word: the first's other readings ("Abby Road", "the light
        # bench"), beams of the same model, are outweighed by the second's, and so is its doubt of
        # a word. But a word both doubted ("clear" in "clear the moon" for "Clair de Lune"), or
        # that is no word of the language and not in all the first's readings, stays doubtful:
        # both models hear "Norjones" (beside "Nor Jones") alike, and wrongly.
        readings = [set(_words(a).split()) for a in first.alternatives]
        unsure = [
            w for w in _words(first.text).split() if not is_word(w) and any(w not in r for r in readings)
        ]
        both = [w for w in first.doubtful if w in second.doubtful]
        doubtful = tuple(dict.fromkeys([*both, *unsure]))
        return Hearing(first.text, max(first.confidence, second.confidence), doubtful, (second.text,))
    if likeness(first.text, second.text) >= min_likeness and takes(second):
        return second
    return first


class SecondEar:
    def __init__(
        self,
        transcriber: Transcriber,
        acts: Acts,
        takes: Acts,
        min_likeness: float,
        recited: Collection[str] = (),
        is_word: Callable[[str], bool] = lambda _word: True,
    ) -> None:
        """`acts`: whether the intents would act on the first reading; `takes`: on a second one,
        without searching for a title."""
        self._transcriber = transcriber
        self._acts = acts
        self._takes = takes
        self._min_likeness = min_likeness
        self._recited = tuple(recited)
        self._is_word = is_word

    def reconsider(self, samples: np.ndarray, first: Hearing) -> Hearing:
        """`first`, or what the second model makes of `samples` (blocking: run it off the loop)."""
        if not first.text.strip() or self._acts(first):
            return first
        try:
            second = self._transcriber.transcribe_scored(samples)
        except (RuntimeError, ValueError, OSError) as exc:  # the first reading is not lost with it
            _LOGGER.warning("the second ear failed (%s): keeping %r", exc, first.text)
            return first
        taken = reconsidered(first, second, self._takes, self._min_likeness, self._recited, self._is_word)
        _LOGGER.info(
            "second ear: %r, first %r: %s",
            second.text,
            first.text,
            "agreed"
            if taken.text == first.text and taken is not first
            else "taken"
            if taken is second
            else "the first stands",
        )
        return taken
