"""voiced against Zigbee2MQTT's real defaults on a real Mosquitto: no retained state, colour as
xy, `/get` for what it does not know, and `bridge/state`."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from tests.conftest import REPO, Broker
from tests.vibe_home import Home, reply_of
from voiced.bus import EventBus
from voiced.config import Config
from voiced.devices.actions import DeviceActions
from voiced.devices.confirm import expected_state, mismatches
from voiced.devices.gateway import DeviceGateway
from voiced.devices.model import LightSet
from voiced.devices.registry import DeviceRegistry
from voiced.errors import DeviceError
from voiced.mouth.intents import LocalIntentAgent
from voiced.mouth.local_agent import LocalAgent


class Bulb:
    """A Zigbee2MQTT light that answers `/get` only (recorded state shape), and counts what it is
    sent: a stand-in for Zigbee2MQTT started before us, whose earlier states nobody retained."""

    def __init__(self, port: int, name: str, state: dict[str, Any]) -> None:
        self.state, self.topic, self.sets, self.gets = state, f"zigbee2mqtt/{name}", [], 0
        self.ready = threading.Event()
        self._client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        self._client.on_connect = lambda c, *_: c.subscribe(f"{self.topic}/+", qos=1)
        self._client.on_subscribe = lambda *_: self.ready.set()
        self._client.on_message = self._on_message
        self._client.connect("127.0.0.1", port)
        self._client.loop_start()
        assert self.ready.wait(5)

    def _on_message(self, _c: Any, _u: Any, msg: mqtt.MQTTMessage) -> None:
        if msg.topic.endswith("/get"):
            self.gets += 1
        else:
            self.sets.append(json.loads(msg.payload))
            self.state.update(self.sets[-1])
        self._client.publish(self.topic, json.dumps(self.state), qos=1)  # not retained, as Z2M does

    def close(self) -> None:
        self._client.loop_stop()
        self._client.disconnect()


class Heard:
    """Waits for one message on a topic, from a client of its own."""

    def __init__(self, port: int, topic: str) -> None:
        self._heard, subscribed = threading.Event(), threading.Event()
        self._client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        self._client.on_connect = lambda c, *_: c.subscribe(topic, qos=1)
        self._client.on_subscribe = lambda *_: subscribed.set()
        self._client.on_message = lambda *_: self._heard.set()
        self._client.connect("127.0.0.1", port)
        self._client.loop_start()
        assert subscribed.wait(5)

    def wait(self, timeout: float) -> bool:
        return self._heard.wait(timeout)

    def close(self) -> None:
        self._client.loop_stop()
        self._client.disconnect()


def test_states_nobody_retained_are_asked_for_at_start(registry: DeviceRegistry, broker: Broker) -> None:
    """The simulator was running before us and retains nothing: we know every state all the same."""

    async def scenario() -> None:
        async with Home(broker, registry, Config(mqtt=broker.mqtt_config())) as home:
            # Home waits until the gateway knows every device's state: that came from `/get`.
            assert home.gateway.state_of("kitchen_light") == {
                "state": "OFF",
                "brightness": 127,
                "color_temp": 300,
                "color_mode": "color_temp",
            }
            # the watcher's own client may hear our `/get` a moment after the state it brought
            asked = lambda: any(t == "zigbee2mqtt/kitchen_light/get" for _t, t, _p in home.watcher.seen)  # noqa: E731
            for _ in range(250):  # at most 5 s
                if asked():
                    break
                await asyncio.sleep(0.02)
            assert asked()

    asyncio.run(scenario())


def test_a_colour_is_confirmed_from_the_xy_the_bulb_reports(registry: DeviceRegistry, broker: Broker) -> None:
    async def scenario() -> None:
        async with Home(broker, registry, Config(mqtt=broker.mqtt_config())) as home:
            actions = DeviceActions(home.gateway, home.bus)
            red = LightSet(device="kitchen_light", state="ON", color_hex="#FF0000")
            result = await actions.execute_confirmed(1, red, task_id="", ack_timeout=5, confirm_timeout=5)
            assert result.ok, result.message
            state = home.gateway.state_of("kitchen_light") or {}
            assert state["color_mode"] == "xy" and "hex" not in state["color"]
            # Blue is confirmed too, and the light's blue report does not pass for red.
            blue = LightSet(device="kitchen_light", color_hex="#0000FF")
            result = await actions.execute_confirmed(2, blue, task_id="", ack_timeout=5, confirm_timeout=5)
            assert result.ok, result.message
            missing = mismatches(home.gateway.state_of("kitchen_light"), expected_state(red))
            assert len(missing) == 1 and missing[0].startswith("color="), missing

    asyncio.run(scenario())


def test_dimmer_asks_the_light_first_instead_of_guessing(registry: DeviceRegistry, broker: Broker) -> None:
    async def scenario() -> None:
        bus = EventBus()
        bus.bind_loop(asyncio.get_running_loop())
        gateway = DeviceGateway(registry, broker.mqtt_config(), bus)
        start_up_ask = Heard(broker.port, "zigbee2mqtt/kitchen_light/get")
        gateway.start()
        assert await gateway.wait_connected(5)
        # The light appears after our start-up `/get` went unanswered: its state is unknown.
        assert await asyncio.to_thread(start_up_ask.wait, 10), "the gateway never asked at start"
        start_up_ask.close()
        bulb = Bulb(broker.port, "kitchen_light", {"state": "ON", "brightness": 200, "color_temp": 300})
        try:
            assert gateway.state_of("kitchen_light") is None
            # A device asked at start and silent for longer than the wait is not waited for again:
            # a long wait keeps a loaded machine's slow start inside it.
            actions = DeviceActions(gateway, bus, ack_timeout_s=10, state_wait_s=10)
            agent = LocalAgent(LocalIntentAgent(registry, gateway.state_of), actions)
            said = await reply_of(agent, 1, "Make the kitchen light dimmer.")
            assert said == "Dimming the kitchen light."
            for _ in range(100):
                if bulb.sets:
                    break
                await asyncio.sleep(0.05)
            # 200 less a 25 % step (64), not the old guess of 127 less 64.
            assert bulb.gets >= 1 and bulb.sets == [{"state": "ON", "brightness": 136}]
        finally:
            bulb.close()
            gateway.stop()

    asyncio.run(scenario())


def test_a_bridge_gone_offline_takes_every_zigbee_device_with_it(
    registry: DeviceRegistry, broker: Broker
) -> None:
    async def scenario() -> None:
        async with Home(broker, registry, Config(mqtt=broker.mqtt_config())) as home:
            home.simulator.set_bridge_online(False)
            zigbee = [d.name for d in registry if d.state_topic.startswith("zigbee2mqtt/")]
            await home.until(lambda: not any(home.gateway.is_online(n) for n in zigbee), "bridge offline")
            assert home.gateway.is_online("music")  # not a Zigbee device
            offline: set[str] = set()

            def told() -> bool:
                offline.update(e.device for e in home.of("device_availability") if not e.online)
                return offline == set(zigbee)

            await home.until(told, "every Zigbee device reported offline")
            try:
                home.gateway.send(LightSet(device="kitchen_light", state="ON"))
                raise AssertionError("a command went to a light behind an offline bridge")
            except DeviceError as exc:
                assert "offline" in str(exc)
            home.simulator.set_bridge_online(True)
            await home.until(lambda: all(home.gateway.is_online(n) for n in zigbee), "bridge online")

    asyncio.run(scenario())


def test_the_simulator_refuses_a_broker_where_a_bridge_is_already_online(
    tmp_path: Path, broker: Broker
) -> None:
    """A real Zigbee2MQTT (its retained bridge/state online) means a real home: nothing is simulated."""
    config = tmp_path / "config.yaml"
    config.write_text(f"devices_dir: {REPO / 'devices'}\nmqtt:\n  port: {broker.port}\n")
    home = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    home.connect("127.0.0.1", broker.port)
    home.loop_start()
    seen: list[str] = []
    home.on_message = lambda _c, _u, m: seen.append(m.topic)
    try:
        home.publish("zigbee2mqtt/bridge/state", '{"state":"online"}', qos=1, retain=True).wait_for_publish(5)
        home.subscribe("zigbee2mqtt/#", qos=1)
        refused = subprocess.run(
            [sys.executable, "-m", "voiced", "-c", str(config), "simulate"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert refused.returncode == 2 and "already says online" in refused.stderr, refused.stderr
        assert [t for t in seen if t != "zigbee2mqtt/bridge/state"] == []  # not one device state published
    finally:
        home.loop_stop()
        home.disconnect()
