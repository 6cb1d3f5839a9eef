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

# Mireds, as Zigbee2MQTT takes them.
COLOR_TEMPS: dict[str, int] = {
    "warm": 454,
    "warm white": 454,
    "cool": 250,
    "cool white": 250,
    "cold": 250,
    "cold white": 250,
    "neutral": 370,
    "daylight": 200,
    "candle light": 500,
}
