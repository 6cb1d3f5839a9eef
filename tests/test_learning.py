"""The compiled grammar is shared between agents of the same home, and learned again for another."""

from __future__ import annotations

from pathlib import Path

from voiced.devices.registry import DeviceRegistry
from voiced.mouth.intents import LocalIntentAgent
from voiced.mouth.understanding.learning import learn

DEVICES = Path(__file__).parent.parent / "devices"


def test_the_same_home_shares_one_matcher_and_another_room_or_device_gets_its_own() -> None:
    registry = DeviceRegistry.load(DEVICES)
    first, _, _ = learn(registry, None, True)
    again, _, _ = learn(DeviceRegistry.load(DEVICES), None, True)
    assert again is first
    assert learn(registry, "bedroom", True)[0] is not first
    assert learn(registry, None, False)[0] is not first
    fewer = DeviceRegistry([d for d in registry if d.name != "diffuser"])
    assert learn(fewer, None, True)[0] is not first


def test_agents_sharing_a_matcher_keep_their_own_conversation() -> None:
    registry = DeviceRegistry.load(DEVICES)
    one = LocalIntentAgent(registry, {}.get)
    other = LocalIntentAgent(registry, {}.get)
    one.understand("turn on the kitchen light")
    assert "which one" in other.understand("make it brighter").text
    assert one.understand("make it brighter").commands
