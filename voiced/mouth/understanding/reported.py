"""Reported speech: a command inside what someone else said is not a command to us."""

from __future__ import annotations

import re

# "<someone> said/says/told me/asked ...": anyone but the user speaking to us ("I said", "you said").
_REPORTING = re.compile(
    r"\b(?!(?:i|you|we)\b)([a-z']+)\s+(?:said|says|told\s+(?:me|us|him|her|them)|asked(?:\s+me)?|was\s+saying|"
    r"(?:kept|keeps|keep|is|are)\s+(?:saying|asking(?:\s+me)?)|shouted|yelled|screamed|goes)"
    r"\b(?:\s*(?:that\s+|to\s+)?\S|\s*$)"
)
_SHOW = re.compile(
    r"\b(?:on\s+(?:the\s+)?(?:tv|telly|radio|news|podcast)|in\s+the\s+(?:movie|film|show|book))\b"
)


def is_reported(text: str) -> bool:
    """True when the words report someone else's speech or a broadcast rather than ask us."""
    lowered = " ".join(text.lower().replace("\u2019", "'").split())
    return bool(_REPORTING.search(lowered) or _SHOW.search(lowered))


_NEGATED = re.compile(
    r"\b(?:don't|dont|do not|never|no need to|you needn't)\s+(?:\w+\s+)?"
    r"(?:turn|switch|set|put|make|play|start|stop|change|dim|brighten|open|close|pause|touch)\b"
)
_NUMBER = (
    r"(?:\d+|an?|one|two|three|four|five|ten|fifteen|twenty|thirty|forty|sixty|half an?|a few|a couple of)"
)
_LATER = re.compile(
    rf"\b(?:(?:in|after|within)\s+{_NUMBER}\s+(?:minutes?|mins?|hours?|seconds?|secs?)"
    r"|at\s+(?:[01]?\d|2[0-4])(?::\d\d)?\s*(?:am|pm|a\.m\.|p\.m\.|o'clock)?(?=\W|$)(?!\s*(?:percent|%|degrees))"
    r"|at\s+(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|noon|midnight)"
    r"(?:\s+(?:thirty|fifteen|forty five))?\s*(?:o'clock|am|pm)"
    r"|after (?:this|the) (?:song|track)|tonight|tomorrow|when i (?:leave|get home|go to bed))\b"
)


def is_negated(text: str) -> bool:
    """ "Don't turn off the kitchen light" asks for nothing to be done."""
    return bool(_NEGATED.search(" ".join(text.lower().replace("\u2019", "'").split())))


# "If it gets dark, turn on the lights": a condition we cannot watch for, so nothing is done now.
_CONDITION = re.compile(
    r"\b(?<!wonder )(?:if|when|whenever|unless|once|as soon as)\s+"
    r"(?!(?:it's|it is) (?:no trouble|not too much|ok|okay|alright|possible)"
    r"|you (?:can|could|don't|would|please))"
    r"(?:it|it's|i|i'm|we|you|they|the|there|someone|somebody|anyone|nobody|my)\s+\w"
)


_QUESTION = re.compile(r"^(?:is|are|what|what's|whats|how|when|where|who|why|does|do)\b")
_ASKING = re.compile(r"^(?:is|are|what|what's|whats|how|where|who|why|does|do|i wonder)\b")


def is_for_later(text: str) -> bool:
    """ "Turn off the music in 10 minutes": we cannot wait to act (yet), so we must not act now.
    A question about later ("is it going to rain tomorrow?") asks for nothing to be done."""
    lowered = " ".join(text.lower().split())
    return bool(_LATER.search(lowered)) and not _QUESTION.match(lowered)


def is_conditional(text: str) -> bool:
    """ "If it gets dark, turn on the lights": only when something happens, so not now. Not "…, if
    it's no trouble", nor a question ("what would happen if I …")."""
    lowered = " ".join(text.lower().replace("\u2019", "'").split())
    return bool(_CONDITION.search(lowered)) and not _ASKING.match(lowered)
