"""Zigbee2MQTT as it really behaves: which devices it carries, its `/get` and `bridge/state` topics.

A device is Zigbee2MQTT's when its topics are `<base>/<friendly name>` and `<base>/<name>/set`.
Zigbee2MQTT does not retain device states by default: a state we do not know is asked for on
`<base>/<name>/get`, which it answers with the device's state. `<base>/bridge/state` is retained
`{"state":"online"}` while the bridge runs (and `offline` as its will): with the bridge offline no
Zigbee device can be reached, whatever its own availability last said.
"""

from __future__ import annotations

from voiced.devices.model import Device, LightDevice

BASE = "zigbee2mqtt"
# What `/get` asks for, per kind; Zigbee2MQTT answers with the whole state it then knows.
_GET = {"light": '{"state":"","brightness":"","color_temp":"","color":""}'}


def friendly_name(device: Device, base: str = BASE) -> str | None:
    """The device's Zigbee2MQTT friendly name, or None if it is not on Zigbee2MQTT's topics."""
    prefix = f"{base}/"
    if not device.state_topic.startswith(prefix) or device.command_topic != f"{device.state_topic}/set":
        return None
    name = device.state_topic.removeprefix(prefix)
    return None if name.startswith("bridge/") or name == "bridge" else name


def get_topic(device: Device, base: str = BASE) -> str | None:
    return f"{device.state_topic}/get" if friendly_name(device, base) is not None else None


def get_payload(device: Device) -> bytes:
    return (_GET["light"] if isinstance(device, LightDevice) else '{"state":""}').encode()


def bridge_topic(base: str = BASE) -> str:
    return f"{base}/bridge/state"
