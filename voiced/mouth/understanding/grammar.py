"""The grammar: Home Assistant's English templates for the intents we carry out, plus ours.

Both are hassil templates. Slot lists come from the home: device names and aliases (with the
HA domain each answers to), rooms, scents, genres and scene names.
"""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from hassil import Intents
from home_assistant_intents import get_intents

from voiced.devices.colours import COLOR_TEMPS, COLORS
from voiced.devices.registry import DeviceRegistry
from voiced.devices.vocabulary import HomeVocabulary
from voiced.language import english

OURS = Path(__file__).parent.parent / "intents_en.yaml"
UNSUPPORTED = Path(__file__).parent.parent / "unsupported_en.yaml"

# Home Assistant's intents we carry out, and the HA domains our device kinds answer to.
HA_INTENTS = (
    "HassTurnOn",
    "HassTurnOff",
    "HassLightSet",
    "HassMediaPause",
    "HassMediaUnpause",
    "HassMediaNext",
    "HassMediaPrevious",
    "HassSetVolume",
    "HassSetVolumeRelative",
    "HassMediaSearchAndPlay",
    "HassMediaPlayerMute",
    "HassMediaPlayerUnmute",
    "HassGetState",
    "HassGetCurrentTime",
    "HassGetCurrentDate",
)
DOMAINS = {"light": "light", "music": "media_player", "diffuser": "switch", "switch": "switch"}
KEPT_DOMAINS = {*DOMAINS.values(), "scene"}
SCENE_PREFIX = "\x00scene:"  # a `name` value that stands for one of our scenes


def human(name: str) -> str:
    return name.replace("_", " ")


def _values(entries: dict[str, tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    return {"values": [{"in": text, "out": out, "context": ctx} for text, (out, ctx) in entries.items()]}


def spoken_names(registry: DeviceRegistry) -> dict[str, tuple[str, dict[str, Any]]]:
    """Every way a device is named: its name, aliases, and for lights "<room> light/lamp"."""
    names: dict[str, tuple[str, dict[str, Any]]] = {}
    # "the lamp" beside room lights is the desk lamp: a word only one device's name has (names first)
    own = HomeVocabulary.of(registry).own_words()
    for device in registry:
        context = {"domain": DOMAINS[device.kind]}
        bases = {human(device.name), *device.aliases}
        if device.kind == "light":
            stem = human(device.name).removesuffix(" " + english().kind_names["light"].one)
            bases |= {f"{stem} {word}" for word in sorted(english().guess_light)}
            bases |= {f"{alias} {word}" for alias in device.aliases for word in sorted(english().guess_light)}
        for text in sorted(bases):
            names.setdefault(text.lower(), (device.name, context))
    for word, name in own.items():
        names.setdefault(word, (name, {"domain": DOMAINS[registry.get(name).kind]}))
    return names


def rooms(registry: DeviceRegistry, room: str | None) -> list[str]:
    found = {d.room.lower() for d in registry if d.room}
    if room:
        found.add(room.lower())
    return sorted(found)


@cache
def _ha_english() -> dict[str, Any]:
    data = get_intents("en")
    if data is None:  # the package always ships English; a broken install is a config problem
        raise RuntimeError("home-assistant-intents has no English templates")
    return data


@cache
def _read_ours(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data


def _ours(path: Path) -> dict[str, Any]:
    """Our templates, parsed once per process (the home is learned again as devices come and go)."""
    return copy.deepcopy(_read_ours(path))


def _ha_subset() -> dict[str, Any]:
    """HA's templates for our intents, without the entries for domains we have no device of."""
    data = copy.deepcopy(_ha_english())
    kept: dict[str, Any] = {}
    for name in HA_INTENTS:
        entries = []
        for entry in data["intents"][name]["data"]:
            domain = (entry.get("requires_context") or {}).get("domain") or (entry.get("slots") or {}).get(
                "domain"
            )
            if isinstance(domain, str) and domain not in KEPT_DOMAINS:
                continue
            entries.append(entry)
        kept[name] = {"data": entries}
    data["intents"] = kept
    data.pop("responses", None)
    return data


def build_grammar(registry: DeviceRegistry, room: str | None) -> dict[str, Any]:
    """HA's templates and ours in one hassil dict, with the home's slot lists."""
    data = _ha_subset()
    ours = _ours(OURS)
    data["intents"].update(ours["intents"])
    data["expansion_rules"].update(ours["expansion_rules"])
    data["skip_words"] = sorted({*data.get("skip_words", []), *ours.get("skip_words", [])})
    data["lists"].update(ours["lists"])
    data["lists"]["color"] = {"values": [{"in": k, "out": v} for k, v in COLORS.items()]}
    data["lists"]["temperature"] = {"values": [{"in": k, "out": v} for k, v in COLOR_TEMPS.items()]}
    names = spoken_names(registry)
    for scene, texts in english().scene_names.items():
        for text in texts:
            names.setdefault(text, (f"{SCENE_PREFIX}{scene}", {"domain": "scene"}))
    data["lists"]["name"] = _values(names)
    data["lists"]["area"] = {"values": rooms(registry, room)}
    data["lists"]["floor"] = {"values": []}
    for kind, list_name in (("diffuser", "diffuser"), ("music", "player")):
        named: dict[str, tuple[str, dict[str, Any]]] = {
            text.lower(): (device.name, {})
            for device in registry.by_kind(kind)
            for text in (human(device.name), *device.aliases)
        }
        data["lists"][list_name] = _values(named)
    data["lists"]["scent"] = {
        "values": sorted({s for d in registry.by_kind("diffuser") for s in getattr(d, "scents", [])})
    }
    data["lists"]["genre"] = {
        "values": sorted({g for d in registry.by_kind("music") for g in getattr(d, "genres", [])})
    }
    return data


def load_unsupported() -> Intents:
    return Intents.from_dict(_ours(UNSUPPORTED))
