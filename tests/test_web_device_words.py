"""Devices in people's terms (voiced/web/device_view.py, voiced/web/command_words.py): what a
card and the conversation say for the states and commands real devices report and take."""

from __future__ import annotations

from typing import Any

import pytest

from voiced.devices.colours import COLOR_TEMPS, COLORS
from voiced.devices.model import LightDevice, LightSet, SwitchDevice
from voiced.devices.registry import DeviceRegistry
from voiced.devices.simulator import bulb_xy
from voiced.devices.wire import from_wire, to_wire
from voiced.web.command_words import command_words, tool_words
from voiced.web.device_view import label, ordered, reported_colour, state_view, warmth


def esphome_light() -> LightDevice:
    """An ESPHome light through Home Assistant's JSON schema: 0..255 brightness, colours as xy."""
    return LightDevice.model_validate(
        {
            "kind": "light",
            "name": "desk_lamp",
            "command_topic": "esphome/desk/set",
            "state_topic": "esphome/desk/state",
            "brightness_scale": 255,
            "color_format": "xy",
        }
    )


@pytest.mark.parametrize("name", [n for n in COLORS if n != "white"])
def test_a_colour_as_a_bulb_reports_it_is_called_by_its_name(name: str, registry: DeviceRegistry) -> None:
    light = registry.get("living_room_light")
    view = state_view(
        light, {"state": "ON", "brightness": 254, "color": bulb_xy(COLORS[name]), "color_mode": "xy"}
    )
    assert view["colour_name"] == name
    assert view["summary"] == f"on · 100 % · {name}"


@pytest.mark.parametrize(
    "reported",
    [
        {"x": 0.1355, "y": 0.0399},
        {"h": 240, "s": 100},
        {"hue": 240, "saturation": 100},
        {"r": 0, "g": 0, "b": 255},
        {"hex": "#0000FF"},
    ],
)
def test_every_way_a_light_reports_blue_is_a_blue_swatch(reported: dict[str, Any]) -> None:
    css = reported_colour(reported)
    assert css is not None
    red, green, blue = (int(css[i : i + 2], 16) for i in (1, 3, 5))
    assert blue > 200 and red < 60 and green < 60, css


def test_white_mode_shows_the_warmth_not_the_old_colour(registry: DeviceRegistry) -> None:
    light = registry.get("kitchen_light")
    state = {
        "state": "ON",
        "brightness": 102,
        "color": bulb_xy("#0000FF"),
        "color_temp": 454,
        "color_mode": "color_temp",
    }
    view = state_view(light, state)
    assert view["summary"] == "on · 40 % · warm white" and "colour_name" not in view
    assert view["colour"].startswith("#ff")  # a warm tint for the swatch, not blue
    assert state_view(light, {"state": "OFF", "brightness": 102})["summary"] == "off"
    assert state_view(light, None)["summary"] == "no report yet"


@pytest.mark.parametrize("word", ["warm", "neutral", "cool"])
def test_the_voices_white_words_come_back_as_said(word: str) -> None:
    assert warmth(COLOR_TEMPS[word]) == word


def test_diffuser_music_and_switch_read_as_people_say_them(registry: DeviceRegistry) -> None:
    diffuser = state_view(registry.get("diffuser"), {"state": "ON", "scent": "lavender", "intensity": 35})
    assert diffuser["summary"] == "on · lavender · intensity 35 %"
    paused = state_view(
        registry.get("music"), {"state": "paused", "track": "Take Five", "genre": "jazz", "volume": 40}
    )
    assert paused["summary"] == "paused · Take Five · volume 40 %" and paused["on"] is False
    plug = SwitchDevice.model_validate(
        {"kind": "switch", "name": "kettle", "command_topic": "k/set", "state_topic": "k/state"}
    )
    assert state_view(plug, {"state": "ON"})["summary"] == "on"
    assert label(plug) == "Kettle"


def test_a_lights_wire_scale_and_colour_format_read_the_same_as_zigbees() -> None:
    lamp = esphome_light()
    registry = DeviceRegistry([lamp])
    payload = to_wire(lamp, LightSet(device="desk_lamp", state="ON", brightness=102, color_hex="#0000FF"))
    assert command_words(registry, "desk_lamp", payload.decode()) == "Desk lamp: on, 40 %, blue"
    reported = from_wire(
        lamp, b'{"state":"ON","brightness":102,"color":{"x":0.1355,"y":0.0399},"color_mode":"xy"}'
    )
    assert state_view(lamp, reported)["summary"] == "on · 40 % · blue"


def test_commands_and_scene_steps_in_words(registry: DeviceRegistry) -> None:
    assert (
        command_words(registry, "kitchen_light", '{"state":"ON","brightness":102}')
        == "Kitchen light: on, 40 %"
    )
    assert command_words(registry, "kitchen_light", '{"color_temp":250}') == "Kitchen light: cool white"
    assert command_words(registry, "music", '{"action":"play","genre":"jazz","volume":30}') == (
        "Music: play, jazz, volume 30 %"
    )
    assert command_words(registry, "gone_device", "not json") == "Gone device: not json"
    step = {"device": "living_room_light", "state": "on", "brightness_pct": 55, "color": "orange"}
    assert tool_words(registry, "set_light", step) == "Living room light: on, 55 %, orange"
    assert tool_words(registry, "set_light", {"device": "*", "state": "off"}) == "Every light: off"
    assert tool_words(registry, "narrate", {"text": "Dinner is served."}) == "say “Dinner is served.”"


def test_rooms_then_names_and_devices_in_no_room_last(registry: DeviceRegistry) -> None:
    shed = esphome_light()
    everything = [shed, *registry]
    order = [d.name for d in ordered(everything)]
    assert order == ["bedroom_light", "kitchen_light", "diffuser", "living_room_light", "music", "desk_lamp"]
    assert [d.name for d in ordered(list(reversed(everything)))] == order
