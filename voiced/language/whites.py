"""Naming a colour temperature: warm, neutral or cool, by the bands in en.yaml (`white_bands`).

The one place a white gets its name: the dashboard, the replies and the brain's habits all ask here.
"""

from __future__ import annotations

import functools
from typing import Literal

from voiced.language import HERE
from voiced.yamlfile import load_yaml

White = Literal["warm", "neutral", "cool"]


@functools.cache
def bands() -> tuple[int, int]:
    """(warm_from, cool_to) in mireds: at or above the first is warm, at or below the second cool."""
    raw = load_yaml(HERE / "en.yaml")["white_bands"]
    warm_from, cool_to = int(raw["warm_from"]), int(raw["cool_to"])
    if not 0 < cool_to < warm_from:
        raise ValueError(f"en.yaml: white_bands: cool_to ({cool_to}) must be below warm_from ({warm_from})")
    return warm_from, cool_to


def white_name(mireds: float) -> White:
    warm_from, cool_to = bands()
    if mireds >= warm_from:
        return "warm"
    return "cool" if mireds <= cool_to else "neutral"
