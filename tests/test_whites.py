"""A white is named by one function, on the lamp trade's bands kept in voiced/language/en.yaml
(warm up to 3000 K, cool from 4000 K): the dashboard, the replies and the brain's habits agree."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from voiced.brain.analyst import _learn_from_commands
from voiced.brain.state import Preferences, TurnRecord
from voiced.devices.colours import COLOR_TEMPS
from voiced.devices.registry import DeviceRegistry
from voiced.language.whites import bands, white_name
from voiced.mouth.intents import LocalIntentAgent
from voiced.web.command_words import command_words
from voiced.web.device_view import state_view

REGISTRY = DeviceRegistry.load(Path(__file__).parent.parent / "devices")


@pytest.mark.parametrize(
    ("mireds", "name"),
    [
        *[(500, "warm"), (370, "warm"), (333, "warm")],
        *[(332, "neutral"), (290, "neutral"), (251, "neutral")],
        *[(250, "cool"), (222, "cool"), (153, "cool")],
    ],
)
def test_the_bands_are_the_lamp_trades(mireds: int, name: str) -> None:
    assert bands() == (333, 250)  # 3000 K and 4000 K
    assert white_name(mireds) == name


def test_what_warm_neutral_and_cool_set_is_named_back_as_itself() -> None:
    for word in ("warm", "neutral", "cool"):
        assert white_name(COLOR_TEMPS[word]) == word, word
    assert white_name(COLOR_TEMPS["candle light"]) == "warm" and white_name(COLOR_TEMPS["daylight"]) == "cool"


def test_290_mireds_is_neutral_on_the_page_in_a_reply_and_in_the_brain() -> None:
    light = REGISTRY.get("kitchen_light")
    state = {"state": "ON", "brightness": 254, "color_temp": 290, "color_mode": "color_temp"}
    view = state_view(light, state)
    assert view["warmth"] == "neutral" and view["summary"] == "on · 100 % · neutral white"
    assert command_words(REGISTRY, "kitchen_light", '{"color_temp":290}') == "Kitchen light: neutral white"
    agent = LocalIntentAgent(REGISTRY, {"kitchen_light": state}.get, now=lambda: datetime(2026, 11, 25, 12))
    said = agent.understand("what colour is the kitchen light").text
    assert said == "The kitchen light is a neutral white."
    record = TurnRecord(
        turn=1,
        at=datetime(2026, 11, 25, 20),
        user="kitchen light to 290 mireds",
        commands=[{"device": "kitchen_light", "payload": {"state": "ON", "color_temp": 290}}],
    )
    habits = _learn_from_commands(Preferences(), record).device_lights["kitchen_light"]
    assert {habit.warmth for habit in habits.values()} == {"neutral"}
