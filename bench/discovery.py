"""Discovery and Zigbee2MQTT benchmark, in-process on loopback (a private Mosquitto).

1. A discovery config arriving → the device usable by voice: an HA discovery config (a Tasmota-
   style plain switch) is published retained while the daemon's gateway and local understanding
   run; we time until the understanding has learned it (HomeLearned) and until a spoken-style
   request for it ("turn on the <name>"), given to the local agent at once, has put its command on
   the broker. Each trial adds one more device, so the home grows as trials go.
2. Colour confirmation against the simulator as Zigbee2MQTT behaves (colour reported as xy, no
   retained state): a colour command sent → the state report that confirms it within tolerance.
Run: scripts/bench.sh discovery [--trials N] [--device-delay-ms MS]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.latency import p95, start_broker  # noqa: E402
from voiced.bus import EventBus  # noqa: E402
from voiced.config import DevicesConfig, MqttConfig, SafetyConfig  # noqa: E402
from voiced.devices.actions import DeviceActions  # noqa: E402
from voiced.devices.gateway import DeviceGateway  # noqa: E402
from voiced.devices.model import LightSet  # noqa: E402
from voiced.devices.registry import DeviceRegistry  # noqa: E402
from voiced.devices.simulator import DeviceSimulator  # noqa: E402
from voiced.events import HomeLearned  # noqa: E402
from voiced.mouth.home_changes import follow_home  # noqa: E402
from voiced.mouth.intents import LocalIntentAgent  # noqa: E402
from voiced.mouth.local_agent import LocalAgent  # noqa: E402

NAMES = ("coffee machine", "kettle", "fan", "heater", "printer", "aquarium", "dehumidifier", "fountain")
COLOURS = ("#FF0000", "#0000FF", "#00FF00", "#FFA500", "#A020F0", "#FFFFFF")


class Client:
    """Publishes discovery configs and notes when each command topic receives a message."""

    def __init__(self, port: int) -> None:
        self.arrived: dict[str, float] = {}
        self._lock = threading.Lock()
        self._client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        self._client.on_message = self._on_message
        self._client.connect("127.0.0.1", port)
        self._client.subscribe("bench/+/POWER", qos=1)
        self._client.loop_start()

    def _on_message(self, _c: Any, _u: Any, msg: mqtt.MQTTMessage) -> None:
        with self._lock:
            self.arrived.setdefault(msg.topic, time.monotonic())

    def retain(self, topic: str, payload: bytes) -> None:
        self._client.publish(topic, payload, qos=1, retain=True).wait_for_publish(5)

    def close(self) -> None:
        self._client.loop_stop()
        self._client.disconnect()


def switch_config(name: str, node: str) -> bytes:
    return json.dumps(
        {"name": name.title(), "~": f"bench/{node}/", "cmd_t": "~POWER", "stat_t": "~STATE", "uniq_id": node}
    ).encode()


async def discovery_trials(port: int, trials: int) -> tuple[list[float], list[float]]:
    registry = DeviceRegistry.load(REPO / "devices")
    bus = EventBus()
    bus.bind_loop(asyncio.get_running_loop())
    learned = bus.subscribe("bench-learned")
    mqtt_config = MqttConfig(port=port, client_id="bench-discovery")
    gateway = DeviceGateway(registry, mqtt_config, bus, devices=DevicesConfig(discovery=["homeassistant"]))
    gateway.start()
    intents = LocalIntentAgent(registry, gateway.state_of)
    follower = asyncio.create_task(
        follow_home(bus, bus.subscribe("home"), registry, intents), name="follow-home"
    )
    agent = LocalAgent(intents, DeviceActions(gateway, bus))
    client = Client(port)
    to_learned, to_command = [], []
    try:
        if not await gateway.wait_connected(5):
            raise SystemExit("bench: the gateway did not connect")
        for trial in range(trials):
            name, node = NAMES[trial % len(NAMES)] + ("" if trial < len(NAMES) else f" {trial}"), f"n{trial}"
            slug = name.replace(" ", "_")
            start = time.monotonic()
            client.retain(f"homeassistant/switch/{node}/config", switch_config(name, node))
            async with asyncio.timeout(30):
                while not (isinstance(e := await learned.get(), HomeLearned) and slug in e.devices):
                    pass
            to_learned.append(time.monotonic() - start)
            said = "".join([p async for p in agent.reply(trial + 1, f"Turn on the {name}.")])
            if not said.startswith("Turning on"):
                raise SystemExit(f"bench: {name!r} not usable: {said!r}")
            deadline = time.monotonic() + 10
            while f"bench/{node}/POWER" not in client.arrived and time.monotonic() < deadline:
                await asyncio.sleep(0.002)
            to_command.append(client.arrived[f"bench/{node}/POWER"] - start)
            print(
                f"trial {trial + 1}: {name!r} learned {to_learned[-1] * 1000:.0f} ms, command on the broker "
                f"{to_command[-1] * 1000:.0f} ms ({len(registry)} devices)",
                flush=True,
            )
    finally:
        client.close()
        follower.cancel()
        await asyncio.gather(follower, return_exceptions=True)
        gateway.stop()
    return to_learned, to_command


async def colour_trials(port: int, trials: int, delay_s: float) -> list[float]:
    registry = DeviceRegistry.load(REPO / "devices")
    bus = EventBus()
    bus.bind_loop(asyncio.get_running_loop())
    simulator = DeviceSimulator(registry, MqttConfig(port=port, client_id="bench-sim"), delay_s=delay_s)
    simulator.start()
    # many colours in a few seconds: past the daemon's rate limit, which this bench does not measure
    safety = SafetyConfig(max_commands=1000)
    gateway = DeviceGateway(registry, MqttConfig(port=port, client_id="bench-colour"), bus, safety)
    gateway.start()
    actions = DeviceActions(gateway, bus)
    times = []
    try:
        if not (await simulator.wait_connected(5) and await gateway.wait_connected(5)):
            raise SystemExit("bench: could not connect")
        for trial in range(trials):
            command = LightSet(device="kitchen_light", state="ON", color_hex=COLOURS[trial % len(COLOURS)])
            start = time.monotonic()
            result = await actions.execute_confirmed(
                trial, command, task_id="", ack_timeout=5, confirm_timeout=5
            )
            if not result.ok:
                raise SystemExit(f"bench: colour not confirmed: {result.message}")
            times.append(time.monotonic() - start)
    finally:
        gateway.stop()
        simulator.stop()
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=8)
    parser.add_argument("--device-delay-ms", type=int, default=0, help="the simulator reports this late")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="voiced-bench-") as tmp:
        broker, port = start_broker(Path(tmp), "persistence false\nset_tcp_nodelay true\n")
        try:
            learned, command = asyncio.run(discovery_trials(port, args.trials))
            colour = asyncio.run(colour_trials(port, args.trials * 5, args.device_delay_ms / 1000))
        finally:
            broker.terminate()
            broker.wait(10)
    ms = lambda xs: f"p50 {statistics.median(xs) * 1000:.0f} ms, p95 {p95(xs) * 1000:.0f} ms"  # noqa: E731
    print(f"discovery config → learned by the understanding: {ms(learned)} ({len(learned)} trials)")
    print(f"discovery config → its spoken-style command on the broker: {ms(command)}")
    print(
        f"colour command → confirmed from the xy report: {ms(colour)} ({len(colour)} trials, "
        f"device delay {args.device_delay_ms} ms)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
