"""A question the intents would ask back between rooms or names, answered by the sound when it can.

tiny.en writes "Set the room to 50%." for "set bedroom to 50%" in robotic voices, and the intents
rightly ask "did you mean the bedroom or the living room?". The audio can often tell: each option
is put in place of the words heard ("Set bedroom to 50%.", "Set the living room to 50%.") and
weighed by forced decoding (whisper_score.py), by both Whisper models where there are two (each
prefers its own reading; together they are steadier). An option is taken only when it fits nearly
as well as the words heard and clearly better than every other option; else the question stands.
On the spoken bench a "bedroom" said fit 5 or less below "the room" heard and 14 or more ahead of the
living room; a "the room" said, the bedroom fit 26 below it.

Never between every device of a kind and one room's ("every lamp or bedroom lamp?"): Whisper's fit
favours "every" even when a room was said.

A word nobody here knows where a room goes ("Set the memory light to 50%.", tiny.en's "bedroom") is
asked of the sound the same way, though the intents ask nothing (they understand nothing): each
room with a light is weighed in its place, and so are "every" and "all the", which may not be taken
but must be beaten: "Dim the memory light of 15%." was "dim every light" (every 29 ahead of the
bedroom), "Set the memory light of 50%." was the bedroom (16 ahead of every).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from voiced.ear.transcriber import Hearing
from voiced.language import english

_LOGGER = logging.getLogger(__name__)
Fit = Callable[[np.ndarray, Sequence[str]], list[float]]  # log-probability of each sentence
# A question asked back: the words it is about ("the room") and the options' words ("the bedroom", ...)
Question = tuple[str, tuple[str, ...]]
_BROAD = re.compile(r"\b(?:every|all|each|everything|everywhere|whole|house|home)\b", re.IGNORECASE)
# The intents' question the sound may answer: which "...room" was meant ("the room", "the room lamp");
# not their others ("light or light blue?", "bedroom or bathroom?"), which were never measured
_WHICH_ROOM = re.compile(r"the room(?: (?:lights?|lamps?))?", re.IGNORECASE)
# "the memory light": a word in the place of a room, before a light's noun
_NAME_SLOT = re.compile(r"\bthe (?P<word>[a-z']+) (?:lights?|lamps?)\b", re.IGNORECASE)
_NOT_A_NAME = frozenset(english().word_lists["not_a_name"])
BROAD_RIVALS = english().word_lists["broad_rivals"]  # weighed against a room put in such a place; never taken


@dataclass(frozen=True)
class ChoiceRules:
    # per model: the fits of both models are summed, and so are these
    below_heard: float = 5.0  # how much worse than the words heard a room asked about may fit
    ahead: float = 4.0  # how much better it must fit than every other option and rival
    # A room put in place of a word nobody here knows must fit at least as well as that word: a
    # real word said ("the bathroom light") fits itself better than any room does
    below_unknown: float = 0.0


def readings(text: str, question: Question) -> dict[str, list[str]]:
    """`text` with the words the question is about replaced by each option ("Set the room to 50%."
    -> "Set the bedroom to 50%." and "Set bedroom to 50%."), by the option's words; {} when those
    words are not in `text` as heard, or an option is every device of a kind."""
    about, options = question
    found = re.search(rf"\b{re.escape(about)}\b", text, re.IGNORECASE)
    if found is None or any(_BROAD.search(words) for words in (about, *options)):
        return {}
    before, after = text[: found.start()], text[found.end() :]
    said: dict[str, list[str]] = {}
    for option in options:
        forms = [option, option[4:]] if option.startswith("the ") else [option]  # "set bedroom to 50%"
        said[option] = [f"{before}{form}{after}" for form in forms]
    return said


def unknown_name(text: str, rooms: Sequence[str]) -> Question | None:
    """A question of its own for a word nobody here knows where a room goes ("the memory light"):
    which of the `rooms` it was; None when there is no such word (or fewer than two rooms)."""
    found = _NAME_SLOT.search(text)
    if found is None or len(rooms) < 2:
        return None
    word = found.group("word").lower()
    if word in _NOT_A_NAME or any(word in room.split() for room in rooms):
        return None
    return text[found.start() : found.end("word")], tuple(f"the {room}" for room in rooms)


def picked(
    heard: float, fits: dict[str, float], below: float, ahead: float, rivals: Sequence[float] = ()
) -> str | None:
    """The option that fits no more than `below` worse than the words heard and `ahead` better than
    every other, and than every rival (readings that may not be taken) (pure); None if none does."""
    if len(fits) < 2:
        return None
    first, second = sorted(fits, key=fits.__getitem__, reverse=True)[:2]
    runner_up = max([fits[second], *rivals])
    if fits[first] >= heard - below and fits[first] - runner_up >= ahead:
        return first
    return None


class ChoiceCheck:
    def __init__(
        self,
        fits: Sequence[Fit],
        asked: Callable[[Hearing], Question | None],
        acts: Callable[[Hearing], bool],
        light_rooms: Callable[[], Sequence[str]] = tuple,
        rules: ChoiceRules = ChoiceRules(),
    ) -> None:
        """`fits`: the Whisper models' fit of sentences to audio, summed; `asked`: the question the
        intents would ask of a reading; `acts`: whether they would act on one without asking;
        `light_rooms`: the home's rooms with a light, as it is now."""
        self._fits = fits
        self._asked = asked
        self._acts = acts
        self._light_rooms = light_rooms
        self._rules = rules

    def checked(self, samples: np.ndarray, heard: Hearing) -> Hearing:
        """`heard`, or the reading with the option the sound chose (blocking). Whatever fails in
        here leaves `heard`."""
        try:
            question, rivals = self._asked(heard), []
            below = self._rules.below_heard
            if question is not None and not _WHICH_ROOM.fullmatch(question[0]):
                return heard
            if question is None and not self._acts(heard):
                question, below = unknown_name(heard.text, self._light_rooms()), self._rules.below_unknown
                if question is not None:
                    # (the words asked about are as `heard.text` has them: replaced as they stand)
                    rivals = [heard.text.replace(question[0], broad, 1) for broad in BROAD_RIVALS]
            said = {} if question is None else readings(heard.text, question)
            if not said:
                return heard
            sentences = [heard.text, *(s for forms in said.values() for s in forms)]
            audio = samples.astype(np.float32) / 32768.0
            totals = np.sum([fit(audio, [*sentences, *rivals]) for fit in self._fits], axis=0)
            by_option: dict[str, float] = {}
            best: dict[str, str] = {}
            for sentence, total in zip(sentences[1:], totals[1 : len(sentences)], strict=True):
                said_of = next(o for o, forms in said.items() if sentence in forms)
                if total > by_option.get(said_of, float("-inf")):
                    by_option[said_of], best[said_of] = float(total), sentence
            rival_fits = [float(t) for t in totals[len(sentences) :]]
            models = len(self._fits)
            option = picked(
                float(totals[0]), by_option, below * models, self._rules.ahead * models, rival_fits
            )
            _LOGGER.info(
                "asked of %r (fit %.1f): %s, rivals %s -> %s",
                heard.text,
                totals[0],
                by_option,
                rival_fits,
                option,
            )
            if option is None:
                return heard
            chosen = Hearing(best[option], heard.confidence, heard.doubtful, heard.alternatives)
            return chosen if self._acts(chosen) else heard
        except Exception:
            _LOGGER.exception("weighing a question's options failed: keeping %r", heard.text)
            return heard
