"""The simulator against a real Mosquitto: commands applied, state published, junk ignored."""

from __future__ import annotations

import asyncio
import json
import queue
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from tests.conftest import Broker
from voiced.devices.registry import DeviceRegistry
from voiced.devices.simulator import DeviceSimulator


class Watcher:
    """A plain paho client that records what arrives on a topic filter."""

    def __init__(self, broker: Broker, topic: str) -> None:
        self.messages: queue.Queue[tuple[str, Any, bool]] = queue.Queue()
        self.client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        self.client.on_message = lambda _c, _u, m: self.messages.put(
            (m.topic, json.loads(m.payload), bool(m.retain))
        )
        self.client.connect("127.0.0.1", broker.port)
        self.client.subscribe(topic, qos=1)
        self.client.loop_start()

    def publish(self, topic: str, payload: bytes | str) -> None:
        self.client.publish(topic, payload, qos=1).wait_for_publish(5)

    def next_on(self, topic: str, timeout: float = 5.0) -> tuple[Any, bool]:
        while True:
            got_topic, body, retained = self.messages.get(timeout=timeout)
            if got_topic == topic:
                return body, retained

    def until_on(self, topic: str, wanted: Any, timeout: float = 5.0) -> tuple[Any, bool]:
        """The first message on `topic` for which `wanted(body)` holds (earlier ones pass by)."""
        while True:
            body, retained = self.next_on(topic, timeout)
            if wanted(body):
                return body, retained

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


def start_simulator(registry: DeviceRegistry, broker: Broker) -> DeviceSimulator:
    simulator = DeviceSimulator(registry, broker.mqtt_config("sim-test"))
    simulator.start()
    assert asyncio.run(simulator.wait_connected(5))
    return simulator


def test_commands_are_applied_and_state_published_as_zigbee2mqtt_does(
    registry: DeviceRegistry, broker: Broker
) -> None:
    simulator = start_simulator(registry, broker)
    watcher = Watcher(broker, "zigbee2mqtt/#")
    try:
        # The bridge says online (retained, or live if we subscribed first: both are fine here).
        watcher.until_on("zigbee2mqtt/bridge/state", lambda b: b == {"state": "online"})
        watcher.publish("zigbee2mqtt/kitchen_light/get", '{"state":""}')  # answered with the state
        body, retained = watcher.next_on("zigbee2mqtt/kitchen_light")
        assert body["state"] == "OFF" and not retained
        # (The simulator's own start-up states may still be on their way: wait for the change.)
        watcher.publish("zigbee2mqtt/kitchen_light/set", '{"state":"ON","brightness":200}')
        body, retained = watcher.until_on("zigbee2mqtt/kitchen_light", lambda b: b["state"] == "ON")
        assert body["brightness"] == 200 and not retained
        watcher.publish("zigbee2mqtt/kitchen_light/set", '{"color":{"hex":"#FF0000"}}')
        body, _ = watcher.until_on("zigbee2mqtt/kitchen_light", lambda b: "color" in b)
        # The colour comes back as the xy the bulb took, never as the hex we sent.
        assert body["color_mode"] == "xy" and "hex" not in body["color"]
        assert abs(body["color"]["x"] - 0.6401) < 0.001 and abs(body["color"]["y"] - 0.33) < 0.001
        watcher.publish("zigbee2mqtt/kitchen_light/set", '{"color_temp":400}')
        body, _ = watcher.until_on("zigbee2mqtt/kitchen_light", lambda b: b["color_temp"] == 400)
        assert body["color_mode"] == "color_temp" and body["color_temp"] == 400
    finally:
        watcher.close()
        simulator.stop()
    # Nothing of the light's state is retained; the bridge's will says offline.
    late = Watcher(broker, "zigbee2mqtt/#")
    try:
        assert late.next_on("zigbee2mqtt/bridge/state") == ({"state": "offline"}, True)
        late.publish("zigbee2mqtt/kitchen_light/get", '{"state":""}')  # nobody answers now
        try:
            body, _ = late.next_on("zigbee2mqtt/kitchen_light", timeout=1.0)
            raise AssertionError(f"a state arrived with the simulator stopped: {body}")
        except queue.Empty:
            pass
    finally:
        late.close()


def test_diffuser_and_music(registry: DeviceRegistry, broker: Broker) -> None:
    simulator = start_simulator(registry, broker)
    watcher = Watcher(broker, "#")
    try:
        watcher.next_on("zigbee2mqtt/bridge/state")  # retained: the simulator is up
        watcher.publish("zigbee2mqtt/diffuser/get", '{"state":""}')
        watcher.next_on("zigbee2mqtt/diffuser")
        watcher.publish("zigbee2mqtt/diffuser/set", '{"state":"ON","scent":"citrus","intensity":70}')
        watcher.publish("voiced/music/set", '{"action":"play","genre":"jazz"}')
        watcher.publish("voiced/music/set", '{"volume":40}')
        diffuser = {}
        while diffuser.get("scent") != "citrus":
            diffuser, _ = watcher.next_on("zigbee2mqtt/diffuser")
        assert diffuser == {"state": "ON", "scent": "citrus", "intensity": 70}
        music = {}
        while music.get("volume") != 40:
            music, _ = watcher.next_on("voiced/music/state")
        assert music == {"state": "playing", "genre": "jazz", "volume": 40}
    finally:
        watcher.close()
        simulator.stop()


def test_malformed_payloads_are_ignored_and_the_simulator_lives_on(
    registry: DeviceRegistry, broker: Broker
) -> None:
    simulator = start_simulator(registry, broker)
    watcher = Watcher(broker, "zigbee2mqtt/bedroom_light")
    try:
        watcher.publish("zigbee2mqtt/bedroom_light/get", '{"state":""}')
        watcher.next_on("zigbee2mqtt/bedroom_light")
        for junk in (
            b"not json",
            b"\xff\xfe",
            b"[1, 2]",
            b'{"state":"TOGGLE"}',
            b'{"brightness":"very"}',
            b'{"brightness":9000}',
            b'{"color":"red"}',
            b'{"colour":{"hex":"#00FF00"}}',
            b"{}",
        ):
            watcher.publish("zigbee2mqtt/bedroom_light/set", junk)
        watcher.publish("zigbee2mqtt/diffuser/set", b'{"scent":"garlic"}')
        watcher.publish("zigbee2mqtt/bedroom_light/set", b'{"state":"ON"}')
        body, _ = watcher.until_on("zigbee2mqtt/bedroom_light", lambda b: b["state"] == "ON")
        assert body["brightness"] == 127
        assert simulator.rejected == 10
        assert simulator.applied == 1
    finally:
        watcher.close()
        simulator.stop()
