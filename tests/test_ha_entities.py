"""voiced in Home Assistant: its own entities by MQTT discovery, against a real Mosquitto, with the
topics and payloads Home Assistant documents (https://www.home-assistant.io/integrations/mqtt/)."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Callable
from typing import get_args

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from tests.conftest import Broker
from voiced.bus import EventBus
from voiced.config import HomeAssistantConfig, WakeWord
from voiced.devices.ha_discovery import parse_config
from voiced.ear.mute import MuteSwitch
from voiced.ear.wake import MicroWakeDetector, WakeGate, WakeSettings, WakeWordChoice
from voiced.events import AssistantState, MuteChanged, Transcript
from voiced.ha_entities import HaEntities, Topics, discovery

PREFIX, NODE = "homeassistant", "kitchen"
STATE, MUTE, WAKE = "voiced/kitchen/state", "voiced/kitchen/mute", "voiced/kitchen/wake_word"
AVAILABILITY = "voiced/kitchen/availability"


class Retained:
    """What Home Assistant would see: the last payload on each topic, retained or not."""

    def __init__(self, broker: Broker) -> None:
        self.last: dict[str, bytes] = {}
        self._changed = threading.Condition()
        self.client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        self.client.on_message = self._on_message
        self.client.connect("127.0.0.1", broker.port)
        self.client.subscribe([(f"{PREFIX}/#", 1), ("voiced/#", 1)])
        self.client.loop_start()

    def _on_message(self, _client: object, _userdata: object, message: mqtt.MQTTMessage) -> None:
        with self._changed:
            self.last[message.topic] = bytes(message.payload)
            self._changed.notify_all()

    def wait(self, topic: str, wanted: Callable[[bytes], bool], timeout: float = 5.0) -> bytes:
        deadline = time.monotonic() + timeout
        with self._changed:
            while not (topic in self.last and wanted(self.last[topic])):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{topic}: {self.last.get(topic)!r} after {timeout} s")
                self._changed.wait(left)
            return self.last[topic]

    def config(self, component: str, name: str) -> dict[str, object]:
        payload = self.wait(f"{PREFIX}/{component}/{NODE}/{name}/config", bool)
        return json.loads(payload)  # type: ignore[no-any-return]

    def say(self, topic: str, payload: str, retain: bool = False) -> None:
        self.client.publish(topic, payload, qos=1, retain=retain).wait_for_publish(5)

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


def says(state: str) -> Callable[[bytes], bool]:
    return lambda payload: bool(payload) and json.loads(payload)["state"] == state


def is_(text: str) -> Callable[[bytes], bool]:
    return lambda payload: payload.decode() == text


async def until(check: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


def test_the_entities_appear_follow_the_assistant_and_the_mute_switch_works(
    broker: Broker, caplog: pytest.LogCaptureFixture
) -> None:
    ha = Retained(broker)

    async def scenario() -> None:
        bus = EventBus()
        mute = MuteSwitch(bus)
        heard = bus.subscribe("test")
        entities = HaEntities(
            HomeAssistantConfig(node_id=NODE),
            broker.mqtt_config("voiced-ha-test"),
            bus,
            mute=mute.set,
            is_muted=mute,
            room="kitchen",
        )
        await entities.start()
        try:
            state = await asyncio.to_thread(ha.config, "sensor", "state")
            assert state["state_topic"] == STATE
            assert state["options"] == ["idle", "listening", "thinking", "speaking", "muted"]
            assert state["unique_id"] == "voiced_kitchen_state" and state["device_class"] == "enum"
            assert state["device"] == {  # type: ignore[comparison-overlap]
                "identifiers": ["voiced_kitchen"],
                "name": "voiced (kitchen)",
                "manufacturer": "voiced",
                "model": "offline voice assistant",
                "sw_version": "0.1.0",
            }
            assert state["availability"] == [
                {"topic": "voiced/kitchen/availability", "value_template": "{{ value_json.state }}"}
            ]
            switch = await asyncio.to_thread(ha.config, "switch", "mute")
            assert (switch["command_topic"], switch["payload_on"], switch["payload_off"]) == (
                "voiced/kitchen/mute/set",
                "ON",
                "OFF",
            )
            transcript = await asyncio.to_thread(ha.config, "sensor", "transcript")
            assert transcript["state_topic"] == "voiced/kitchen/transcript"
            assert f"{PREFIX}/select/{NODE}/wake_word/config" not in ha.last  # no wake word configured
            await asyncio.to_thread(
                ha.wait, "voiced/kitchen/availability", lambda p: json.loads(p)["state"] == "online"
            )
            await asyncio.to_thread(ha.wait, STATE, is_("idle"))
            await asyncio.to_thread(ha.wait, MUTE, is_("OFF"))

            bus.publish(AssistantState(state="listening"))
            await asyncio.to_thread(ha.wait, STATE, is_("listening"))
            bus.publish(Transcript(turn=1, text="Turn on the kitchen light."))
            await asyncio.to_thread(ha.wait, "voiced/kitchen/transcript", is_("Turn on the kitchen light."))

            ha.say("voiced/kitchen/mute/set", "ON")
            await until(lambda: mute.muted)
            await asyncio.to_thread(ha.wait, MUTE, is_("ON"))
            while not isinstance(await asyncio.wait_for(heard.get(), 5), MuteChanged):
                pass
            with caplog.at_level(logging.WARNING, logger="voiced.ha_entities"):
                ha.say("voiced/kitchen/mute/set", "maybe")
                await until(lambda: "voiced/kitchen/mute/set" in caplog.text)
            assert "'maybe'" in caplog.text and "ON or OFF" in caplog.text and mute.muted
            ha.say("voiced/kitchen/mute/set", "OFF")
            await until(lambda: not mute.muted)
            await asyncio.to_thread(ha.wait, MUTE, is_("OFF"))

            # Home Assistant restarted and lost its view: its birth message brings the configs back
            ha.say(f"{PREFIX}/switch/{NODE}/mute/config", "", retain=True)
            await asyncio.to_thread(ha.wait, f"{PREFIX}/switch/{NODE}/mute/config", lambda p: p == b"")
            ha.say(f"{PREFIX}/status", "online")
            again = await asyncio.to_thread(ha.config, "switch", "mute")
            assert again == switch
        finally:
            await entities.stop()
        await asyncio.to_thread(
            ha.wait, "voiced/kitchen/availability", lambda p: json.loads(p)["state"] == "offline"
        )

    try:
        asyncio.run(scenario())
    finally:
        ha.close()


def test_the_wake_word_select_switches_the_detector(broker: Broker) -> None:
    ha = Retained(broker)

    async def scenario() -> None:
        bus = EventBus()
        gate = WakeGate(MicroWakeDetector("okay_nabu"), WakeSettings(30, 5000, 8000), bus, lambda: False)
        choice = WakeWordChoice(gate, get_args(WakeWord))
        entities = HaEntities(
            HomeAssistantConfig(node_id=NODE),
            broker.mqtt_config("voiced-ha-test"),
            bus,
            mute=MuteSwitch(bus).set,
            is_muted=lambda: False,
            wake=choice,
        )
        await entities.start()
        try:
            select = await asyncio.to_thread(ha.config, "select", "wake_word")
            assert select["options"] == ["okay_nabu", "hey_jarvis", "hey_mycroft", "alexa"]
            assert select["command_topic"] == "voiced/kitchen/wake_word/set"
            await asyncio.to_thread(ha.wait, WAKE, is_("okay_nabu"))
            ha.say("voiced/kitchen/wake_word/set", "hey_jarvis")
            await until(lambda: gate.word == "hey_jarvis")
            await asyncio.to_thread(ha.wait, WAKE, is_("hey_jarvis"))
            ha.say("voiced/kitchen/wake_word/set", "siri")
            ha.say("voiced/kitchen/wake_word/set", "alexa")  # in order: siri was refused before this
            await until(lambda: gate.word == "alexa")
        finally:
            await entities.stop()

    try:
        asyncio.run(scenario())
    finally:
        ha.close()


def test_voiceds_own_entities_are_not_taken_for_devices_of_the_home() -> None:
    configs = discovery(Topics(PREFIX, NODE), "kitchen", None)
    assert len(configs) == 3
    for topic, config in configs.items():
        component, _node, object_id = topic.split("/")[1:4]
        assert parse_config(component, object_id, config, {}) is None, topic
