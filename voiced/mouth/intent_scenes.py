"""Small helpers for LocalIntentAgent: command builders, text normalisation, utterance splitting."""

from __future__ import annotations

import re
from typing import Any

from voiced.devices.model import DiffuserSet, LightSet, MusicSet

BRIGHTNESS_MAX = 254


def light(device: str, **fields: Any) -> LightSet:
    return LightSet.model_validate({"device": device, **fields})


def diffuser(device: str, **fields: Any) -> DiffuserSet:
    return DiffuserSet.model_validate({"device": device, **fields})


def music(device: str, **fields: Any) -> MusicSet:
    return MusicSet.model_validate({"device": device, **fields})


def pct_to_brightness(pct: float) -> int:
    return round(pct * BRIGHTNESS_MAX / 100)


_PERCENT = re.compile(r"(\d)\s*%")
_SEPARATORS = re.compile(r"(?:\s*(?:[,;!?]|\.(?=\s|$)|\band\b|\bthen\b|\balso\b)\s*)+")
_NOT_WORD = re.compile(r"[^\w\s]+")


def _clean(segment: str) -> str:
    return " ".join(_NOT_WORD.sub(" ", segment).split())


def split_utterance(text: str) -> list[str]:
    """Lower-case, normalise and split an utterance into command-sized segments.

    "Turn on the Kitchen light, and set the bedroom to 50%." -> ["turn on the kitchen light",
    "set the bedroom to 50 percent"]. Apostrophes are dropped ("i'd" -> "id"), "50%"/"50 %" become
    "50 percent", other punctuation becomes a space.
    """
    text = text.lower().replace("\u2019", "'").replace("'", "")
    text = _PERCENT.sub(r"\1 percent", text).replace("%", " percent ")
    text = re.sub(r"(?<=\w)-(?=\w)", " ", text)
    segments = (_clean(part) for part in _SEPARATORS.split(text))
    return [segment for segment in segments if segment]
