"""The guards: a request inside someone else's words ("he said turn off the lights"), a negation, a
time later, or a condition is not a request to act on now. The words are the language file's
(`guards` in voiced/language/en.yaml); this module only joins them into patterns."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from voiced.language import Language, english

_Q = "\u201c\u201d"  # curly quotation marks


def _any(parts: tuple[str, ...]) -> str:
    return "(?:" + "|".join(parts) + ")"


@dataclass(frozen=True)
class _Guards:
    reporting: re.Pattern[str]
    broadcast: re.Pattern[str]
    negated: re.Pattern[str]
    later: re.Pattern[str]
    condition: re.Pattern[str]
    question: re.Pattern[str]
    wondering: re.Pattern[str]
    quoted: re.Pattern[str]
    request_verb: re.Pattern[str]


@functools.cache
def _guards(lang: Language) -> _Guards:
    g = lang.guards
    amount, marks, at = _any(g["amounts_of_time"]), _any(g["clock_marks"]), _any(g["clock_at"])
    quote = rf'["{_Q}]{_any(g["request_verbs"])}\b[^"{_Q}]*["{_Q}]'  # a request in quotation marks
    not_after = "".join(rf"(?<!{w} )" for w in g["not_after_condition"])  # one look-behind each: fixed widths
    parting = "".join(rf"(?<!{w} )" for w in g["parting"])  # "see you tomorrow": no time to act at
    return _Guards(
        reporting=re.compile(
            rf"\b(?!{_any(g['speaking_to_us'])}\b)([a-z']+) {_any(g['reporting'])}\b"
            rf"(?:\s*(?:{_any(g['reported_openers'])} )?\S|\s*$)"
        ),
        broadcast=re.compile(rf"\b{_any(g['broadcast'])}\b"),
        negated=re.compile(rf"\b{_any(g['negating'])} (?:\w+ )?{_any(g['request_verbs'])}\b"),
        request_verb=re.compile(rf"\b{_any(g['request_verbs'])}\b"),
        later=re.compile(
            rf"\b(?:{_any(g['later_openers'])} {amount} {_any(g['units_of_time'])}"
            # past twelve, a bare number is no hour ("my light at 20"): the clock's needs its minutes
            rf"|{at} (?:(?:0?\d|1[0-2])(?::\d\d)?\s*{marks}?|(?:1[3-9]|2[0-4]):\d\d\s*{marks}?)"
            rf"(?=\W|$)(?!\s*{_any(g['not_a_time'])})"
            rf"|{at} {_any(g['clock_words'])}(?: {_any(g['clock_minutes'])})?\s*{marks}"
            rf"|{parting}{_any(g['later'])})\b"
        ),
        condition=re.compile(
            rf"\b{not_after}{_any(g['conditions'])} (?!{_any(g['not_conditions'])})"
            rf"{_any(g['condition_subjects'])} \w"
        ),
        question=re.compile(rf"^{_any(g['questions'])}\b"),
        wondering=re.compile(rf"^{_any(g['wondering'])}\b"),
        # a request in quotation marks with more said around it is someone's words quoted ('"Turn
        # the music up!" ha, Sam loves this bit'); one typed in quotes and nothing else is a request
        quoted=re.compile(rf'\S[^"{_Q}]*{quote}|{quote}\W*\w', re.IGNORECASE),
    )


def _lowered(text: str) -> str:
    return " ".join(text.lower().replace("\u2019", "'").split())


def is_reported(text: str, lang: Language | None = None) -> bool:
    """True when the words report someone else's speech or a broadcast rather than ask us."""
    guards, lowered = _guards(lang or english()), _lowered(text)
    quoted = bool(guards.quoted.search(text.strip()))
    return bool(quoted or guards.reporting.search(lowered) or guards.broadcast.search(lowered))


def is_negated(text: str, lang: Language | None = None) -> bool:
    """ "Don't turn off the kitchen light" asks for nothing to be done."""
    return bool(_guards(lang or english()).negated.search(_lowered(text)))


def is_for_later(text: str, lang: Language | None = None) -> bool:
    """ "Turn off the music in 10 minutes": we cannot wait to act (yet), so we must not act now.
    A question about later ("is it going to rain tomorrow?") asks for nothing to be done."""
    guards, lowered = _guards(lang or english()), _lowered(text)
    return bool(guards.later.search(lowered)) and not guards.question.match(lowered)


def without_later(text: str, lang: Language | None = None) -> str:
    """`text` with its times for later taken out: "we've got guests over in ten minutes" as talk
    says when its own subject does something, not when to act."""
    return " ".join(_guards(lang or english()).later.sub(" ", _lowered(text)).split())


def is_conditional(text: str, lang: Language | None = None) -> bool:
    """ "If it gets dark, turn on the lights": only when something happens, so not now. Not "…, if
    it's no trouble", nor a question ("what would happen if I …")."""
    guards, lowered = _guards(lang or english()), _lowered(text)
    return bool(guards.condition.search(lowered)) and not guards.wondering.match(lowered)


def beside_reported(text: str, asks: Callable[[str], bool], lang: Language | None = None) -> str | None:
    """ "Make the bedroom light blue tonight. My grandson tells me it's very restful.": the sentences
    that report nobody's words, when each sentence that does asks nothing itself (`asks`: whether
    words name anything here or hold a value) and does not tell us to act (no request verb); None
    when nothing is left or a reported sentence may hold the request."""
    lang = lang or english()
    guards = _guards(lang)
    sentences = [s for s in re.split(r"(?<=[.!?;])\s+", text.strip()) if s]
    reported = [s for s in sentences if is_reported(s, lang)]
    kept = [s for s in sentences if s not in reported]
    if not reported or not kept or any(asks(s) or guards.request_verb.search(_lowered(s)) for s in reported):
        return None
    return None if any(guards.broadcast.search(_lowered(s)) for s in sentences) else " ".join(kept)
