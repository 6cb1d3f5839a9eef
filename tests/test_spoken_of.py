"""A question about devices in words no template has, answered; what it named is "it" next."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from voiced.devices.model import LightSet
from voiced.devices.registry import DeviceRegistry
from voiced.mouth.intents import LocalIntentAgent

REGISTRY = DeviceRegistry.load(Path(__file__).parent.parent / "devices")


def agent(states: dict[str, dict[str, Any]]) -> LocalIntentAgent:
    return LocalIntentAgent(REGISTRY, states.get, room=None, now=lambda: datetime(2026, 11, 28, 15))


def test_a_question_is_answered_and_its_device_is_it_next() -> None:
    local = agent({"bedroom_light": {"state": "ON", "brightness": 150}})
    reply = local.understand("is the bedroom light still on?")
    assert reply.commands == () and reply.understood and "bedroom light is on" in reply.text
    assert local.understand("turn it off then").commands == (LightSet(device="bedroom_light", state="OFF"),)


def test_asked_about_off_and_about_a_device_that_never_reported() -> None:
    local = agent({"kitchen_light": {"state": "OFF"}})
    assert "kitchen light is off" in local.understand("is the kitchen light still off?").text
    assert "hasn't reported" in agent({}).understand("is the kitchen light still on?").text


def test_a_question_naming_no_device_is_no_answer() -> None:
    reply = agent({}).understand("is it still raining outside?")
    assert reply.commands == () and "bedroom" not in reply.text and "kitchen" not in reply.text
