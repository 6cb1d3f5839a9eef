"""Reliability family `payloads`: hostile MQTT payloads on every topic the daemon and the simulator read.

In-process against a private Mosquitto: the daemon's device gateway, the device simulator and the
local agent. Seeded hostile payloads (oversize, deep nesting, NaN/Infinity, wrong types, unicode and
control characters, invalid UTF-8, empty, scalars, some retained) go to every state, availability
and command topic. Then both sides restart over the retained junk, a spoken command must still be
carried out, and a command given while the broker is frozen (SIGSTOP) must never arrive.

Counts: tries (payloads), tracebacks (log records with exc_info, loop and thread exceptions),
crashes (a side disconnected, or the command afterwards not carried out), forbidden_publishes
(anything our code published outside the declared topics, or a retained command),
stale_deliveries (commands delivered after the frozen broker resumed), rss_growth_kb.
Run: python bench/reliability/payloads.py [--seed N] [--cases N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import logging
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.subscribeoptions import SubscribeOptions

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench.hostile_payloads import hostile  # noqa: E402
from voiced.bus import EventBus  # noqa: E402
from voiced.config import MqttConfig  # noqa: E402
from voiced.devices.actions import DeviceActions  # noqa: E402
from voiced.devices.gateway import DeviceGateway  # noqa: E402
from voiced.devices.registry import DeviceRegistry  # noqa: E402
from voiced.devices.simulator import DeviceSimulator  # noqa: E402
from voiced.devices.z2m import bridge_topic, get_topic  # noqa: E402
from voiced.mouth.intents import LocalIntentAgent  # noqa: E402
from voiced.mouth.local_agent import LocalAgent  # noqa: E402

PAUSE_EVERY = 50  # wait for the broker's PUBACK every so many payloads, so nothing is dropped


class Counts(logging.Handler):
    """Tracebacks in logs, in the event loop and in threads."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.tracebacks = 0
        self.first: str | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            self.tracebacks += 1
            self.first = self.first or f"{record.name}: {record.getMessage()[:300]}"

    def thread_hook(self, args: threading.ExceptHookArgs) -> None:
        self.tracebacks += 1
        self.first = self.first or f"thread {args.thread}: {args.exc_value!r}"[:300]

    def loop_hook(self, _loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        self.tracebacks += 1
        self.first = self.first or f"loop: {context.get('message')}"[:300]


@contextlib.contextmanager
def broker() -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    with tempfile.TemporaryDirectory() as tmp, socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
        sock.close()
        conf = Path(tmp) / "mosquitto.conf"
        conf.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
        binary = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
        proc = subprocess.Popen(
            [binary, "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            deadline = time.monotonic() + 10
            while not _listening(port):
                if time.monotonic() > deadline:
                    raise RuntimeError("mosquitto did not start")
                time.sleep(0.05)
            yield proc, port
        finally:
            os.kill(proc.pid, signal.SIGCONT)
            proc.terminate()
            proc.wait(timeout=10)


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


class Watch:
    """Everything on the broker that our code (not the fuzzer) published, judged against what is declared."""

    def __init__(self, port: int, registry: DeviceRegistry, config: MqttConfig) -> None:
        self.commands = {d.command_topic for d in registry}
        self.device_reports = {d.state_topic for d in registry} | {
            d.availability_topic for d in registry if d.availability_topic
        }
        # Zigbee2MQTT's: the gateway's `/get` requests and the simulator's retained bridge state.
        self.device_reports |= {t for d in registry if (t := get_topic(d))} | {bridge_topic()}
        self.own = config.availability_topic
        self.forbidden: list[str] = []
        self.commands_seen = 0
        self._client = _client(port)
        self._client.on_message = self._seen
        self._client.subscribe("#", options=SubscribeOptions(qos=1, retainAsPublished=True))

    def _seen(self, _c: Any, _u: Any, msg: mqtt.MQTTMessage) -> None:
        props = getattr(msg, "properties", None)
        if ("origin", "fuzz") in (getattr(props, "UserProperty", None) or []):
            return
        if msg.topic in self.commands and not msg.retain:
            self.commands_seen += 1
        elif msg.topic not in self.device_reports and msg.topic != self.own:
            self.forbidden.append(f"{msg.topic[:80]!r} retain={msg.retain}")

    def close(self) -> None:
        self._client.loop_stop()
        self._client.disconnect()


def _client(port: int) -> mqtt.Client:
    client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    client.connect("127.0.0.1", port)
    client.loop_start()
    return client


def rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def _until(condition: Any, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


class Side:
    """The daemon's gateway and agent, and the simulator, as `voiced run` and `voiced simulate` build them."""

    def __init__(self, registry: DeviceRegistry, config: MqttConfig, bus: EventBus) -> None:
        self.simulator = DeviceSimulator(registry, config.model_copy(update={"client_id": "sim"}))
        self.gateway = DeviceGateway(registry, config, bus)
        actions = DeviceActions(self.gateway, bus, ack_timeout_s=1.0)
        self.agent = LocalAgent(LocalIntentAgent(registry, self.gateway.state_of), actions)
        self.registry = registry
        self.failures = 0

    async def start(self) -> bool:
        self.simulator.start()
        self.gateway.start()
        up = await self.gateway.wait_connected(5) and await self.simulator.wait_connected(5)
        return up and await _until(lambda: all(self.gateway.state_of(d.name) for d in self.registry), 10)

    def stop(self) -> None:
        self.gateway.stop()
        self.simulator.stop()

    async def say(self, text: str) -> str:
        try:
            return "".join([piece async for piece in self.agent.reply(0, text)])
        except Exception as exc:  # no reply at all: a crash of the turn
            self.failures += 1
            return f"(no reply: {exc!r})"[:300]


async def _exercise(
    seed: int, cases: int, port: int, proc: subprocess.Popen[bytes], counts: Counts
) -> dict[str, int]:
    asyncio.get_running_loop().set_exception_handler(counts.loop_hook)
    rng = random.Random(seed)
    registry = DeviceRegistry.load(REPO / "devices")
    config = MqttConfig(port=port, client_id="voiced-rel", command_expiry_s=1, ack_timeout_s=1.0)
    topics = sorted(
        {t for d in registry for t in (d.state_topic, d.command_topic, d.availability_topic) if t}
    )
    bus = EventBus()
    bus.bind_loop(asyncio.get_running_loop())
    watch = Watch(port, registry, config)
    fuzzer = _client(port)
    mark = Properties(PacketTypes.PUBLISH)
    mark.UserProperty = ("origin", "fuzz")
    side = Side(registry, config, bus)
    crashes = 0 if await side.start() else 1
    if crashes:
        print("payloads: the first start failed", file=sys.stderr)
    base = rss_kb()
    for i in range(cases):
        info = fuzzer.publish(
            rng.choice(topics), hostile(rng), qos=1, retain=rng.random() < 0.1, properties=mark
        )
        if i % PAUSE_EVERY == PAUSE_EVERY - 1 or i == cases - 1:
            await asyncio.to_thread(info.wait_for_publish, 10)
            await asyncio.sleep(0)  # let the loop take the events the gateway posted
        if i == min(500, cases // 10):
            gc.collect()
            base = rss_kb()  # after warm-up: caches, paho buffers and the allocator's arenas are filled
    # Proof both sides took every payload: a last valid state must arrive after the junk.
    fuzzer.publish("zigbee2mqtt/kitchen_light", b'{"state":"OFF","brightness":1}', qos=1, properties=mark)
    if not await _until(lambda: (side.gateway.state_of("kitchen_light") or {}).get("brightness") == 1, 30):
        crashes += 1
        print("payloads: the valid state after the flood did not arrive within 30 s", file=sys.stderr)
    gc.collect()
    growth = max(0, rss_kb() - base)
    if not side.gateway.connected:
        crashes += 1
        print("payloads: the gateway was disconnected after the flood", file=sys.stderr)
    side.stop()
    # Both restart over whatever junk is retained, then a spoken command must still work.
    side = Side(registry, config, bus)
    if not await side.start():
        crashes += 1
        print("payloads: the restart over the retained junk failed", file=sys.stderr)
    fuzzer.publish("zigbee2mqtt/kitchen_light/availability", b"online", qos=1, retain=True, properties=mark)
    await asyncio.sleep(0.3)
    seen = watch.commands_seen
    said = await side.say("Turn on the kitchen light.")
    if not await _until(lambda: side.simulator.state_of("kitchen_light").get("state") == "ON", 5):
        crashes += 1
        print(f"payloads: the command after the flood was not carried out ({said!r})", file=sys.stderr)
    # The watcher has its own connection: under load it may see that command after the device did.
    await _until(lambda: watch.commands_seen > seen, 5)
    # A command while the broker is frozen must never arrive, however long it stays frozen.
    before = watch.commands_seen
    os.kill(proc.pid, signal.SIGSTOP)
    try:
        await side.say("Turn off the kitchen light.")
        await asyncio.sleep(config.command_expiry_s + 1.5)
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    await asyncio.sleep(1.5)
    stale = watch.commands_seen - before
    crashes += side.failures
    side.stop()
    fuzzer.loop_stop()
    fuzzer.disconnect()
    watch.close()
    if watch.forbidden:
        print(f"payloads: forbidden publishes, first {watch.forbidden[:3]}", file=sys.stderr)
    return {
        "tries": cases,
        "tracebacks": counts.tracebacks,
        "crashes": crashes,
        "forbidden_publishes": len(watch.forbidden),
        "stale_deliveries": stale,
        "rss_growth_kb": growth,
    }


def run(seed: int, cases: int) -> dict[str, int]:
    counts = Counts()
    root = logging.getLogger()
    old_level, old_hook = root.level, threading.excepthook
    root.addHandler(counts)
    root.setLevel(logging.INFO)
    threading.excepthook = counts.thread_hook
    try:
        with broker() as (proc, port):
            result = asyncio.run(_exercise(seed, cases, port, proc, counts))
    finally:
        root.removeHandler(counts)
        root.setLevel(old_level)
        threading.excepthook = old_hook
    if counts.first:
        print(f"payloads: first traceback: {counts.first}", file=sys.stderr)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--cases", type=int, default=10_000)
    args = parser.parse_args()
    start = time.monotonic()
    result = run(args.seed, args.cases)
    print(json.dumps(result), f"({time.monotonic() - start:.1f} s)")


if __name__ == "__main__":
    main()
