"""A second ear: another Whisper model, heard only when the first one's words would not be acted on.

tiny.en mishears robotic and hurried voices ("Sandalwood, fuser, intensity to 70%" for "set the
diffuser intensity to 70%") and doubts names it heard right ("Abbey Road"). The base model, ~1.7x
slower, hears many of those right, and its own mistakes are others. So when the local intents would
not act on the first reading (not understood, a question back, a title read back), the same audio
is heard again by the second model:
- both heard the same words: the words only the first doubted are settled, two ears agree on them
  (its other readings, beams of the same model, give way to the second model's); a word both
  doubted stays doubtful;
- the second reading is one the intents act on, is like the first, and is not a sentence of the
  prompt (on words it cannot make out, base recites one: "Turn on the light." for "turn every lamp
  red" and for "turn on the oven"): it is taken;
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
    first: Hearing, second: Hearing, acts: Acts, min_likeness: float, recited: Collection[str] = ()
) -> Hearing:
    """What to take from two models' readings of one utterance, the first not acted on (pure).
    `recited`: the prompt's sentences: a second reading that is one of them is neither taken nor
    counted as agreeing."""
    if _words(second.text) in {_words(r) for r in recited}:
        return first
    if _words(first.text) == _words(second.text):
        # Two models agree on every word: only a word both doubted stays doubtful ("clear the moon"
        # for "Clair de Lune": both unsure of "clear"), and the first's other readings ("Abby Road",
        # "the light bench") are outweighed by the second's.
        doubtful = tuple(w for w in first.doubtful if w in second.doubtful)
        return Hearing(first.text, max(first.confidence, second.confidence), doubtful, (second.text,))
    if likeness(first.text, second.text) >= min_likeness and acts(second):
        return second
    return first


class SecondEar:
    def __init__(
        self, transcriber: Transcriber, acts: Acts, min_likeness: float, recited: Collection[str] = ()
    ) -> None:
        self._transcriber = transcriber
        self._acts = acts
        self._min_likeness = min_likeness
        self._recited = tuple(recited)

    def reconsider(self, samples: np.ndarray, first: Hearing) -> Hearing:
        """`first`, or what the second model makes of `samples` (blocking: run it off the loop)."""
        if not first.text.strip() or self._acts(first):
            return first
        second = self._transcriber.transcribe_scored(samples)
        taken = reconsidered(first, second, self._acts, self._min_likeness, self._recited)
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
