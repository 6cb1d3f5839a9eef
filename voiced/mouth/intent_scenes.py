"""Data and small helpers for LocalIntentAgent: scenes, text normalisation, utterance splitting."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from voiced.devices.model import DeviceCommand, DiffuserSet, LightSet, MusicSet
from voiced.devices.registry import DeviceRegistry

log = logging.getLogger(__name__)

BRIGHTNESS_MAX = 254


@dataclass(frozen=True)
class Scene:
    reply: str
    # Each command: "kind" (light/diffuser/music), optional "device" (a device name, "*" for every
    # device of that kind, omitted for the first one), then the command's fields. Lights may give
    # "brightness_pct" (0..100) instead of "brightness". Devices missing from the registry are skipped.
    commands: tuple[dict[str, Any], ...]


SCENES: dict[str, Scene] = {
    "relax": Scene(
        reply="Okay, time to relax.",
        commands=(
            {
                "kind": "light",
                "device": "living_room_light",
                "state": "ON",
                "brightness_pct": 30,
                "color_temp": 454,
            },
            {"kind": "diffuser", "state": "ON", "scent": "lavender", "intensity": 40},
            {"kind": "music", "action": "play", "genre": "ambient", "volume": 30},
        ),
    ),
    "focus": Scene(
        reply="Focus mode. Bright cool light and some quiet lofi.",
        commands=(
            {"kind": "light", "device": "*", "state": "ON", "brightness_pct": 100, "color_temp": 250},
            {"kind": "diffuser", "state": "ON", "scent": "peppermint", "intensity": 50},
            {"kind": "music", "action": "play", "genre": "lofi", "volume": 20},
        ),
    ),
    "party": Scene(
        reply="Let's party!",
        commands=(
            {
                "kind": "light",
                "device": "living_room_light",
                "state": "ON",
                "brightness": 254,
                "color_hex": "#FF00FF",
            },
            {
                "kind": "light",
                "device": "kitchen_light",
                "state": "ON",
                "brightness": 254,
                "color_hex": "#00FFFF",
            },
            {
                "kind": "light",
                "device": "bedroom_light",
                "state": "ON",
                "brightness": 254,
                "color_hex": "#FFA500",
            },
            {"kind": "diffuser", "state": "ON", "scent": "citrus", "intensity": 60},
            {"kind": "music", "action": "play", "genre": "dance", "volume": 80},
        ),
    ),
    "good_night": Scene(
        reply="Good night.",
        commands=(
            {"kind": "light", "device": "*", "state": "OFF"},
            {"kind": "music", "action": "stop"},
            {"kind": "diffuser", "state": "OFF"},
        ),
    ),
}


def light(device: str, **fields: Any) -> LightSet:
    return LightSet.model_validate({"device": device, **fields})


def diffuser(device: str, **fields: Any) -> DiffuserSet:
    return DiffuserSet.model_validate({"device": device, **fields})


def music(device: str, **fields: Any) -> MusicSet:
    return MusicSet.model_validate({"device": device, **fields})


def pct_to_brightness(pct: float) -> int:
    return round(pct * BRIGHTNESS_MAX / 100)


_COMMAND_BUILDERS: dict[str, Callable[..., DeviceCommand]] = {
    "light": light,
    "diffuser": diffuser,
    "music": music,
}


def scene_commands(scene: Scene, registry: DeviceRegistry) -> list[DeviceCommand]:
    """The scene's commands for the devices this registry has (not yet prepared)."""
    commands: list[DeviceCommand] = []
    for spec in scene.commands:
        fields = dict(spec)
        kind = fields.pop("kind")
        target = fields.pop("device", None)
        if "brightness_pct" in fields:
            fields["brightness"] = pct_to_brightness(fields.pop("brightness_pct"))
        names = [device.name for device in registry.by_kind(kind)]
        if target is not None and target != "*":
            names = [target] if target in names else []
        elif target is None:
            names = names[:1]
        if not names:
            log.debug("scene command %s skipped: no such device here", spec)
        commands.extend(_COMMAND_BUILDERS[kind](name, **fields) for name in names)
    return commands


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
