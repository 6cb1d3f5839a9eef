"""What was done, in words: a command as it went on the wire, or a scene's tool call.

`{"state":"ON","brightness":102}` to the kitchen light reads "Kitchen light: on, 40 %"; a scene's
`set_light {device: living_room_light, color: orange}` reads "Living room light: orange".
"""

from __future__ import annotations

import json
from typing import Any

from voiced.devices.model import Device, LightDevice, SwitchDevice
from voiced.devices.registry import DeviceRegistry
from voiced.errors import DeviceError
from voiced.events import CommandSent, DeviceStateChanged, Event, VibeToolStart
from voiced.web.device_view import colour_name, label, number, reported_colour, state_view, warmth

MAX_WORDS_CHARS = 200


def _name(registry: DeviceRegistry, device: str) -> tuple[Device | None, str]:
    try:
        found = registry.get(device)
    except DeviceError:
        words = device.replace("_", " ")
        return None, words[:1].upper() + words[1:]
    return found, label(found)


def _isnumber(value: object) -> bool:
    return number(value) is not None


def _light_parts(body: dict[str, Any], brightness_full: float, *, percent_given: bool = False) -> list[str]:
    parts: list[str] = []
    state = body.get("state")
    if isinstance(state, str):
        parts.append("on" if state.upper() == "ON" else "off")
    level = number(body.get("brightness_pct" if percent_given else "brightness"))
    if level is not None:
        parts.append(f"{round(level if percent_given else level * 100 / brightness_full)} %")
    colour = body.get("color")
    if isinstance(colour, str):
        parts.append(colour)
    elif (css := reported_colour(colour)) is not None:
        parts.append(colour_name(css) or css)
    temp = body.get("color_temp")
    if isinstance(temp, str):
        parts.append(f"{temp} white" if temp in ("warm", "neutral", "cool") else temp)
    elif (mireds := number(temp)) is not None:
        parts.append(f"{warmth(mireds)} white")
    return parts


def _other_parts(body: dict[str, Any]) -> list[str]:
    parts: list[str] = []
    for key in ("state", "action", "scent", "genre", "query"):
        value = body.get(key)
        if isinstance(value, str) and value:
            parts.append(value.lower() if key == "state" else value)
    if _isnumber(body.get("intensity")):
        parts.append(f"intensity {round(body['intensity'])} %")
    if _isnumber(body.get("volume")):
        parts.append(f"volume {round(body['volume'])} %")
    tracks = body.get("tracks")
    if isinstance(tracks, list) and tracks:
        parts.append(f"{len(tracks)} track{'s' if len(tracks) != 1 else ''}")
    if _isnumber(body.get("duration_min")):
        parts.append(f"for {round(body['duration_min'])} min")
    return parts


def _switch_word(device: SwitchDevice, payload: str) -> str:
    said: object = payload.strip()
    if device.command_key is not None:
        try:
            body = json.loads(payload)
        except json.JSONDecodeError:
            return payload[:40]
        said = body.get(device.command_key) if isinstance(body, dict) else None
    return "on" if said == device.payload_on else "off" if said == device.payload_off else str(said)[:40]


def command_words(registry: DeviceRegistry, device: str, payload: str) -> str:
    """ "Kitchen light: on, 40 %" for a command as it was published."""
    found, name = _name(registry, device)
    if isinstance(found, SwitchDevice):
        return f"{name}: {_switch_word(found, payload)}"
    try:
        body = json.loads(payload)
    except json.JSONDecodeError:
        body = None
    if not isinstance(body, dict):
        return f"{name}: {payload[:80]}"
    if isinstance(found, LightDevice):
        scale = found.brightness_scale * found.brightness_max / 254  # the wire's full, as the tool sets it
        parts = _light_parts(body, scale)
    else:
        parts = _other_parts(body)
    return f"{name}: {', '.join(parts) or 'no change'}"[:MAX_WORDS_CHARS]


def tool_words(registry: DeviceRegistry, tool: str, given: dict[str, Any]) -> str:
    """ "Living room light: on, 55 %, orange" for a scene's step (the tool's own arguments)."""
    if tool == "narrate":
        return f"say “{str(given.get('text', ''))[:120]}”"
    device = given.get("device")
    if isinstance(device, str) and device and device != "*":
        name = _name(registry, device)[1]
    else:
        every = device == "*"
        name = {"set_light": "Every light" if every else "The light", "set_scent": "The diffuser"}.get(
            tool, "The music"
        )
    parts = _light_parts(given, 100, percent_given=True) if tool == "set_light" else _other_parts(given)
    return f"{name}: {', '.join(parts) or 'no change'}"[:MAX_WORDS_CHARS]


def in_words(registry: DeviceRegistry, event: Event) -> dict[str, Any]:
    """Extra fields for an event as the page gets it: a device's state in people's terms (`view`),
    a command or a scene's step in words (`words`)."""
    if isinstance(event, DeviceStateChanged):
        found, _name_words = _name(registry, event.device)
        return {} if found is None else {"view": state_view(found, event.state)}
    if isinstance(event, CommandSent):
        return {"words": command_words(registry, event.device, event.payload)}
    if isinstance(event, VibeToolStart):
        return {"words": tool_words(registry, event.tool, event.input)}
    return {}
