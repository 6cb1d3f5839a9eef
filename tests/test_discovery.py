"""Devices from the broker: recorded discovery payloads on a real Mosquitto, learned live,
usable by voice, YAML first, bad payloads logged and survived."""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from tests.conftest import REPO, Broker
from tests.discovery_payloads import (
    BRIDGE_DEVICES,
    ESPHOME_WHITE,
    HUE_COLOUR,
    NO_COMMAND_TOPIC,
    SENSOR,
    TASMOTA_SWITCH,
    Z2M_KITCHEN,
    encoded,
)
from tests.live import spawn_collecting
from voiced.bus import EventBus, Subscription
from voiced.config import DevicesConfig
from voiced.devices.actions import DeviceActions
from voiced.devices.gateway import DeviceGateway
from voiced.devices.ha_discovery import DiscoveryError, parse_config
from voiced.devices.model import LightDevice, SwitchDevice, SwitchSet
from voiced.devices.registry import DeviceRegistry
from voiced.devices.vocabulary import HomeVocabulary
from voiced.devices.wire import to_wire
from voiced.devices.z2m_devices import parse_bridge_devices
from voiced.ear.whisper import vocabulary_hotwords
from voiced.events import HomeLearned
from voiced.mouth.home_changes import follow_home
from voiced.mouth.intents import LocalIntentAgent
from voiced.mouth.local_agent import LocalAgent

BOTH = DevicesConfig(discovery=["homeassistant", "zigbee2mqtt"])


def test_recorded_configs_become_devices() -> None:
    hue = parse_config("light", "light", HUE_COLOUR[1], {})
    assert isinstance(hue, LightDevice)
    assert (hue.name, hue.room, hue.command_topic, hue.state_topic) == (
        "hue_go",
        "living room",
        "zigbee2mqtt/Hue Go/set",
        "zigbee2mqtt/Hue Go",
    )
    assert hue.availability_topic == "zigbee2mqtt/Hue Go/availability"  # the bridge's is apart
    assert set(hue.features) == {"brightness", "color_temp", "color"} and hue.color_format == "xy"
    lamp = parse_config("light", "desk_lamp", ESPHOME_WHITE[1], {})
    assert isinstance(lamp, LightDevice)
    assert (lamp.name, lamp.room, lamp.brightness_scale, lamp.color_temp_max) == (
        "desk_lamp",
        "study",
        255,
        370,
    )
    assert set(lamp.features) == {"brightness", "color_temp"}  # white spectrum: no colour
    plug = parse_config("switch", "ABC123_RL_1", TASMOTA_SWITCH[1], {"coffee machine": "kitchen"})
    assert isinstance(plug, SwitchDevice)
    assert (plug.name, plug.room, plug.command_topic, plug.state_topic, plug.value_key) == (
        "coffee_machine",
        "kitchen",  # from areas.yaml: the payload has no room
        "tasmota_ABC123/cmnd/POWER",
        "tasmota_ABC123/stat/RESULT",
        "POWER",
    )
    assert parse_config("sensor", "linkquality", SENSOR[1], {}) is None
    with pytest.raises(DiscoveryError, match="command_topic"):
        parse_config("light", "lamp", NO_COMMAND_TOPIC[1], {})
    with pytest.raises(DiscoveryError, match="schema"):
        parse_config("light", "lamp", {**HUE_COLOUR[1], "schema": "template"}, {})


def test_bridge_devices_become_devices() -> None:
    found = parse_bridge_devices(BRIDGE_DEVICES, {"kettle plug": "kitchen"})
    by_name = {d.name: d for d in found.devices}
    assert set(by_name) == {"hallway_ceiling", "kettle_plug"}  # no coordinator, no sensor
    ceiling = by_name["hallway_ceiling"]
    assert isinstance(ceiling, LightDevice)
    assert (ceiling.color_temp_min, ceiling.color_temp_max, ceiling.color_format) == (153, 454, "hex")
    assert ceiling.command_topic == "zigbee2mqtt/Hallway Ceiling/set"
    assert by_name["kettle_plug"].room == "kitchen"
    # Zigbee2MQTT takes a switch's state as JSON on /set, as its exposes document.
    assert to_wire(by_name["kettle_plug"], SwitchSet(device="kettle_plug", state="ON")) == b'{"state": "ON"}'
    with pytest.raises(DiscoveryError, match="list"):
        parse_bridge_devices({"not": "a list"}, {})


class Publisher:
    def __init__(self, port: int) -> None:
        self.seen: list[tuple[str, bytes]] = []
        self._lock = threading.Lock()
        self.client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        self.client.on_message = self._on_message
        self.client.connect("127.0.0.1", port)
        self.client.subscribe("tasmota_ABC123/cmnd/#", qos=1)
        self.client.subscribe("desk-lamp/#", qos=1)
        self.client.loop_start()

    def _on_message(self, _c: Any, _u: Any, msg: mqtt.MQTTMessage) -> None:
        with self._lock:
            self.seen.append((msg.topic, bytes(msg.payload)))

    def retain(self, topic: str, payload: bytes) -> None:
        self.client.publish(topic, payload, qos=1, retain=True).wait_for_publish(5)

    def sent(self, topic: str) -> list[bytes]:
        with self._lock:
            return [p for t, p in self.seen if t == topic]

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


async def until(condition: Callable[[], object], what: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.02)


async def learned_with(learned: Subscription, *names: str) -> None:
    """Wait until the understanding has learned a home that has all of `names` (each relearn rebuilds
    the whole grammar, about 6 s on a quiet box and several times that on a busy one)."""
    async with asyncio.timeout(60):
        while True:
            event = await learned.get()
            if isinstance(event, HomeLearned) and set(names) <= set(event.devices):
                return


def home_registry(tmp_path: Path) -> DeviceRegistry:
    devices = tmp_path / "devices"
    shutil.copytree(REPO / "devices", devices)
    (devices / "areas.yaml").write_text("coffee machine: kitchen\n")
    return DeviceRegistry.load(devices)


def test_discovered_devices_come_and_go_live_and_are_usable_by_voice(
    tmp_path: Path, broker: Broker, caplog: pytest.LogCaptureFixture
) -> None:
    registry = home_registry(tmp_path)
    publisher = Publisher(broker.port)
    # Retained before voiced starts, as a home's broker holds them.
    for topic, config in (HUE_COLOUR, Z2M_KITCHEN, SENSOR):
        publisher.retain(topic, encoded(config))
    publisher.retain("zigbee2mqtt/bridge/devices", encoded(BRIDGE_DEVICES))

    async def scenario() -> None:
        bus = EventBus()
        bus.bind_loop(asyncio.get_running_loop())
        learned = bus.subscribe("test-learned")
        gateway = DeviceGateway(registry, broker.mqtt_config(), bus, devices=BOTH)
        gateway.start()
        intents = LocalIntentAgent(registry, gateway.state_of)
        follower = asyncio.create_task(follow_home(bus, bus.subscribe("home"), registry, intents))
        try:
            assert await gateway.wait_connected(5)
            names = lambda: {d.name for d in registry}  # noqa: E731
            await until(lambda: {"hue_go", "hallway_ceiling", "kettle_plug"} <= names(), "retained discovery")
            # YAML wins: Zigbee2MQTT's config for the kitchen light changed nothing.
            assert registry.source_of("kitchen_light").endswith("kitchen_light.yaml")
            assert registry.source_of("hue_go") == f"homeassistant {HUE_COLOUR[0]}"
            assert registry.get("kitchen_light").room == "kitchen"
            # A bad payload is logged with its topic and what is wrong, and nothing stops.
            publisher.retain(NO_COMMAND_TOPIC[0], encoded(NO_COMMAND_TOPIC[1]))
            publisher.retain("homeassistant/switch/junk/config", b"{not json")
            # Live: a switch and a white-spectrum lamp appear while we run.
            publisher.retain(TASMOTA_SWITCH[0], encoded(TASMOTA_SWITCH[1]))
            publisher.retain(ESPHOME_WHITE[0], encoded(ESPHOME_WHITE[1]))
            await until(lambda: {"coffee_machine", "desk_lamp"} <= names(), "live discovery")
            assert "broken_lamp" not in names()
            # The ear's hotwords, made anew when the home is learned, have the new room.
            assert "study" in vocabulary_hotwords(HomeVocabulary.of(registry)).split(", ")
            logged = caplog.text
            assert NO_COMMAND_TOPIC[0] in logged and "command_topic" in logged
            assert "homeassistant/switch/junk/config" in logged and "not JSON" in logged
            # The understanding learns them: by voice, through the local agent.
            # Both: each arrival is learned on its own, and the lamp may come a relearn later.
            await learned_with(learned, "coffee_machine", "desk_lamp")
            agent = LocalAgent(intents, DeviceActions(gateway, bus))
            said = "".join([p async for p in agent.reply(1, "Turn on the coffee machine.")])
            assert said == "Turning on the coffee machine."
            await until(lambda: publisher.sent("tasmota_ABC123/cmnd/POWER") == [b"ON"], "the plain ON")
            said = "".join([p async for p in agent.reply(2, "Set the desk lamp to 50 percent.")])
            assert said == "Setting the desk lamp to 50 percent."
            await until(lambda: publisher.sent("desk-lamp/light/desk_lamp/command"), "the lamp's command")
            # 50 % is 127 of 254 inside voiced, 128 of the lamp's 255 on the wire.
            sent = json.loads(publisher.sent("desk-lamp/light/desk_lamp/command")[0])
            assert sent == {"state": "ON", "brightness": 128}
            # A state report in the switch's own words is read as ON.
            publisher.client.publish("tasmota_ABC123/stat/RESULT", b'{"POWER":"ON"}', qos=1).wait_for_publish(
                5
            )
            await until(lambda: gateway.state_of("coffee_machine") == {"state": "ON"}, "the switch's state")
            # A changed config moves the lamp to a new state topic: that one is read, the old one not.
            moved = dict(ESPHOME_WHITE[1], stat_t="desk-lamp/light/desk_lamp/state2")
            publisher.retain(ESPHOME_WHITE[0], encoded(moved))
            await until(
                lambda: registry.get("desk_lamp").state_topic.endswith("state2"), "the changed config"
            )
            # retained: the subscription to the new topic may come a moment after the registry changed
            publisher.retain("desk-lamp/light/desk_lamp/state2", b'{"state":"ON"}')
            await until(lambda: (gateway.state_of("desk_lamp") or {}).get("state") == "ON", "the new topic")
            publisher.client.publish(
                "desk-lamp/light/desk_lamp/state", b'{"state":"OFF"}', qos=1
            ).wait_for_publish(5)
            publisher.retain("desk-lamp/light/desk_lamp/state2", b'{"state":"ON","brightness":9}')
            await until(
                lambda: (gateway.state_of("desk_lamp") or {}).get("brightness") is not None, "ordered"
            )
            assert (gateway.state_of("desk_lamp") or {}).get("state") == "ON"  # the old topic was not taken
            # An empty retained config removes its device; a device gone from the list goes too.
            publisher.retain(TASMOTA_SWITCH[0], b"")
            publisher.retain("zigbee2mqtt/bridge/devices", encoded(BRIDGE_DEVICES[:2]))
            await until(lambda: not {"coffee_machine", "kettle_plug"} & names(), "removal")
            assert "hallway_ceiling" in names() and "kitchen_light" in names()
        finally:
            follower.cancel()
            await asyncio.gather(follower, return_exceptions=True)
            gateway.stop()

    with caplog.at_level(logging.INFO):
        try:
            asyncio.run(scenario())
        finally:
            publisher.close()


def test_voiced_devices_shows_source_and_online_only_once_heard_from(tmp_path: Path, broker: Broker) -> None:
    registry_dir = tmp_path / "devices"
    shutil.copytree(REPO / "devices", registry_dir)
    publisher = Publisher(broker.port)
    try:
        publisher.retain(HUE_COLOUR[0], encoded(HUE_COLOUR[1]))
        publisher.retain("zigbee2mqtt/Hue Go/availability", b'{"state":"offline"}')
        publisher.retain("zigbee2mqtt/bedroom_light/availability", b'{"state":"online"}')
        publisher.retain("zigbee2mqtt/living_room_light", b'{"state":"ON"}')  # a state, no availability
        config = tmp_path / "config.yaml"
        config.write_text(
            f"devices_dir: {registry_dir}\nmqtt:\n  port: {broker.port}\n"
            "devices:\n  discovery: [homeassistant]\n"
        )
        shown = subprocess.run(
            [sys.executable, "-m", "voiced", "-c", str(config), "devices"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        publisher.close()
    assert shown.returncode == 0, shown.stderr
    rows = {line.split()[0]: line for line in shown.stdout.splitlines()}
    assert " offline " in rows["hue_go"] and f"[homeassistant {HUE_COLOUR[0]}]" in rows["hue_go"]
    assert " online " in rows["bedroom_light"] and " online " in rows["living_room_light"]
    # nothing retained and nobody answers its /get: not heard from, so not called online
    assert " unknown " in rows["kitchen_light"] and "kitchen_light.yaml]" in rows["kitchen_light"]


def _wait_for(output: list[str], text: str, proc: subprocess.Popen[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not any(text in line for line in list(output)):
        if time.monotonic() > deadline or proc.poll() is not None:
            raise AssertionError(f"no {text!r} within {timeout} s:\n{''.join(output)[-3000:]}")
        time.sleep(0.05)


@pytest.mark.e2e
def test_a_device_discovered_while_the_daemon_runs_takes_a_typed_turn(tmp_path: Path, broker: Broker) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        f"devices_dir: {REPO / 'devices'}\nweb:\n  port: 0\nmqtt:\n  port: {broker.port}\n"
        f"brain:\n  state_file: {tmp_path / 'state.sqlite'}\ndevices:\n  discovery: [homeassistant]\n"
    )
    publisher = Publisher(broker.port)
    output: list[str] = []
    run = [sys.executable, "-m", "voiced", "-c", str(config), "run", "-v", "--text", "-"]
    daemon = spawn_collecting([*run, "--output", str(tmp_path / "out.wav")], output, stdin=subprocess.PIPE)
    try:
        _wait_for(output, " ready ", daemon, 180)
        publisher.retain(TASMOTA_SWITCH[0], encoded(TASMOTA_SWITCH[1]))
        _wait_for(output, "home_learned", daemon, 120)
        assert daemon.stdin is not None
        daemon.stdin.write("turn on the coffee machine\n")
        daemon.stdin.close()
        deadline = time.monotonic() + 60
        while publisher.sent("tasmota_ABC123/cmnd/POWER") != [b"ON"]:
            assert time.monotonic() < deadline, "".join(output)[-3000:]
            time.sleep(0.05)
        assert daemon.wait(timeout=60) == 0, "".join(output)[-3000:]
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait(timeout=10)
        publisher.close()
    assert any("Turning on the coffee machine." in line for line in output), "".join(output)[-3000:]
