"""The daemon's device gateway against a real broker: states tracked, junk survived, bad commands refused."""

from __future__ import annotations

import asyncio
import json
import time

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from tests.conftest import Broker
from tests.test_ha_entities import until
from voiced.bus import EventBus, Subscription
from voiced.config import MqttConfig
from voiced.devices.gateway import DeviceGateway
from voiced.devices.model import DiffuserSet, LightSet, MusicSet
from voiced.devices.registry import DeviceRegistry
from voiced.errors import BrokerUnavailable, DeviceError
from voiced.events import DeviceStateChanged


def publisher(port: int) -> mqtt.Client:
    client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    client.connect("127.0.0.1", port)
    client.loop_start()
    return client


async def next_state(queue: Subscription, device: str) -> DeviceStateChanged:
    while True:
        event = await asyncio.wait_for(queue.get(), timeout=5)
        if isinstance(event, DeviceStateChanged) and event.device == device:
            return event


def test_states_are_tracked_and_malformed_states_do_not_kill_the_link(
    registry: DeviceRegistry, broker: Broker
) -> None:
    async def scenario() -> None:
        bus = EventBus()
        bus.bind_loop(asyncio.get_running_loop())
        queue = bus.subscribe()
        gateway = DeviceGateway(registry, broker.mqtt_config("gw-test"), bus)
        gateway.start()
        client = publisher(broker.port)
        try:
            assert await gateway.wait_connected(5)
            await asyncio.sleep(0.2)  # subscriptions are sent right after CONNACK
            for junk in (b"\xff", b"not json", b"[1,2]", b"null"):
                client.publish("zigbee2mqtt/kitchen_light", junk, qos=1).wait_for_publish(5)
            client.publish("zigbee2mqtt/kitchen_light", b'{"state":"ON","brightness":10}', qos=1)
            event = await next_state(queue, "kitchen_light")
            assert event.state == {"state": "ON", "brightness": 10}
            assert gateway.state_of("kitchen_light") == {"state": "ON", "brightness": 10}
            assert gateway.state_of("bedroom_light") is None
            assert gateway.connected
        finally:
            client.loop_stop()
            client.disconnect()
            gateway.stop()

    asyncio.run(scenario())


def test_commands_are_clamped_checked_and_published_exactly(registry: DeviceRegistry, broker: Broker) -> None:
    received: list[tuple[str, dict[str, object]]] = []
    watcher = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    watcher.on_message = lambda _c, _u, m: received.append((m.topic, json.loads(m.payload)))
    watcher.connect("127.0.0.1", broker.port)
    watcher.subscribe("#", qos=1)
    watcher.loop_start()

    async def scenario() -> None:
        gateway = DeviceGateway(registry, broker.mqtt_config("gw-test"), EventBus())
        gateway.start()
        try:
            assert await gateway.wait_connected(5)
            gateway.send(LightSet(device="kitchen_light", state="ON", color_temp=900))
            gateway.send(MusicSet(device="music", volume=40))
            with pytest.raises(DeviceError, match="unknown device 'garage_door'"):
                gateway.send(LightSet(device="garage_door", state="ON"))
            with pytest.raises(DeviceError, match="unknown scent 'garlic'"):
                gateway.send(DiffuserSet(device="diffuser", scent="garlic"))
            with pytest.raises(DeviceError, match="is a music"):
                gateway.send(LightSet(device="music", state="ON"))
            await asyncio.sleep(0.5)
        finally:
            gateway.stop()
        with pytest.raises(BrokerUnavailable):
            gateway.send(LightSet(device="kitchen_light", state="OFF"))

    try:
        asyncio.run(scenario())
    finally:
        watcher.loop_stop()
        watcher.disconnect()
    asked = [topic for topic, _ in received if topic.endswith("/get")]  # states not known at start
    assert asked and all(t.startswith("zigbee2mqtt/") for t in asked), asked
    commands = [item for item in received if item[0] != "voiced/availability" and item[0] not in asked]
    assert commands == [
        ("zigbee2mqtt/kitchen_light/set", {"state": "ON", "color_temp": 500}),
        ("voiced/music/set", {"volume": 40}),
    ]
    # The daemon says it is online on connect and offline when it stops.
    assert [body for topic, body in received if topic == "voiced/availability"] == [
        {"state": "online"},
        {"state": "offline"},
    ]


def retained_on(port: int, topic: str, timeout: float = 5.0) -> bytes | None:
    """What the broker keeps on `topic`, as a client that subscribes now is given it."""
    got: list[bytes] = []
    client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    client.on_message = lambda _c, _u, m: got.append(bytes(m.payload)) if m.retain else None
    client.on_connect = lambda c, *_: c.subscribe(topic, qos=1)
    client.connect("127.0.0.1", port)
    client.loop_start()
    try:
        deadline = time.monotonic() + timeout
        while not got and time.monotonic() < deadline:
            time.sleep(0.02)
        return got[0] if got else None
    finally:
        client.loop_stop()
        client.disconnect()


@pytest.mark.parametrize("topic", ["voiced/availability", "home/kitchen_voiced/availability"])
def test_our_retained_availability_is_said_again_when_a_neighbour_overwrites_it_with_offline(
    registry: DeviceRegistry, broker: Broker, topic: str
) -> None:
    """The default topic and a configured one: a neighbour's retained offline does not stay."""
    heard: list[str] = []  # every payload on the topic, in the broker's order (ours and the neighbour's)
    neighbour = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    neighbour.on_message = lambda _c, _u, m: heard.append(json.loads(m.payload)["state"])
    neighbour.on_connect = lambda c, *_: c.subscribe(topic, qos=1)
    neighbour.connect("127.0.0.1", broker.port)
    neighbour.loop_start()
    config = MqttConfig(port=broker.port, client_id="gw-test", connect_timeout_s=5, availability_topic=topic)

    async def scenario() -> None:
        gateway = DeviceGateway(registry, config, EventBus())
        gateway.start()
        try:
            assert await gateway.wait_connected(10)
            await until(lambda: heard[-1:] == ["online"], timeout=10)
            for _ in range(3):  # a neighbour that keeps at it is answered (at most once a second)
                seen = len(heard)
                neighbour.publish(topic, '{"state":"offline"}', qos=1, retain=True).wait_for_publish(5)
                await until(lambda: heard[seen:] == ["offline", "online"], timeout=10)  # noqa: B023
                kept = await asyncio.to_thread(retained_on, broker.port, topic)
                assert kept is not None and json.loads(kept) == {"state": "online"}  # what a newcomer sees
        finally:
            gateway.stop()
        await until(lambda: heard[-1:] == ["offline"], timeout=10)  # its own, at stop
        await asyncio.sleep(1.5)
        assert heard[-1] == "offline"  # not said again after the stop

    try:
        asyncio.run(scenario())
    finally:
        neighbour.loop_stop()
        neighbour.disconnect()
