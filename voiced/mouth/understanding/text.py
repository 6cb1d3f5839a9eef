"""Text normalisation and splitting of an utterance into command-sized segments."""

from __future__ import annotations

import functools
import re

from voiced.language import Language, english, phrase
from voiced.mouth.understanding.hearing import common_words
from voiced.mouth.understanding.indirect import direct

_PERCENT = re.compile(r"(\d)\s*%")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")  # Whisper writes "4,000": one number, not two
_KELVIN = re.compile(r"(\d)k\b")  # "4000k"
_NOT_WORD = re.compile(r"[^\w\s']+")
_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": " ", "\u201d": " ", '"': " "})


@functools.cache
def _misheard(lang: Language, stage: str) -> tuple[tuple[re.Pattern[str], str], ...]:
    """Whisper's slips the language file knows, rewritten at this stage ("text" or "opening")."""
    return tuple((re.compile(p), said) for at, p, said in lang.misheard_patterns if at == stage)


@functools.cache
def _patterns(lang: Language) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The separators between requests, and the courtesy around one, from the language file."""
    joined = "|".join(rf"\b{re.escape(w)}\b" for w in lang.separators)
    courtesy = "|".join(re.escape(w) for w in sorted(lang.courtesy, key=len, reverse=True))  # longest first
    return (
        re.compile(rf"(?:\s*(?:[,;!?:+&]|\.(?=\s|$)|{joined})\s*)+"),  # "+", "&": typed "and"
        re.compile(rf"^(?:{courtesy})(?: |$)|(?:^| )(?:{courtesy})$"),
    )


_HELD = re.compile(r"([a-z])\1{2,}")  # a letter three times or more: held, in typing
_STRETCHED = re.compile(r"\b[a-z]*([a-z])\1{2,}[a-z]*\b")


def clean(segment: str) -> str:
    """Lower case, words and apostrophes only ("it's" stays: Home Assistant's templates use it)."""
    return " ".join(_NOT_WORD.sub(" ", segment.lower()).replace(" '", " ").replace("' ", " ").split())


def _unstretched(match: re.Match[str]) -> str:
    """A word typed with a letter held ("LOUDERRR", "pleaseee", "sooo"): the word it stretches, the
    held letter twice if that is a word ("coool"), else once if that is ("sooo"); else as typed (a name:
    "xxxtentacion")."""
    stretched = match.group(0)
    known, common = english().known, common_words()
    twice, once = _HELD.sub(r"\1\1", stretched), _HELD.sub(r"\1", stretched)
    return next((w for w in (twice, once) if (w in known or w in common) and len(w) > 1), stretched)


def normalise(text: str) -> str:
    text = _STRETCHED.sub(_unstretched, text.translate(_QUOTES).lower())
    text = _KELVIN.sub(r"\1 k", _THOUSANDS.sub("", text))
    text = _PERCENT.sub(r"\1 percent", text).replace("%", " percent ")
    for pattern, said in _misheard(english(), "text"):
        text = pattern.sub(said, text)
    return re.sub(r"(?<=\w)-(?=\w)", " ", text)


def split_utterance(text: str) -> list[str]:
    """Normalise and split an utterance into segments.

    "Turn on the Kitchen light, and set the bedroom to 50%." -> ["turn on the kitchen light",
    "set the bedroom to 50 percent"]. Apostrophes stay ("it's"); "50%" becomes "50 percent";
    other punctuation becomes a space.
    """
    return list(_split(text))


@functools.lru_cache(maxsize=256)  # a turn's text is split again by most of the steps reading it
def _split(text: str) -> tuple[str, ...]:
    lang = english()
    segments = (direct(_polite(_opening(clean(part), lang), lang)) for part in _parts(normalise(text), lang))
    kept = [segment for segment in segments if segment]
    # "Sorry, turn off the lounge": a word that only opens the request is no part of it (but in the
    # middle, "turn off the kitchen light, no, the bedroom light" takes something back: it stays)
    while len(kept) > 1 and kept[0] in lang.openers:
        kept.pop(0)
    return tuple(kept)


def _parts(text: str, lang: Language) -> list[str]:
    """`text` cut at its separators, but for rooms that share one plural device noun: "the bedroom
    and the living room lights" is one group of lights, not "the bedroom" and "the living room lights"."""
    pieces = _patterns(lang)[0].split(text)
    shared = _shared_noun(lang)
    parts: list[str] = []
    for piece in pieces:
        said = piece.split()
        restart = said[:1] and (said[0] in lang.openers or phrase(said[0]) in lang.correcting)
        if parts and parts[-1].split()[-1:] and parts[-1].split()[-1] in lang.unfinished and not restart:
            if said and set(said) <= lang.fillers:
                continue  # "up to, er, …": the hesitation in an unfinished part is no part
            parts[-1] = f"{parts[-1]} {piece}"
        elif parts and shared[0].search(parts[-1]) and shared[1].match(piece):
            parts[-1] = f"{parts[-1]} {lang.joining} {piece}"
        elif parts and _about_a_level(lang).fullmatch(piece.strip()) and _a_step(lang).search(parts[-1]):
            parts[-1] = f"{parts[-1]} {piece}"  # "just dim, like 20": how far the step before it goes
        else:
            parts.append(piece)
    return parts


@functools.cache
def _a_step(lang: Language) -> re.Pattern[str]:
    """A step up or down with no number ("just dim", "louder", "turn it right down")."""
    steps = "|".join(re.escape(" ".join(p)) for p in sorted((*lang.up, *lang.down), key=len, reverse=True))
    return re.compile(rf"^(?!.*\d)(?=.*\b(?:{steps})\b)")


@functools.cache
def _about_a_level(lang: Language) -> re.Pattern[str]:
    """A part that is only a rough number ("like 20", "about fifty percent"): it says no device."""
    approximately = "|".join(re.escape(w) for w in sorted(lang.approximately, key=len, reverse=True))
    numbers = "|".join(re.escape(" ".join(p)) for p in sorted(lang.numbers, key=len, reverse=True))
    percent = "|".join(re.escape(" ".join(p)) for p in lang.percent)
    rough = "|".join(re.escape(w) for w in lang.word_sets["approximately_after"])
    return re.compile(
        rf"(?:{approximately}) (?:\d+|(?:{numbers})(?: (?:{numbers}))?)(?: (?:{percent}))?(?: (?:{rough}))?"
    )


@functools.cache
def _shared_noun(lang: Language) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A part that ends on a room, and one that begins with a room and a plural device noun."""
    rooms = "|".join(re.escape(" ".join(p)) for p in lang.room_words)
    many = "|".join(re.escape(" ".join(p)) for p in lang.many)
    return re.compile(rf"\b(?:{rooms})\s*$"), re.compile(rf"^\s*(?:the )?(?:{rooms}) (?:{many})\b")


def _polite(segment: str, lang: Language) -> str:
    """Without the courtesy around it: "please" and "thanks" ask for nothing ("…, please.")."""
    return _patterns(lang)[1].sub("", segment).strip()


def _opening(segment: str, lang: Language) -> str:
    first, asking = segment.split(" ", 2), lang.word_sets["but_asking"]
    if first[0] in lang.word_sets["joining_but"] and len(first) > 1 and first[1] in asking:
        segment = segment[len(first[0]) + 1 :]  # "but could you make it quieter": a joining "but"
    for pattern, said in _misheard(lang, "opening"):
        segment = pattern.sub(said, segment)
    for heard, meant in lang.misheard_openings:
        if segment.startswith(heard + " "):  # a whole word: "but one" is no "but on"
            return meant + segment[len(heard) :]
    return segment


def words(text: str) -> list[str]:
    return clean(text).split()


def looped(text: str) -> bool:
    """Whether the transcript is one sentence said over and over ("Play the song. Play the song."):
    Whisper's decoder looping over audio it could not read, not a request said twice."""
    sentences = [clean(s) for s in re.split(r"[.!?]+", text)]
    sentences = [s for s in sentences if s]
    if len(sentences) > 1 and len(set(sentences)) == 1:
        return True
    # "turn every lamp red, turn every lamp red,": a loop written with commas (a phrase of three
    # words or more; "stop, stop" is only said twice)
    clauses = [clean(s) for s in text.split(",")]
    clauses = [c for c in clauses if c]
    if len(clauses) > 1 and len(set(clauses)) == 1 and len(clauses[0].split()) >= 3:
        return True
    # "Turn better, lamp, red, turn better, lamp, red.": the same words again, however punctuated
    said = clean(text).split()
    return any(
        len(said) % size == 0 and said == said[:size] * (len(said) // size)
        for size in range(3, len(said) // 2 + 1)
    )
