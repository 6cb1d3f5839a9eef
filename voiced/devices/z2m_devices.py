"""Zigbee2MQTT's retained `zigbee2mqtt/bridge/devices` → devices.

The payload lists every paired device with its `friendly_name` and `definition.exposes`. A
`light` expose gives its `state`, `brightness` (with its `value_max`), `color_temp` (with
`value_min`/`value_max` in mireds), and `color_xy` or `color_hs`; a `switch` expose gives its
`state`. Zigbee2MQTT takes them on `<base>/<name>/set` and reports on `<base>/<name>`.
Devices with neither (sensors, the coordinator), disabled ones and multi-endpoint ones are left
out; each left-out device that looked like ours is named in `skipped`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from voiced.devices.ha_discovery import DiscoveryError, slug
from voiced.devices.model import Device, LightDevice, LightFeature, SwitchDevice
from voiced.devices.payloads import problems
from voiced.devices.z2m import BASE


@dataclass
class BridgeDevices:
    devices: list[Device] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "<friendly name>: why"


def _features(expose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found = expose.get("features")
    if not isinstance(found, list):
        return {}
    return {str(f.get("name")): f for f in found if isinstance(f, dict)}


def _number(feature: dict[str, Any], key: str, default: int) -> int:
    value = feature.get(key, default)
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else default


def parse_bridge_devices(payload: Any, areas: dict[str, str], base: str = BASE) -> BridgeDevices:
    if not isinstance(payload, list):
        raise DiscoveryError(f"expected a JSON list of devices, got {type(payload).__name__}")
    result = BridgeDevices()
    for index, entry in enumerate(payload):
        if not isinstance(entry, dict):
            raise DiscoveryError(f"[{index}]: expected a device object, got {type(entry).__name__}")
        friendly = entry.get("friendly_name")
        if entry.get("type") == "Coordinator" or entry.get("disabled") is True:
            continue
        if not isinstance(friendly, str) or not friendly:
            result.skipped.append(f"[{index}]: no friendly_name")
            continue
        definition = entry.get("definition")
        exposes = definition.get("exposes") if isinstance(definition, dict) else None
        ours = [e for e in exposes or [] if isinstance(e, dict) and e.get("type") in ("light", "switch")]
        if not ours:
            continue
        if len(ours) > 1 or any("endpoint" in e for e in ours):
            result.skipped.append(f"{friendly}: several endpoints, not supported yet")
            continue
        try:
            result.devices.append(_device(friendly, ours[0], areas, base))
        except DiscoveryError as exc:
            result.skipped.append(f"{friendly}: {exc}")
    return result


def _device(friendly: str, expose: dict[str, Any], areas: dict[str, str], base: str) -> Device:
    name = slug(friendly)
    features = _features(expose)
    if "state" not in features:
        raise DiscoveryError("exposes no state")
    topic = f"{base}/{friendly}"
    common: dict[str, Any] = {
        "name": name,
        "room": areas.get(name) or areas.get(friendly.lower()),
        "command_topic": f"{topic}/set",
        "state_topic": topic,
        "availability_topic": f"{topic}/availability",
    }
    try:
        if expose["type"] == "switch":
            state = features["state"]
            on, off = state.get("value_on", "ON"), state.get("value_off", "OFF")
            return SwitchDevice(
                kind="switch",
                **common,
                payload_on=str(on),
                payload_off=str(off),
                value_key="state",
                command_key="state",
            )
        kinds: list[LightFeature] = []
        extra: dict[str, Any] = {}
        if "brightness" in features:
            kinds.append("brightness")
            extra["brightness_scale"] = _number(features["brightness"], "value_max", 254)
        if "color_temp" in features:
            kinds.append("color_temp")
            extra["color_temp_min"] = _number(features["color_temp"], "value_min", 153)
            extra["color_temp_max"] = _number(features["color_temp"], "value_max", 500)
        if "color_xy" in features or "color_hs" in features:
            kinds.append("color")  # Zigbee2MQTT takes a hex colour and converts it itself
        return LightDevice(kind="light", **common, features=tuple(kinds), **extra)
    except ValidationError as exc:
        raise DiscoveryError(problems(exc)) from None
