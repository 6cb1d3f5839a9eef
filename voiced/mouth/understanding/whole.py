"""Whether a transcript is a whole request as it stands, so the ear may end the turn at a short pause."""

from __future__ import annotations

from voiced.language import english
from voiced.mouth.understanding.matcher import Matcher
from voiced.mouth.understanding.reported import is_conditional, is_for_later, is_negated, is_reported
from voiced.mouth.understanding.text import split_utterance

MAX_SEGMENTS = 8  # longer utterances are matched segment by segment only


def is_whole(text: str, matcher: Matcher) -> bool:
    """Each part a template match with no free text that could go on, nothing reported, negated or
    for later. Pure: no context is read or kept."""
    if is_reported(text) or is_negated(text) or is_for_later(text) or is_conditional(text):
        return False
    words = text.lower().replace(",", " ").rstrip(" .!?").split()
    if not words or words[-1] in english().goes_on:
        return False
    segments = split_utterance(text)
    if not segments or len(segments) > MAX_SEGMENTS:
        return False
    for segment in segments:
        matches = matcher.strict(segment)
        if not matches or matches[0].wild:
            return False
    return True
