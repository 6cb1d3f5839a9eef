"""Naming a colour temperature: warm, neutral or cool, by the bands in en.yaml (`white_bands`).

The one place a white gets its name: the dashboard, the replies and the brain's habits all ask here.
"""

from __future__ import annotations

import functools
from typing import Literal

from voiced.language import english

White = Literal["warm", "neutral", "cool"]


@functools.cache
def bands() -> tuple[int, int]:
    """(warm_from, cool_to) in mireds: at or above the first is warm, at or below the second cool
    (from the language already read: reading en.yaml again took ~0.4 s, on the event loop)."""
    warm_from, cool_to = english().white_bands
    if not 0 < cool_to < warm_from:
        raise ValueError(f"en.yaml: white_bands: cool_to ({cool_to}) must be below warm_from ({warm_from})")
    return warm_from, cool_to


def white_name(mireds: float) -> White:
    warm_from, cool_to = bands()
    if mireds >= warm_from:
        return "warm"
    return "cool" if mireds <= cool_to else "neutral"
