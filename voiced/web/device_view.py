"""Devices as a household reads them: friendly names, rooms, and state in people's terms.

A light reports `brightness: 102`, `color: {x: 0.15, y: 0.06}` and `color_mode`; the page shows
"On · 40 % · blue" and a blue swatch. Pure functions over the registry's declarations and the
reported state (as the gateway keeps it: brightness on voiced's 0..254 scale, colours as the
device reports them, xy, hs, rgb or hex).
"""

from __future__ import annotations

import colorsys
from typing import Any

from voiced.devices.colours import COLORS, hex_to_xy
from voiced.devices.model import Device, DiffuserDevice, LightDevice, MusicDevice, SwitchDevice
from voiced.devices.tools import DEVICE_TOOLS
from voiced.devices.z2m import friendly_name
from voiced.language.whites import white_name

NO_ROOM = "elsewhere"
# A white's swatch as the word reads, not as physics has it (3500 K is peach on a screen): warm is
# amber, neutral is cream, cool is a blue-white.
WHITE_SWATCHES = {"warm": "#ffc47a", "neutral": "#fff3e0", "cool": "#e3efff"}
NAMED_WITHIN = 0.06  # xy distance within which a reported colour is called by a colour's name
_XY_NAMES = {name: hex_to_xy(hex_colour) for name, hex_colour in COLORS.items() if name != "white"}
_TOOL_OF_KIND = {kind: tool for tool, kind in DEVICE_TOOLS.items()}


def label(device: Device) -> str:
    """ "Living room light": Zigbee2MQTT's friendly name when it is one, else the name in words."""
    friendly = friendly_name(device)
    if friendly is not None and " " in friendly.strip():
        return friendly.strip()
    words = device.name.replace("_", " ").strip()
    return words[:1].upper() + words[1:]


def room_of(device: Device, areas: dict[str, str] | None = None) -> str:
    return (device.room or (areas or {}).get(device.name) or NO_ROOM).strip().lower()


def number(value: object) -> float | None:
    """A reported number (JSON true is none), as a float."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _hex(r: float, g: float, b: float) -> str:
    return "#" + "".join(f"{round(max(0.0, min(1.0, c)) * 255):02x}" for c in (r, g, b))


def _gamma(linear: float) -> float:
    return 12.92 * linear if linear <= 0.0031308 else 1.055 * linear ** (1 / 2.4) - 0.055


def xy_to_css(x: float, y: float) -> str:
    """A CIE 1931 xy chromaticity as the brightest sRGB colour of that hue (`#rrggbb`)."""
    if y <= 0:
        return "#ffffff"
    big_x, big_z = x / y, (1 - x - y) / y
    linear = [
        max(0.0, 3.2406 * big_x - 1.5372 - 0.4986 * big_z),
        max(0.0, -0.9689 * big_x + 1.8758 + 0.0415 * big_z),
        max(0.0, 0.0557 * big_x - 0.2040 + 1.0570 * big_z),
    ]
    top = max(linear) or 1.0
    r, g, b = (_gamma(c / top) for c in linear)
    return _hex(r, g, b)


def warmth(mireds: float) -> str:
    """A colour temperature in the words the voice takes: warm, neutral or cool."""
    return white_name(mireds)


def reported_colour(colour: object) -> str | None:
    """A reported colour (`{x, y}`, `{h, s}`, `{r, g, b}` or `{hex}`) as CSS `#rrggbb`."""
    if not isinstance(colour, dict):
        return None
    hex_colour = colour.get("hex")
    if isinstance(hex_colour, str) and len(hex_colour.lstrip("#")) == 6:
        try:
            int(hex_colour.lstrip("#"), 16)
        except ValueError:
            return None
        return "#" + hex_colour.lstrip("#").lower()
    x, y = number(colour.get("x")), number(colour.get("y"))
    if x is not None and y is not None:
        return xy_to_css(x, y)
    h, s = number(colour.get("h", colour.get("hue"))), number(colour.get("s", colour.get("saturation")))
    if h is not None and s is not None:
        return _hex(*colorsys.hsv_to_rgb((h % 360) / 360, max(0.0, min(100.0, s)) / 100, 1.0))
    r, g, b = (number(colour.get(c)) for c in "rgb")
    if r is not None and g is not None and b is not None:
        return _hex(r / 255, g / 255, b / 255)
    return None


def colour_name(css: str) -> str | None:
    """The voice's name for a colour close to `css` ("blue"), or None."""
    xy = hex_to_xy(css)
    name, distance = min(
        ((n, ((xy[0] - p[0]) ** 2 + (xy[1] - p[1]) ** 2) ** 0.5) for n, p in _XY_NAMES.items()),
        key=lambda pair: pair[1],
    )
    return name if distance <= NAMED_WITHIN else None


def _pct(value: object, full: float) -> int | None:
    level = number(value)
    return None if level is None else max(0, min(100, round(level * 100 / full)))


def _on(state: dict[str, Any]) -> bool | None:
    word = state.get("state")
    return None if not isinstance(word, str) else word.upper() == "ON"


def _light(device: LightDevice, state: dict[str, Any]) -> dict[str, Any]:
    view: dict[str, Any] = {
        "on": _on(state),
        "brightness_pct": _pct(state.get("brightness"), device.brightness_max),
    }
    mode = state.get("color_mode")
    colour = reported_colour(state.get("color")) if mode != "color_temp" else None
    mireds = number(state.get("color_temp"))
    if colour is not None and (mode is not None or mireds is None):
        view["colour"], view["colour_name"] = colour, colour_name(colour)
    elif mireds is not None:
        view["warmth"] = warmth(mireds)
        view["colour"] = WHITE_SWATCHES[view["warmth"]]
    parts = ["on" if view["on"] else "off"] if view["on"] is not None else []
    if view["on"] and view["brightness_pct"] is not None:
        parts.append(f"{view['brightness_pct']} %")
    if view["on"] and "warmth" in view:
        parts.append(f"{view['warmth']} white")
    elif view["on"] and "colour" in view:
        parts.append(view["colour_name"] or "a colour")
    view["summary"] = " · ".join(parts)
    return view


def _diffuser(device: DiffuserDevice, state: dict[str, Any]) -> dict[str, Any]:
    on = _on(state)
    scent = state.get("scent") if isinstance(state.get("scent"), str) else None
    intensity = _pct(state.get("intensity"), 100)
    parts = ["on" if on else "off"] if on is not None else []
    if on:
        parts += [p for p in (scent, f"intensity {intensity} %" if intensity is not None else None) if p]
    return {"on": on, "scent": scent, "intensity_pct": intensity, "summary": " · ".join(parts)}


def _music(device: MusicDevice, state: dict[str, Any]) -> dict[str, Any]:
    playing = state.get("state") if isinstance(state.get("state"), str) else None
    what = next(
        (state[k] for k in ("track", "query", "genre") if isinstance(state.get(k), str) and state[k]), None
    )
    volume = _pct(state.get("volume"), 100)
    parts = [playing] if playing else []
    if what and playing in ("playing", "paused"):
        parts.append(what)
    if volume is not None:
        parts.append(f"volume {volume} %")
    return {
        "on": playing == "playing",
        "playing": playing,
        "what": what,
        "volume_pct": volume,
        "summary": " · ".join(parts),
    }


def state_view(device: Device, state: dict[str, Any] | None) -> dict[str, Any]:
    """The reported state in people's terms, with a one-line `summary` ("on · 40 % · blue")."""
    if state is None:
        return {"on": None, "summary": "no report yet"}
    if isinstance(device, LightDevice):
        return _light(device, state)
    if isinstance(device, DiffuserDevice):
        return _diffuser(device, state)
    if isinstance(device, MusicDevice):
        return _music(device, state)
    on = _on(state)
    return {"on": on, "summary": "" if on is None else "on" if on else "off"}


def controls(device: Device) -> dict[str, Any]:
    """What the page may offer for a device (each goes through its tool: voiced/web/device_control.py)."""
    found: dict[str, Any] = {"tool": _TOOL_OF_KIND.get(device.kind, "set_switch")}
    if isinstance(device, LightDevice):
        found["features"] = list(device.features)
        found["colours"] = list(COLORS) if "color" in device.features else []
    elif isinstance(device, DiffuserDevice):
        found["scents"], found["intensity_max"] = list(device.scents), device.intensity_max
    elif isinstance(device, MusicDevice):
        found["genres"], found["volume_max"] = list(device.genres), device.volume_max
    elif isinstance(device, SwitchDevice):
        found["features"] = []
    return found


def row(
    device: Device, state: dict[str, Any] | None, online: bool | None, areas: dict[str, str] | None
) -> dict[str, Any]:
    room = room_of(device, areas)
    return {
        "name": device.name,
        "label": label(device),
        "kind": device.kind,
        "room": device.room,
        "room_label": room[:1].upper() + room[1:],
        "online": online,
        "state": state,
        "view": state_view(device, state),
        "controls": controls(device),
    }


def ordered(devices: list[Device], areas: dict[str, str] | None = None) -> list[Device]:
    """Rooms in alphabetical order (devices in no room last), then names: the same every load."""
    return sorted(devices, key=lambda d: (room_of(d, areas) == NO_ROOM, room_of(d, areas), label(d).lower()))
