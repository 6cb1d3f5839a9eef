"""The colour and colour-temperature names a light understands, spoken and as the tools take them."""

from __future__ import annotations

COLORS: dict[str, str] = {
    "red": "#FF0000",
    "green": "#00FF00",
    "blue": "#0000FF",
    "white": "#FFFFFF",
    "yellow": "#FFFF00",
    "orange": "#FFA500",
    "purple": "#A020F0",
    "violet": "#8F00FF",
    "pink": "#FF69B4",
    "magenta": "#FF00FF",
    "cyan": "#00FFFF",
    "turquoise": "#40E0D0",
    "brown": "#A52A2A",
}

# Mireds, as Zigbee2MQTT takes them; each is named back as itself by voiced/language/whites.py
# (neutral is 3500 K, the middle of the neutral band; it had been 370, a 2700 K warm white).
COLOR_TEMPS: dict[str, int] = {
    "warm": 454,
    "warm white": 454,
    "cool": 250,
    "cool white": 250,
    "cold": 250,
    "cold white": 250,
    "neutral": 286,
    "daylight": 200,
    "candle light": 500,
}

# How far (in CIE 1931 xy) a light's reported colour may be from the one we sent: bulbs clip a
# colour to their own gamut and round it (a Hue bulb's deepest red is ~0.013 from sRGB red).
XY_TOLERANCE = 0.02


def _linear(channel: int) -> float:
    value = channel / 255
    return ((value + 0.055) / 1.055) ** 2.4 if value > 0.04045 else value / 12.92


def hex_to_xy(hex_colour: str) -> tuple[float, float]:
    """`#RRGGBB` as CIE 1931 xy, the way Zigbee2MQTT converts it before it tells the bulb
    (sRGB gamma removed, the sRGB D65 matrix, rounded to 4 places); black is D65 white."""
    digits = hex_colour.lstrip("#")
    r, g, b = (_linear(int(digits[i : i + 2], 16)) for i in (0, 2, 4))
    x = r * 0.4124 + g * 0.3576 + b * 0.1805
    y = r * 0.2126 + g * 0.7152 + b * 0.0722
    z = r * 0.0193 + g * 0.1192 + b * 0.9505
    total = x + y + z
    if total == 0:
        return 0.3127, 0.329
    return round(x / total, 4), round(y / total, 4)


def xy_close(sent: tuple[float, float], reported: object, tolerance: float = XY_TOLERANCE) -> bool:
    """Whether a reported colour (`{"x": .., "y": ..}`) is within `tolerance` of `sent`."""
    if not isinstance(reported, dict):
        return False
    x, y = reported.get("x"), reported.get("y")
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (x, y)):
        return False
    return bool(((x - sent[0]) ** 2 + (y - sent[1]) ** 2) ** 0.5 <= tolerance)  # type: ignore[operator]
