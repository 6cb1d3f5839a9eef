"""A home for vibe tests: a real broker, the device simulator, the gateway and the vibe agent in-process."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from tests.conftest import Broker
from voiced.bus import EventBus
from voiced.config import Config, MqttConfig
from voiced.devices.actions import DeviceActions
from voiced.devices.gateway import DeviceGateway
from voiced.devices.registry import DeviceRegistry
from voiced.devices.simulator import DeviceSimulator
from voiced.events import Event
from voiced.mouth.agent import Agent
from voiced.vibe.manager import VibeTaskManager
from voiced.vibe.setup import build_vibe

TIMEOUT_S = 15.0


class Watcher:
    """Every command published on the broker, with when it arrived."""

    def __init__(self, port: int) -> None:
        self.seen: list[tuple[float, str, str]] = []
        self._lock = threading.Lock()
        self._client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        self.listening = threading.Event()  # subscribed now (cleared while the broker is away)
        self._client.on_message = self._on_message
        self._client.on_connect = lambda c, *_: c.subscribe("#", qos=1)
        self._client.on_subscribe = lambda *_: self.listening.set()
        self._client.on_disconnect = lambda *_: self.listening.clear()
        self._client.reconnect_delay_set(min_delay=1, max_delay=2)
        self._client.connect("127.0.0.1", port)
        self._client.loop_start()

    def _on_message(self, _c: Any, _u: Any, msg: mqtt.MQTTMessage) -> None:
        with self._lock:
            self.seen.append((time.monotonic(), msg.topic, msg.payload.decode()))

    def commands(self, since: float = 0.0) -> list[tuple[float, str, str]]:
        with self._lock:
            return [item for item in self.seen if item[1].endswith("/set") and item[0] >= since]

    def close(self) -> None:
        self._client.loop_stop()
        self._client.disconnect()


@dataclass
class Home:
    broker: Broker
    registry: DeviceRegistry
    config: Config
    simulator_options: dict[str, Any] = field(default_factory=dict)
    simulator_mqtt: MqttConfig | None = None
    watch: bool = True  # a plain-TCP watcher of every command (not for TLS-only brokers)
    checkpoint: Path | None = None  # scenes kept in this SQLite file (None: in memory)
    clock: Callable[[], float] = time.monotonic  # the gateway's
    events: list[Event] = field(default_factory=list)
    narrations: list[str] = field(default_factory=list)

    async def __aenter__(self) -> Home:
        self.bus = EventBus()
        self.bus.bind_loop(asyncio.get_running_loop())
        queue = self.bus.subscribe()

        async def collect() -> None:
            while True:
                self.events.append(await queue.get())

        self._collector = asyncio.create_task(collect(), name="collector")
        self.watcher = Watcher(self.broker.port) if self.watch else None
        sim_config = self.simulator_mqtt or self.broker.mqtt_config("sim")
        self.simulator = DeviceSimulator(self.registry, sim_config, **self.simulator_options)
        self.simulator.start()
        assert await self.simulator.wait_connected(5)
        self.gateway = DeviceGateway(
            self.registry, self.config.mqtt, self.bus, self.config.safety, clock=self.clock
        )
        self.gateway.start()
        assert await self.gateway.wait_connected(5)
        self.actions = DeviceActions(self.gateway, self.bus)
        self.vibe: VibeTaskManager = self.scenes()
        # Zigbee2MQTT retains no state: the gateway asks each device (`/get`) as it connects. An
        # offline device, or one that never reports, does not answer.
        quiet = {*self.simulator_options.get("offline", ()), *self.simulator_options.get("silent", ())}
        reporting = [d.name for d in self.registry if d.name not in quiet]
        await self.until(lambda: all(self.gateway.state_of(n) for n in reporting), "initial states")
        await self.vibe.open()
        return self

    def scenes(self, config: Config | None = None) -> VibeTaskManager:
        """A vibe agent on this home (another one on the same checkpoint: the daemon restarted)."""
        return build_vibe(
            config or self.config,
            self.registry,
            self.actions,
            self.bus,
            narrate=self._narrate,
            checkpoint=self.checkpoint,
        )

    async def __aexit__(self, *_exc: object) -> None:
        await self.vibe.aclose()
        self.gateway.stop()
        self.simulator.stop()
        if self.watcher is not None:
            self.watcher.close()
        self._collector.cancel()
        await asyncio.wait([self._collector], timeout=2)

    async def _narrate(self, text: str, _turn: int, wanted: Callable[[], bool] | None = None) -> bool:
        if wanted is not None and not wanted():
            return False
        self.narrations.append(text)
        return True

    async def until(self, condition: Callable[[], object], what: str, timeout: float = TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout} s waiting for {what}")
            await asyncio.sleep(0.02)

    def of(self, kind: str, task_id: str | None = None) -> list[Any]:
        return [
            e
            for e in self.events
            if e.kind == kind and (task_id is None or getattr(e, "task_id", None) == task_id)
        ]

    async def finished(self, task_id: str, timeout: float = TIMEOUT_S) -> Event:
        kinds = ("vibe_complete", "vibe_error", "vibe_cancelled")
        await self.until(lambda: any(self.of(k, task_id) for k in kinds), f"{task_id} to finish", timeout)
        return next(e for e in self.events if e.kind in kinds and getattr(e, "task_id", None) == task_id)


async def reply_of(agent: Agent, turn: int, text: str) -> str:
    """A whole reply, as the mouth would speak it."""
    return "".join([piece async for piece in agent.reply(turn, text)])


def write_presets(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path
