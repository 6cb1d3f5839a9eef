"""The shipped Mosquitto ACL example: voiced drives its devices, a neighbour can fake nothing.

A real broker with `acl_file scripts/mosquitto-acl.example` and per-user passwords; the simulator
plays the Zigbee devices as user `zigbee2mqtt` and the music player as user `music`.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import threading
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from tests.conftest import REPO, Broker
from voiced.bus import EventBus
from voiced.config import MqttConfig
from voiced.devices.actions import DeviceActions
from voiced.devices.gateway import DeviceGateway
from voiced.devices.model import LightSet, MusicSet
from voiced.devices.registry import DeviceRegistry
from voiced.devices.simulator import DeviceSimulator

USERS = ("voiced", "zigbee2mqtt", "music", "homeassistant", "neighbour")
NOT_AUTHORIZED = 135  # MQTT v5 reason code


def acl_broker(tmp_path: Path) -> Broker:
    passwords = tmp_path / "passwords"
    for i, user in enumerate(USERS):
        create = ["-c"] if i == 0 else []
        subprocess.run(["mosquitto_passwd", "-b", *create, str(passwords), user, f"{user}-pw"], check=True)
    as_root = (
        "user root\n" if os.geteuid() == 0 else ""
    )  # as root mosquitto drops to a user who can't read tmp
    acl = REPO / "scripts" / "mosquitto-acl.example"
    return Broker(
        tmp_path, auth=f"{as_root}allow_anonymous false\npassword_file {passwords}\nacl_file {acl}\n"
    )


def as_user(broker: Broker, user: str, client_id: str) -> MqttConfig:
    return MqttConfig(port=broker.port, client_id=client_id, username=user, password=f"{user}-pw")


class Neighbour:
    """Another user on the broker: tries to fake a state and to send a command; collects the answers."""

    def __init__(self, port: int) -> None:
        self.answers: dict[int, int] = {}
        self.done = threading.Event()
        self.client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        self.client.username_pw_set("neighbour", "neighbour-pw")
        self.client.on_publish = self._answered
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()

    def _answered(self, _c: Any, _u: Any, mid: int, reason: Any, _p: Any) -> None:
        self.answers[mid] = reason.value
        if len(self.answers) >= 2:
            self.done.set()

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


def test_with_the_acl_example_voiced_drives_its_devices_and_a_neighbour_can_fake_nothing(
    registry: DeviceRegistry, tmp_path: Path
) -> None:
    broker = acl_broker(tmp_path)
    broker.start()
    zigbee = DeviceRegistry([d for d in registry if d.kind != "music"])
    music = DeviceRegistry([d for d in registry if d.kind == "music"])

    async def scenario() -> tuple[list[str], dict[int, int], dict[str, Any] | None]:
        bus = EventBus()
        bus.bind_loop(asyncio.get_running_loop())
        simulators = [
            DeviceSimulator(zigbee, as_user(broker, "zigbee2mqtt", "z2m")),
            DeviceSimulator(music, as_user(broker, "music", "player")),
        ]
        gateway = DeviceGateway(registry, as_user(broker, "voiced", "voiced-acl"), bus)
        for simulator in simulators:
            simulator.start()
            assert await simulator.wait_connected(5)
        gateway.start()
        neighbour = Neighbour(broker.port)
        try:
            assert await gateway.wait_connected(5)
            actions = DeviceActions(gateway, bus)
            results = []
            for command in (
                LightSet(device="kitchen_light", state="ON", brightness=200),
                MusicSet(device="music", action="play", genre="jazz"),
            ):
                result = await actions.execute_confirmed(
                    1, command, task_id="t", ack_timeout=2, confirm_timeout=5
                )
                results.append(result.message if not result.ok else "ok")
            # The neighbour echoes a state (a faked confirmation) and sends a command of its own.
            neighbour.client.publish("zigbee2mqtt/kitchen_light", b'{"state":"OFF","brightness":3}', qos=1)
            neighbour.client.publish("zigbee2mqtt/kitchen_light/set", b'{"state":"OFF"}', qos=1)
            assert await asyncio.to_thread(neighbour.done.wait, 5)
            await asyncio.sleep(0.5)
            return results, dict(neighbour.answers), gateway.state_of("kitchen_light")
        finally:
            neighbour.close()
            gateway.stop()
            for simulator in simulators:
                simulator.stop()

    try:
        results, answers, kitchen = asyncio.run(scenario())
    finally:
        broker.stop()
    assert results == ["ok", "ok"]  # both confirmed by the devices' own state reports
    assert sorted(answers.values()) == [NOT_AUTHORIZED, NOT_AUTHORIZED]
    assert kitchen is not None and kitchen["state"] == "ON" and kitchen["brightness"] == 200
