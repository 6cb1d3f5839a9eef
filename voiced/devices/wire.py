"""What goes on the wire for a device, and what its reports mean, where devices differ.

Inside voiced a light's brightness is 0..254 and a colour is `#RRGGBB`; a switch is ON or OFF.
Zigbee2MQTT takes exactly that. Home Assistant's JSON-schema lights (ESPHome, Tasmota) take
their own brightness scale and a colour as xy, hs or rgb; HA's MQTT switches take plain
payloads and report plain words or one field of a JSON object. The conversion happens here, at
the edge, both ways, so commands, confirmation and the understanding never see the difference.
"""

from __future__ import annotations

import colorsys
import json
from typing import Any

from voiced.devices.colours import hex_to_xy
from voiced.devices.model import Device, DeviceCommand, LightDevice, LightSet, SwitchDevice, encode
from voiced.devices.payloads import PayloadError, read_json, read_state
from voiced.safe_text import decode


def to_wire(device: Device, command: DeviceCommand) -> bytes:
    if isinstance(device, SwitchDevice):
        word = device.payload_on if command.payload().get("state") == "ON" else device.payload_off
        return (word if device.command_key is None else json.dumps({device.command_key: word})).encode()
    if not isinstance(device, LightDevice) or not isinstance(command, LightSet):
        return encode(command)
    body = command.payload()
    if command.brightness is not None and device.brightness_scale != 254:
        body["brightness"] = round(command.brightness * device.brightness_scale / 254)
    if command.color_hex is not None and device.color_format != "hex":
        body["color"] = _colour(command.color_hex, device.color_format)
    return json.dumps(body, separators=(",", ":")).encode()


def _colour(hex_colour: str, form: str) -> dict[str, Any]:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    if form == "xy":
        x, y = hex_to_xy(hex_colour)
        return {"x": x, "y": y}
    if form == "hs":
        h, s, _v = colorsys.rgb_to_hsv(r / 255, g / 255, b / 255)
        return {"h": round(h * 360, 1), "s": round(s * 100, 1)}
    return {"r": r, "g": g, "b": b}


def from_wire(device: Device, payload: bytes) -> dict[str, Any]:
    """A device's report as voiced reads states; raises PayloadError naming what is wrong."""
    if isinstance(device, SwitchDevice):
        return {"state": _switch_state(device, payload)}
    state = read_state(device.kind, payload)
    if isinstance(device, LightDevice) and device.brightness_scale != 254:
        level = state.get("brightness")
        if isinstance(level, int | float) and not isinstance(level, bool):
            state["brightness"] = round(level * 254 / device.brightness_scale)
    return state


def _switch_state(device: SwitchDevice, payload: bytes) -> str:
    if len(payload) > 4096:
        raise PayloadError(f"{len(payload)} bytes, too long for a switch state")
    if device.value_key is None:
        word: object = decode(payload).strip()
    else:
        body = read_json(payload)
        if not isinstance(body, dict) or device.value_key not in body:
            raise PayloadError(f"expected a JSON object with {device.value_key!r}")
        word = body[device.value_key]
    on, off = device.state_on or device.payload_on, device.state_off or device.payload_off
    if word == on:
        return "ON"
    if word == off:
        return "OFF"
    raise PayloadError(f"state is neither {on!r} nor {off!r}")
