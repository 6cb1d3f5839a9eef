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
  the song, play the room." for "Clair de Lune" would search for "room"), is like the first,
  changes no number nor on/off, up/down, all, not ("Turn off the kitchen lie." is not "Turn on the
  kitchen light."), and is not a sentence of the prompt (on words it cannot make out, base
  recites one: "Turn on the light." for "turn on the oven"): it is taken;
- else the first stands, with its question.
The cost, ~0.3-0.5 s, falls only on requests that would otherwise fail or ask back.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from difflib import SequenceMatcher

import numpy as np

from voiced.ear.transcriber import Hearing, Transcriber
from voiced.language import english

_LOGGER = logging.getLogger(__name__)
Acts = Callable[[Hearing], bool]  # whether the local intents would act on it without asking back
_WORD = re.compile(r"[a-z0-9']+")
ANSWER_WORDS = 4  # "no, the bedroom one"


def _words(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


def likeness(first: str, second: str) -> float:
    """How alike two readings are, 0..1, by their letters (punctuation and case aside)."""
    return SequenceMatcher(None, _words(first), _words(second)).ratio()


# Words whose change turns one request into another, however alike the letters: "Turn off the
# kitchen lie." and "Turn on the kitchen light." are 0.86 alike.
_MEANINGFUL = frozenset(english().word_lists["meaningful"])


def changes_meaning(first: str, second: str) -> bool:
    """Whether the words that differ hold a word like on/off, up/down, all, not, or a number: one
    the first heard ("15" for "50"), or one the second adds where the first heard none ("4D" may
    become "40", but "set the light" may not become "set the light to 50")."""
    a, b = _words(first).split(), _words(second).split()
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b).get_opcodes():
        if tag == "equal":
            continue
        heard, read = a[i1:i2], b[j1:j2]
        if {*heard, *read} & _MEANINGFUL or any(w.isdigit() for w in heard):
            return True
        if any(w.isdigit() for w in read) and not any(ch.isdigit() for w in heard for ch in w):
            return True
    return False


@dataclass(frozen=True)
class Rules:
    min_likeness: float = 0.6  # asr.second_min_similarity
    recited: tuple[str, ...] = ()  # the prompt's sentences: never taken, nor agreed on
    is_word: Callable[[str], bool] = lambda _word: True  # a dictionary's word


def reconsidered(first: Hearing, second: Hearing, takes: Acts, rules: Rules = Rules()) -> Hearing:
    """What to take from two models' readings of one utterance, the first not acted on (pure).
    `takes`: whether the intents act on a reading without searching for a title."""
    if _words(second.text) in {_words(r) for r in rules.recited}:
        return first
    if _words(first.text) == _words(second.text):
        # Two models agree on every word: the first's other readings ("Abby Road", "the light
        # bench"), beams of the same model, are outweighed by the second's, and so is its doubt of
        # a word. But a word both doubted ("clear" in "clear the moon" for "Clair de Lune"), or
        # that is no word of the language and not in all the first's readings, stays doubtful:
        # both models hear "Norjones" (beside "Nor Jones") alike, and wrongly.
        readings = [set(_words(a).split()) for a in first.alternatives]
        unsure = [
            w
            for w in _words(first.text).split()
            if not rules.is_word(w) and any(w not in r for r in readings)
        ]
        both = [w for w in first.doubtful if w in second.doubtful]
        doubtful = tuple(dict.fromkeys([*both, *unsure]))
        return Hearing(first.text, max(first.confidence, second.confidence), doubtful, (second.text,))
    if (
        likeness(first.text, second.text) >= rules.min_likeness
        and not changes_meaning(first.text, second.text)
        and takes(second)
    ):
        return second
    return first


class SecondEar:
    def __init__(
        self,
        transcriber: Transcriber,
        acts: Acts,
        takes: Acts,
        rules: Rules = Rules(),
        answering: Callable[[], bool] = lambda: False,
    ) -> None:
        """`acts`: whether the intents would act on the first reading; `takes`: on a second one,
        without searching for a title. `answering`: the daemon's intents wait for an answer to a
        question: a short reply ("yes", "the bedroom") means something only there, so it is not
        heard again; a longer one is a new request."""
        self._transcriber = transcriber
        self._acts = acts
        self._takes = takes
        self._rules = rules
        self._answering = answering

    def reconsider(self, samples: np.ndarray, first: Hearing) -> Hearing:
        """`first`, or what the second model makes of `samples` (blocking: run it off the loop).
        Whatever fails in here leaves the first reading: the turn is never lost to the second ear."""
        try:
            if not first.text.strip() or self._acts(first):
                return first
            if self._answering() and len(_words(first.text).split()) <= ANSWER_WORDS:
                return first  # "the bedroom", "no, the bedroom one": an answer, in its context
            second = self._transcriber.transcribe_scored(samples)
            taken = reconsidered(first, second, self._takes, self._rules)
        except Exception:
            _LOGGER.exception("the second ear failed: keeping %r", first.text)
            return first
        verdict = "taken" if taken is second else "agreed" if taken is not first else "the first stands"
        _LOGGER.info("second ear: %r, first %r: %s", second.text, first.text, verdict)
        return taken
