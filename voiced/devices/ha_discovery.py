"""Home Assistant MQTT discovery configs → devices.

`<prefix>/<component>/[<node_id>/]<object_id>/config` carries one entity as JSON, with HA's
abbreviations (`cmd_t`, `stat_t`, `~` for a base topic...) as Tasmota and ESPHome publish them.
Lights must use the JSON schema (Zigbee2MQTT, ESPHome, Tasmota's `schema: json`); switches speak
plain payloads. Other components (sensors, covers...) are not devices we drive: `None`.
A config we cannot use raises DiscoveryError naming the field and what is wrong.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError

from voiced.devices.model import Device, LightDevice, LightFeature, SwitchDevice
from voiced.devices.payloads import problems

COMPONENTS = ("light", "switch")
_ABBREVIATIONS = {
    "cmd_t": "command_topic",
    "stat_t": "state_topic",
    "avty_t": "availability_topic",
    "avty": "availability",
    "bri": "brightness",
    "bri_scl": "brightness_scale",
    "sup_clrm": "supported_color_modes",
    "min_mirs": "min_mireds",
    "max_mirs": "max_mireds",
    "dev": "device",
    "uniq_id": "unique_id",
    "obj_id": "object_id",
    "pl_on": "payload_on",
    "pl_off": "payload_off",
    "stat_on": "state_on",
    "stat_off": "state_off",
    "val_tpl": "value_template",
    "t": "topic",
    "sa": "suggested_area",
    "ids": "identifiers",
}
_COLOUR_MODES = {"xy": "xy", "hs": "hs", "rgb": "rgb", "rgbw": "rgb", "rgbww": "rgb"}
# The one template we read: one field of the JSON state ({{ value_json.state }}).
_FIELD_TEMPLATE = re.compile(r"^\{\{\s*value_json(?:\.(\w+)|\[['\"](\w+)['\"]\])\s*\}\}$")
_SLUG = re.compile(r"[^a-z0-9]+")


class DiscoveryError(ValueError):
    """A discovery payload we cannot use; the message names the field and what is wrong."""


def slug(name: str) -> str:
    """A device name as voiced names devices: "Living room lamp" → living_room_lamp."""
    text = _SLUG.sub("_", name.lower()).strip("_")
    if not text:
        raise DiscoveryError(f"name {name[:60]!r} has no letters or digits")
    return text if text[0].isalpha() else f"device_{text}"


def _expand(config: dict[str, Any]) -> dict[str, Any]:
    body = {_ABBREVIATIONS.get(k, k): v for k, v in config.items()}
    base = body.pop("~", None)
    for key, value in list(body.items()):
        if isinstance(value, dict):
            body[key] = _expand(value) if key == "device" else value
        elif isinstance(value, list):
            body[key] = [_expand(v) if isinstance(v, dict) else v for v in value]
        elif isinstance(base, str) and key.endswith("topic") and isinstance(value, str):
            body[key] = f"{base}{value[1:]}" if value.startswith("~") else value
            body[key] = f"{body[key][:-1]}{base}" if body[key].endswith("~") else body[key]
    if isinstance(base, str) and isinstance(body.get("availability"), list):
        for entry in body["availability"]:
            if (
                isinstance(entry, dict)
                and isinstance(entry.get("topic"), str)
                and entry["topic"].startswith("~")
            ):
                entry["topic"] = f"{base}{entry['topic'][1:]}"
    return body


def _text(body: dict[str, Any], key: str, *, required: bool = True) -> str | None:
    value = body.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise DiscoveryError(f"{key}: expected a topic, got {str(value)[:60]!r}")
    return value


def _availability(body: dict[str, Any]) -> str | None:
    """The device's own availability topic; Zigbee2MQTT also lists its bridge's, handled apart."""
    if isinstance(body.get("availability_topic"), str):
        return str(body["availability_topic"])
    entries = body.get("availability")
    if entries is None:
        return None
    if not isinstance(entries, list):
        raise DiscoveryError("availability: expected a list of {topic: ...}")
    topics = [str(e["topic"]) for e in entries if isinstance(e, dict) and isinstance(e.get("topic"), str)]
    own = [t for t in topics if not t.endswith("/bridge/state")]
    return own[0] if own else None


def _device(body: dict[str, Any]) -> dict[str, Any]:
    device = body.get("device")
    return device if isinstance(device, dict) else {}


def _name(body: dict[str, Any], object_id: str) -> str:
    device = _device(body)
    entity, owner = body.get("name"), device.get("name")
    if isinstance(entity, str) and entity:
        return entity
    if isinstance(owner, str) and owner:
        return owner  # Zigbee2MQTT's main entity has name null: the device's friendly name
    object_name = body.get("object_id")
    return object_name if isinstance(object_name, str) and object_name else object_id


def room_of(body: dict[str, Any]) -> str | None:
    device = _device(body)
    area = device.get("suggested_area") or body.get("suggested_area")
    return area.lower() if isinstance(area, str) and area.strip() else None


def parse_config(component: str, object_id: str, config: Any, areas: dict[str, str]) -> Device | None:
    """One discovery config as a device (None: a component we do not drive)."""
    if component not in COMPONENTS:
        return None
    if not isinstance(config, dict):
        raise DiscoveryError(f"expected a JSON object, got {type(config).__name__}")
    body = _expand(config)
    if _device(body).get("manufacturer") == "voiced":
        return None  # a voiced daemon's own entities (ours or another room's): not a device of the home
    spoken = _name(body, object_id)
    name = slug(spoken)
    common: dict[str, Any] = {
        "name": name,
        "room": room_of(body) or areas.get(name) or areas.get(spoken.lower()),
        "command_topic": _text(body, "command_topic"),
        "state_topic": _text(body, "state_topic"),
        "availability_topic": _availability(body),
    }
    try:
        if component == "light":
            return LightDevice(kind="light", **common, **_light(body))
        return SwitchDevice(kind="switch", **common, **_switch(body))
    except ValidationError as exc:
        raise DiscoveryError(problems(exc)) from None


def _light(body: dict[str, Any]) -> dict[str, Any]:
    schema = body.get("schema", "default")
    if schema != "json":
        raise DiscoveryError(f"schema: {str(schema)[:20]!r} lights are not supported, only 'json'")
    modes = body.get("supported_color_modes")
    if modes is None:  # the older flags
        modes = [m for m in ("brightness", "color_temp", "xy", "hs", "rgb") if body.get(m) is True]
    if not isinstance(modes, list) or not all(isinstance(m, str) for m in modes):
        raise DiscoveryError("supported_color_modes: expected a list of modes")
    features: list[LightFeature] = []
    if body.get("brightness") is True or any(m != "onoff" for m in modes):
        features.append("brightness")
    if "color_temp" in modes:
        features.append("color_temp")
    colour = next((_COLOUR_MODES[m] for m in ("xy", "hs", "rgb", "rgbw", "rgbww") if m in modes), None)
    if colour is not None:
        features.append("color")
    scale = body.get("brightness_scale", 255)
    low, high = body.get("min_mireds", 153), body.get("max_mireds", 500)
    return {
        "features": tuple(features),
        "color_format": colour or "hex",
        "brightness_scale": scale,
        "color_temp_min": low,
        "color_temp_max": high,
    }


def _switch(body: dict[str, Any]) -> dict[str, Any]:
    template = body.get("value_template")
    key = None
    if template is not None:
        found = _FIELD_TEMPLATE.match(str(template).strip())
        if found is None:
            raise DiscoveryError(
                f"value_template: {str(template)[:60]!r} is not supported (only {{{{ value_json.<field> }}}})"
            )
        key = found.group(1) or found.group(2)
    fields = {"value_key": key}
    for field in ("payload_on", "payload_off", "state_on", "state_off"):
        if field in body:
            fields[field] = body[field] if isinstance(body[field], str) else str(body[field])
    return fields
