"""Reported speech: a command inside what someone else said is not a command to us."""

from __future__ import annotations

import re

# "<someone> said/says/told me/asked ...": anyone but the user speaking to us ("I said", "you said").
_REPORTING = re.compile(
    r"\b(?!(?:i|you|we)\b)([a-z']+)\s+(?:said|says|told\s+(?:me|us|him|her|them)|asked(?:\s+me)?|was\s+saying|"
    r"kept\s+saying)\b(?:\s*(?:that\s+|to\s+)?\S|\s*$)"
)
_SHOW = re.compile(r"\b(?:on\s+(?:tv|the\s+radio|the\s+news)|in\s+the\s+(?:movie|film|show|book))\b")


def is_reported(text: str) -> bool:
    """True when the words report someone else's speech or a broadcast rather than ask us."""
    lowered = " ".join(text.lower().replace("\u2019", "'").split())
    return bool(_REPORTING.search(lowered) or _SHOW.search(lowered))
