"""Titles the home's music library has, weighed against what the ear heard on the sound itself.

A title is free text: tiny.en hears "Clair de Lune" as "clear the loon", "Miles Davis" in a robotic
voice as "my old Davis", and a search for those finds nothing. When a music device declares what it
has (`library:` in its device file), a request that searches for a title not in it is heard once
more against the titles nearest in spelling or sound: each is put in place of the words heard, and
Whisper says how well each sentence fits the audio (voiced/ear/whisper_score.py). A title is taken
only when it fits nearly as well as the words heard and clearly better than any other title; else
the words heard stand (and the intents read a doubted title back, as before). A title heard word for
word that the library has needs no read-back.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

import jellyfish
import numpy as np

from voiced.ear.transcriber import Hearing

_LOGGER = logging.getLogger(__name__)
_WORD = re.compile(r"[A-Za-z0-9']+")
Score = Callable[[np.ndarray, Sequence[str]], list[float]]  # log-probability of each sentence
Searched = Callable[[str], "str | None"]  # the title the intents would search for in a text
ALTERNATIVES_WEIGHED = 3
MIN_LENGTH_RATIO = 0.5


@dataclass(frozen=True)
class TitleRules:
    # Measured with Whisper base on the spoken bench's title requests (9 voices and noises, the
    # example library of 60): the title asked for fit within 5 of the words heard and 4.9-18 ahead
    # of the next title; with it taken out of the library, the best of the others was at most 2.8
    # ahead of the next, however near the words heard ("Claire to learn": 1.6 below them).
    below_heard: float = 6.0  # how much worse than the words heard a title may fit (log-probability)
    ahead: float = 4.0  # how much better it must fit than the next title
    candidates: int = 8  # titles weighed on the sound, the nearest in spelling or sound


@functools.lru_cache(maxsize=20000)
def bare(title: str) -> str:
    """A title as the intents' search has it: lower case, words only, no leading "the"."""
    words = [w.lower() for w in _WORD.findall(title)]
    return " ".join(words[1:] if words[:1] == ["the"] and len(words) > 1 else words)


# A small word just before the words searched for, which the intents drop from a search and which
# may be the title's first sound misheard: "my old Davis" for "Miles Davis".
_SWALLOWED = frozenset({"my", "our", "a", "an", "the"})


def with_title(text: str, query: str, title: str, *, swallow: bool = False) -> str | None:
    """`text` with the words of `query` (as the intents read them) replaced by `title`; None when
    they are not there word for word. `swallow`: the small word just before them too (None if there
    is none)."""
    words = list(_WORD.finditer(text))
    wanted = query.lower().split()
    for i in range(len(words) - len(wanted) + 1):
        if [w.group().lower() for w in words[i : i + len(wanted)]] == wanted:
            if swallow:
                small = words[i - 1].group().lower() if i >= 2 else ""
                # not a title's own first word: "my old name" is not "My Old Man" for its "my"
                if small not in _SWALLOWED or title.lower().split()[:1] == [small]:
                    return None
                i -= 1
                wanted = ["", *wanted]
            before = text[: words[i].start()]
            if title.lower().startswith("the ") and before.rstrip().lower().endswith("the"):
                title = title[4:]  # "by the Beatles", not "by the The Beatles"
            return before + title + text[words[i + len(wanted) - 1].end() :]
    return None


@functools.lru_cache(maxsize=20000)
def _sounds(text: str) -> str:
    return " ".join(jellyfish.metaphone(w) for w in text.split() if w not in ("the", "a"))


def nearest(queries: Sequence[str], titles: Sequence[str], count: int) -> list[str]:
    """The `count` titles nearest to any of `queries` (the words searched for in the ear's readings)
    by their letters or their sound (metaphone)."""
    heard = [(bare(q), _sounds(bare(q))) for q in queries]

    def near(title: str) -> float:
        name, sound = bare(title), _sounds(bare(title))
        return max(
            (
                max(SequenceMatcher(None, q, name).ratio(), SequenceMatcher(None, s, sound).ratio())
                for q, s in heard
                if _as_long(q, name)
            ),
            default=0.0,
        )

    return [t for t in sorted(titles, key=near, reverse=True)[:count] if near(t) > 0]


def _as_long(heard: str, title: str) -> bool:
    """Whether a title is about as long as the words heard: Whisper fits a short one ("Queen") to
    any sound nearly as well as the longer words it heard ("clear the loon"), for it pays for fewer
    tokens."""
    a, b = len(heard.replace(" ", "")), len(title.replace(" ", ""))
    return min(a, b) >= MIN_LENGTH_RATIO * max(a, b)


def chosen(heard: float, scores: dict[str, float], rules: TitleRules = TitleRules()) -> str | None:
    """The title that fits the sound nearly as well as the words heard and clearly better than any
    other (pure); None if none does."""
    if not scores:
        return None
    ranked = sorted(scores, key=lambda title: scores[title], reverse=True)
    best = ranked[0]
    if len(ranked) == 1:
        # no other title to be ahead of: it must fit as well as the words heard
        return best if scores[best] >= heard else None
    if scores[best] >= heard - rules.below_heard and scores[best] - scores[ranked[1]] >= rules.ahead:
        return best
    return None


class TitleMatcher:
    def __init__(
        self, score: Score, searched: Searched, titles: Callable[[], Sequence[str]], rules: TitleRules
    ) -> None:
        """`score`: a Whisper model's fit of sentences to audio; `searched`: the title the intents
        would search for in a text; `titles`: the library's, as the home has them now."""
        self._score = score
        self._searched = searched
        self._titles = titles
        self._rules = rules

    def matched(self, samples: np.ndarray, heard: Hearing) -> Hearing:
        """`heard`, or it with a title of the library for the words heard (blocking). Whatever fails
        in here leaves `heard`."""
        try:
            titles = self._titles()
            text, query = heard.text, None
            if titles and text.strip():
                query = self._searched(text)
                if query is None and "," in text:
                    # Whisper writes a pause as a comma: "Play the song, clear the loon." searches
                    # for nothing, "Play the song clear the loon." for a title
                    text = " ".join(text.replace(",", " ").split())
                    query = self._searched(text)
            if query is None:
                return heard
            if bare(query) in {bare(t) for t in titles}:
                return Hearing(text, heard.confidence)  # the library has it: nothing to doubt
            # the titles near what the ear's other readings searched for compete too: "Miles Davis"
            # (from "my old day this") beside "My Old Man" (from "my old name this")
            others = [self._searched(a) for a in heard.alternatives[:ALTERNATIVES_WEIGHED]]
            queries = [query, *(q for q in others if q is not None)]
            sentences = {
                (title, swallow): sentence
                for title in nearest(queries, titles, self._rules.candidates)
                for swallow in (False, True)
                if (sentence := with_title(text, query, title, swallow=swallow)) is not None
            }
            if not sentences:
                return heard
            audio = samples.astype(np.float32) / 32768.0
            fits = self._score(audio, [text, *sentences.values()])
            best = {key: fit for key, fit in zip(sentences, fits[1:], strict=True)}
            by_title: dict[str, float] = {}
            for (name, _swallow), fit in best.items():
                by_title[name] = max(fit, by_title.get(name, float("-inf")))
            title = chosen(fits[0], by_title, self._rules)
        except Exception:
            _LOGGER.exception("weighing the library's titles failed: keeping %r", heard.text)
            return heard
        _LOGGER.info(
            "heard %r: the library's %s", heard.text, repr(title) if title else "titles fit no better"
        )
        if title is None:
            return heard
        form = max((key for key in sentences if key[0] == title), key=best.__getitem__)
        return Hearing(sentences[form], heard.confidence)
