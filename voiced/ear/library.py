"""Titles the home's music library has, weighed against what the ear heard on the sound itself.

A title is free text: tiny.en hears "Clair de Lune" as "clear the loon", "Miles Davis" in a robotic
voice as "my old Davis", and a search for those finds nothing. When a music device declares what it
has (`library:` in its device file), a request that searches for a title not in it is heard once
more against the titles nearest in spelling or sound: each is put in place of the words heard, and
Whisper says how well each sentence fits the audio (voiced/ear/whisper_score.py). A title is taken
only when it fits nearly as well as the words heard and clearly better than any other title, and is
near them in letters or sound; else the words heard stand (and the intents read a doubted title back,
as before). A title heard word for word that the library has needs no read-back.

A robotic voice may garble the request's opening too ("Play the sun, clear the moon.", "Play, music,
and the Beatles."), so that the intents find no title to search for: a reading they would not act on
that opens near one of the grammar's ("play the song", "play something by", ...) has each title near
the words after it weighed said with that opening ("Play the song Clair de Lune."). Not when those
words are a name Whisper wrote as one ("Play music like the Beatles."): that was heard, not made up.
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
from voiced.language import english

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
    # ... of which only one this near (0..1) may be taken: not "Taylor Swift" (0.48 to "working in
    # wraps of it"), but "Miles Davis" (0.57 to "my old name is"); the others still compete
    min_nearness: float = 0.55


@functools.lru_cache(maxsize=20000)
def bare(title: str) -> str:
    """A title as the intents' search has it: lower case, words only, no leading "the"."""
    words = [w.lower() for w in _WORD.findall(title)]
    return " ".join(words[1:] if words[:1] == ["the"] and len(words) > 1 else words)


# A small word just before the words searched for, which the intents drop from a search and which
# may be the title's first sound misheard: "my old Davis" for "Miles Davis".
_SWALLOWED = frozenset(english().word_lists["swallowed_before_title"])


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


# How a request for a title opens, as the grammar says it. A reading that opens near one ("Play the
# sun, clear the moon.", "Play, music, and the Beatles.") may hide the title in what follows, where the
# intents find none to search for; each title near those words is weighed said with that opening.
OPENINGS = english().word_lists["title_openings"]
MIN_OPENING_LIKENESS = 0.75


def opening(text: str) -> tuple[str, str] | None:
    """The opening of OPENINGS nearest to the start of `text` (the longest of those near enough),
    and the words after it; None when `text` does not start with "play" or nothing follows."""
    words = [w.lower() for w in _WORD.findall(text)]
    if words[:1] != ["play"]:
        return None
    best: tuple[int, float, str] | None = None
    for said in OPENINGS:
        count = len(said.split())
        if len(words) <= count:
            continue
        likeness = SequenceMatcher(None, " ".join(words[:count]), said).ratio()
        if likeness >= MIN_OPENING_LIKENESS and (best is None or (count, likeness) > best[:2]):
            best = (count, likeness, said)
    return None if best is None else (best[2], " ".join(words[best[0] :]))


def named(text: str, query: str) -> bool:
    """Whether Whisper wrote the words searched for as a name it knows, each capitalized ("the
    Beatles", "Bohemian Rhapsody"), not as words it made of a sound ("clear the moon")."""
    wanted = query.lower().split()
    words = _WORD.findall(text)
    for i in range(1, len(words) - len(wanted) + 1):
        found = words[i : i + len(wanted)]
        if [w.lower() for w in found] == wanted:
            return all(w[0].isupper() or w.lower() in _SWALLOWED for w in found)
    return False


def said_forms(
    text: str, query: str | None, opened: str | None, titles: Sequence[str]
) -> dict[tuple[str, str], str]:
    """Each title said in the words heard for `query` (with the small word before them, or not),
    and as the grammar says it with the opening heard ("Play the song Clair de Lune."), by title
    and form."""
    forms: dict[tuple[str, str], str] = {}
    for title in titles:
        if query is not None:
            for form in ("as heard", "swallowed"):
                found = with_title(text, query, title, swallow=form == "swallowed")
                if found is not None:
                    forms[title, form] = found
        if opened is not None:
            forms[title, opened] = f"{opened[0].upper()}{opened[1:]} {title}."
    return forms


@functools.lru_cache(maxsize=20000)
def _sounds(text: str) -> str:
    return " ".join(jellyfish.metaphone(w) for w in text.split() if w not in ("the", "a"))


# Consonants a robotic or hurried voice lets Whisper swap, as one: "planned at noon" and "Clair de
# Lune" are the same skeleton but for their first sound.
_KINDRED = str.maketrans("bpdtgkqcvfzsrlnmjx", "ppttkkkkffsslllnks")


@functools.lru_cache(maxsize=20000)
def _skeleton(text: str) -> str:
    return (
        "".join(jellyfish.metaphone(w) for w in text.split() if w not in ("the", "a"))
        .lower()
        .translate(_KINDRED)
    )


def nearness(queries: Sequence[str]) -> Callable[[str], float]:
    """How near a title is to any of `queries` (the words searched for in the ear's readings), 0..1,
    by its letters, its sound (metaphone) or its consonants' kinds; 0 when none is about as long."""
    heard = [(bare(q), _sounds(bare(q))) for q in queries]

    def near(title: str) -> float:
        name, sound = bare(title), _sounds(bare(title))
        return max(
            (
                max(
                    SequenceMatcher(None, q, name).ratio(),
                    SequenceMatcher(None, s, sound).ratio(),
                    SequenceMatcher(None, _skeleton(q), _skeleton(name)).ratio(),
                )
                for q, s in heard
                if _as_long(q, name)
            ),
            default=0.0,
        )

    return near


def nearest(queries: Sequence[str], titles: Sequence[str], count: int) -> list[str]:
    """The `count` titles nearest to `queries`, taken in turn from each query's nearest: the titles
    near one reading's words are not crowded out by those near the others' ("Miles Davis" for "my
    old name is" among the titles near "my old name list", "my old name with", ...)."""
    ranked = []
    for query in dict.fromkeys(queries):
        near = nearness([query])
        scored = {title: near(title) for title in titles}
        ranked.append([t for t in sorted(scored, key=scored.__getitem__, reverse=True) if scored[t] > 0])
    chosen: list[str] = []
    for rank in range(max(map(len, ranked), default=0)):
        for titles_near in ranked:
            if rank < len(titles_near) and titles_near[rank] not in chosen and len(chosen) < count:
                chosen.append(titles_near[rank])
    return chosen


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
        self,
        score: Score,
        searched: Searched,
        titles: Callable[[], Sequence[str]],
        rules: TitleRules,
        acts: Callable[[Hearing], bool] = lambda _heard: False,
    ) -> None:
        """`score`: a Whisper model's fit of sentences to audio; `searched`: the title the intents
        would search for in a text; `titles`: the library's, as the home has them now; `acts`:
        whether the intents would act on a reading as it is ("Play jazz." is no title misheard)."""
        self._score = score
        self._searched = searched
        self._titles = titles
        self._rules = rules
        self._acts = acts

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
            if query is not None and bare(query) in {bare(t) for t in titles}:
                return Hearing(text, heard.confidence)  # the library has it: nothing to doubt
            opened = opening(text) if titles else None
            if query is None and (opened is None or self._acts(heard)):
                return heard
            # the titles near what the ear's other readings searched for compete too: "Miles Davis"
            # (from "my old day this") beside "My Old Man" (from "my old name this")
            others = [self._searched(a) for a in heard.alternatives[:ALTERNATIVES_WEIGHED]]
            queries = [q for q in (query, opened and opened[1], *others) if q]
            if query is not None and named(text, query):
                opened = None  # "Play music like the Beatles.": a name heard, not an opening misheard
            near = nearest(queries, titles, self._rules.candidates)
            sentences = said_forms(text, query, opened and opened[0], near)
            if not sentences:
                return heard
            audio = samples.astype(np.float32) / 32768.0
            fits = self._score(audio, [text, *sentences.values()])
            best = {key: fit for key, fit in zip(sentences, fits[1:], strict=True)}
            by_title: dict[str, float] = {}
            for (name, _form), fit in best.items():
                by_title[name] = max(fit, by_title.get(name, float("-inf")))
            title = chosen(fits[0], by_title, self._rules)
            if title is not None and nearness(queries)(title) < self._rules.min_nearness:
                title = None  # it fit best, but is too unlike the words heard to be them
            ranked = sorted(by_title.items(), key=lambda item: item[1], reverse=True)[:3]
            _LOGGER.debug("%r fits %.1f; the nearest titles: %s", text, fits[0], ranked)
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
