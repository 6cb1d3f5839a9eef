"""Vibe benchmark: call_vibe_agent → first device command on the broker → vibe_complete.

In-process on loopback: a private Mosquitto, the device simulator (reporting each new state after
--device-delay-ms, as a Zigbee radio takes a moment), the gateway and the vibe agent with preset
scenes. Two four-device scenes alternate, so every step has something to change and confirm.
Then the main agent's spoken acknowledgement while a scene runs: local reply text and the first
piper audio chunk, for the scene request itself and for a device command given mid-scene.
Run: scripts/bench.sh vibe [--trials N] [--device-delay-ms MS]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.latency import p95, start_broker  # noqa: E402
from voiced.bus import EventBus  # noqa: E402
from voiced.config import Config, MqttConfig, SafetyConfig, TtsConfig, VibeConfig  # noqa: E402
from voiced.devices.actions import DeviceActions  # noqa: E402
from voiced.devices.gateway import DeviceGateway  # noqa: E402
from voiced.devices.registry import DeviceRegistry  # noqa: E402
from voiced.devices.simulator import DeviceSimulator  # noqa: E402
from voiced.events import VibeComplete  # noqa: E402
from voiced.mouth.intents import LocalIntentAgent  # noqa: E402
from voiced.mouth.local_agent import LocalAgent  # noqa: E402
from voiced.mouth.piper_tts import PiperSynthesizer  # noqa: E402
from voiced.mouth.tools import ToolBox  # noqa: E402
from voiced.vibe.setup import build_vibe  # noqa: E402

SCENES = """
warm:
  keywords: [warm]
  reply: Warming things up.
  steps:
    - {tool: set_light, device: living_room_light, state: "on", brightness_pct: 40, color_temp: warm}
    - {tool: set_light, device: kitchen_light, state: "on", brightness_pct: 60, color_temp: warm}
    - {tool: set_scent, state: "on", scent: sandalwood, intensity: 30}
    - {tool: play_music, action: play, genre: jazz, volume: 30}
bright:
  keywords: [bright]
  reply: Brightening up.
  steps:
    - {tool: set_light, device: living_room_light, state: "on", brightness_pct: 90, color_temp: cool}
    - {tool: set_light, device: kitchen_light, state: "on", brightness_pct: 100, color_temp: cool}
    - {tool: set_scent, state: "on", scent: peppermint, intensity: 50}
    - {tool: play_music, action: play, genre: pop, volume: 45}
"""


class FirstCommand:
    """When the broker delivered the first command after `armed`."""

    def __init__(self, port: int) -> None:
        self.at: float | None = None
        self._armed = False
        self._lock = threading.Lock()
        self._client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        self._client.on_message = self._on_message
        self._client.connect("127.0.0.1", port)
        self._client.subscribe([("zigbee2mqtt/+/set", 1), ("voiced/music/set", 1)])
        self._client.loop_start()

    def arm(self) -> None:
        with self._lock:
            self.at, self._armed = None, True

    def _on_message(self, *_args: object) -> None:
        with self._lock:
            if self._armed:
                self.at, self._armed = time.monotonic(), False

    def close(self) -> None:
        self._client.loop_stop()
        self._client.disconnect()


def ms(values: list[float]) -> str:
    return f"p50 {statistics.median(values) * 1000:.0f} ms, p95 {p95(values) * 1000:.0f} ms (n={len(values)})"


async def bench(port: int, trials: int, delay_s: float, presets: Path) -> None:
    registry = DeviceRegistry.load(REPO / "devices")
    mqtt_config = MqttConfig(port=port, client_id="bench-vibe")
    config = Config(
        mqtt=mqtt_config,
        vibe=VibeConfig(presets_file=presets, default_preset="warm"),
        safety=SafetyConfig(max_commands=1000),  # the bench sends far more than a person would
    )
    bus = EventBus()
    bus.bind_loop(asyncio.get_running_loop())
    events = bus.subscribe()
    simulator = DeviceSimulator(
        registry, mqtt_config.model_copy(update={"client_id": "bench-sim"}), delay_s=delay_s
    )
    simulator.start()
    gateway = DeviceGateway(registry, mqtt_config, bus, config.safety)
    gateway.start()
    assert await simulator.wait_connected(5) and await gateway.wait_connected(5)
    await asyncio.sleep(0.5)  # retained states arrive
    actions = DeviceActions(gateway, bus)
    vibe = build_vibe(config, registry, actions, bus)
    tools = ToolBox(registry, actions, vibe=vibe)
    watcher = FirstCommand(port)
    returned, first, complete = [], [], []
    try:
        for trial in range(trials):
            while not events.empty():
                events.get_nowait()
            scene = ("warm", "bright")[trial % 2]
            watcher.arm()
            start = time.monotonic()
            result = await tools.run(trial, "call_vibe_agent", f'{{"request": "{scene}"}}')
            returned.append(time.monotonic() - start)
            assert result.ok, result.content
            while not isinstance(event := await asyncio.wait_for(events.get(), 30), VibeComplete):
                if event.kind in ("vibe_error", "vibe_cancelled"):
                    raise SystemExit(f"bench: trial {trial} failed: {event}")
            complete.append(event.t - start)
            assert watcher.at is not None
            first.append(watcher.at - start)
            print(
                f"  trial {trial + 1:2d} {scene:6s}: first command {first[-1] * 1000:5.1f} ms, "
                f"complete {complete[-1] * 1000:6.1f} ms",
                flush=True,
            )
        print(f"\nfour-device scene, device confirmation delay {delay_s * 1000:.0f} ms, {trials} trials:")
        print(f"  call_vibe_agent returns:              {ms(returned)}")
        print(f"  call_vibe_agent -> first command:     {ms(first)}")
        print(f"  call_vibe_agent -> vibe_complete:     {ms(complete)}")
        await acknowledgements(registry, gateway, actions, vibe, trials)
    finally:
        watcher.close()
        await vibe.aclose()
        gateway.stop()
        simulator.stop()


async def acknowledgements(
    registry: DeviceRegistry, gateway: DeviceGateway, actions: DeviceActions, vibe: object, trials: int
) -> None:
    """The spoken answer while a scene runs: reply text, then piper's first audio of it."""
    synthesizer = PiperSynthesizer(TtsConfig(), REPO / "models")
    synthesizer.synthesize("Ready.")
    agent = LocalAgent(LocalIntentAgent(registry, gateway.state_of), actions, vibe)  # type: ignore[arg-type]
    scene_ack, command_ack = [], []
    for trial in range(trials):
        for text, into in (
            (("warm", "bright")[trial % 2], scene_ack),
            ("turn on the bedroom light", command_ack),
        ):
            start = time.monotonic()
            said = "".join([piece async for piece in agent.reply(trial, text)])
            await asyncio.to_thread(synthesizer.synthesize, said.split(".")[0] + ".")
            into.append(time.monotonic() - start)
    print("main agent's spoken acknowledgement (reply + first piper sentence), local path:")
    print(f"  the scene request itself:             {ms(scene_ack)}")
    print(f"  a device command while a scene runs:  {ms(command_ack)}")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--device-delay-ms", type=int, default=50, help="simulated device reporting delay")
    parser.add_argument(
        "--broker-nagle", action="store_true", help="run Mosquitto with its default set_tcp_nodelay false"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        broker, port = start_broker(Path(tmp), "" if args.broker_nagle else "set_tcp_nodelay true\n")
        nodelay = "false (its default)" if args.broker_nagle else "true (as scripts/broker.sh starts it)"
        print(f"Mosquitto with set_tcp_nodelay {nodelay}")
        presets = Path(tmp) / "scenes.yaml"
        presets.write_text(SCENES, encoding="utf-8")
        try:
            asyncio.run(bench(port, args.trials, args.device_delay_ms / 1000, presets))
        finally:
            broker.terminate()
            broker.wait(timeout=10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
