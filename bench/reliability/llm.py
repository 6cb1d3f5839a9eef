"""Reliability family `llm`: the model side of the daemon under hostile or broken input.

- LLM endpoints that hang, stall after one token or one sentence, trickle a token or a byte every
  2 s, or drop mid-stream: the main agent (shipped timeouts) and the scene planner (its
  plan_timeout_s, 3 s here). `late_answers` counts replies first heard after 5 s (planner: a plan
  later than its deadline + 1 s); `slowest_answer_ms` is the slowest.
- Hostile tool arguments from the model (superscript digits, 5,000-digit numbers, nesting up to
  100,000 deep, up to 10 MB, injected device names, control characters, broken JSON): through the
  ToolBox on a real Mosquitto, a tenth through the LLM agent over HTTP and a tenth through the
  planner. `forbidden_publishes`: anything on the broker outside the declared devices' command
  topics, or retained; `unbounded_errors`: a tool result or a later request that echoes too much.
- Corrupt state files (truncated, random bytes over a page or the header, another schema, a view,
  junk bodies, zero bytes, a directory): two starts in a row; a crash is a start that fails
  without a clear ConfigError.
Tracebacks: exceptions escaping a case, and log records carrying one.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import random
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import openai

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench.reliability.llm_parts.cases import (  # noqa: E402
    hostile_arguments,
    planner_stalls,
    reply_stalls,
    state_damage,
)
from tests.conftest import Broker  # noqa: E402
from tests.openai_server import Call, ScriptedServer, Text, Tools  # noqa: E402
from voiced.brain.store import StateStore  # noqa: E402
from voiced.bus import EventBus  # noqa: E402
from voiced.config import LlmConfig, MqttConfig, VibeConfig  # noqa: E402
from voiced.devices.actions import DeviceActions  # noqa: E402
from voiced.devices.gateway import DeviceGateway  # noqa: E402
from voiced.devices.registry import DeviceRegistry  # noqa: E402
from voiced.devices.z2m import bridge_topic, get_topic  # noqa: E402
from voiced.errors import ConfigError  # noqa: E402
from voiced.mouth.hybrid import LOST_THREAD_APOLOGY, UNAVAILABLE_APOLOGY, ApologizingAgent  # noqa: E402
from voiced.mouth.llm import LlmAgent  # noqa: E402
from voiced.mouth.tools import ToolBox  # noqa: E402
from voiced.vibe.llm_planner import LlmPlanner  # noqa: E402
from voiced.vibe.presets import PresetPlanner  # noqa: E402

ANSWER_WITHIN_MS = 5000
PLAN_TIMEOUT_S = 3.0
LONGEST_RESULT = 600  # a tool result the model reads back
LONGEST_REQUEST = 60_000  # any request after a hostile call
MB = 1024 * 1024


class _Tracebacks(logging.Handler):
    """Counts log records that carry a traceback; keeps the expected warnings off the console."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            self.count += 1


def _rss_kb() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4


def run(seed: int, cases: int) -> dict[str, int]:
    counts = dict.fromkeys(("tries", "tracebacks", "crashes", "forbidden_publishes", "rss_growth_kb"), 0) | {
        "late_answers": 0,
        "slowest_answer_ms": 0,
        "unbounded_errors": 0,
    }
    handler = _Tracebacks()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        with tempfile.TemporaryDirectory(prefix="reliability-llm-") as tmp:
            asyncio.run(_run(random.Random(seed), cases, Path(tmp), counts))
    finally:
        root.removeHandler(handler)
    counts["tracebacks"] += handler.count
    return counts


async def _run(rng: random.Random, cases: int, tmp: Path, counts: dict[str, int]) -> None:
    registry = DeviceRegistry.load(REPO / "devices")
    stalls = min(cases, len(reply_stalls()) + len(planner_stalls()))
    damaged = (cases - stalls) * 3 // 10
    hostile = cases - stalls - damaged
    server = ScriptedServer()
    server.start()
    broker = Broker(tmp)
    broker.start()
    try:
        await _stalls(registry, server, stalls, counts)
        await _hostile(rng, registry, server, broker, hostile, counts)
        _damaged(rng, tmp, damaged, counts)
    finally:
        # The OpenAI SDK closes a client it finds dropped from its finalizer, as a task on the running
        # loop: collected after asyncio.run has ended, that task fails ("Event loop is closed") and
        # logs a traceback at random. Collect here, while the loop still runs, and let them close.
        gc.collect()
        await asyncio.sleep(0.1)
        server.stop()
        broker.stop()


def _failed(counts: dict[str, int], what: str, exc: BaseException) -> None:
    counts["tracebacks"] += 1
    counts["crashes"] += 1
    print(f"llm family: {what}: {type(exc).__name__}: {str(exc)[:200]}", file=sys.stderr)


async def _stalls(
    registry: DeviceRegistry, server: ScriptedServer, total: int, counts: dict[str, int]
) -> None:
    """All at once (each on its own model name): the wall time is the slowest, about 5 s."""
    replies, plans = reply_stalls(), planner_stalls()
    jobs = []
    for number, (name, step, expected) in enumerate(replies[:total]):
        model = f"stall-{number}"
        server.push(step, model=model)
        jobs.append(_stalled_reply(registry, server.base_url, model, name, expected, counts))
    for number, (name, step) in enumerate(plans[: max(0, total - len(replies))]):
        model = f"plan-stall-{number}"
        server.push(step, model=model)
        jobs.append(_stalled_plan(registry, server.base_url, model, name, counts))
    await asyncio.gather(*jobs)


async def _stalled_reply(
    registry: DeviceRegistry, url: str, model: str, name: str, sentence: str | None, counts: dict[str, int]
) -> None:
    counts["tries"] += 1
    bus = EventBus()
    actions = DeviceActions(DeviceGateway(registry, MqttConfig(port=1), bus), bus)  # never started
    agent = ApologizingAgent(LlmAgent(LlmConfig(base_url=url, model=model), registry, actions))
    expected = [sentence, LOST_THREAD_APOLOGY] if sentence else [UNAVAILABLE_APOLOGY]
    pieces: list[str] = []
    try:
        async with asyncio.timeout(30):
            started = time.monotonic()
            async for piece in agent.reply(1, "tell me something"):
                pieces.append(piece)
                if piece == sentence:
                    started = time.monotonic()  # from the stall on: the apology's delay
                else:
                    _answered(counts, (time.monotonic() - started) * 1000)
        if pieces != expected:
            counts["crashes"] += 1
            print(f"llm family: stall {name}: heard {pieces!r}", file=sys.stderr)
    except Exception as exc:  # counting what escapes is the point
        _failed(counts, f"stall {name}", exc)
    finally:
        await agent.aclose()


def _answered(counts: dict[str, int], elapsed_ms: float, limit_ms: float = ANSWER_WITHIN_MS) -> None:
    counts["slowest_answer_ms"] = max(counts["slowest_answer_ms"], round(elapsed_ms))
    counts["late_answers"] += elapsed_ms > limit_ms


async def _stalled_plan(
    registry: DeviceRegistry, url: str, model: str, name: str, counts: dict[str, int]
) -> None:
    counts["tries"] += 1
    planner = _planner(registry, url, VibeConfig(plan_timeout_s=PLAN_TIMEOUT_S, planner_model=model))
    try:
        started = time.monotonic()
        plan = await asyncio.wait_for(planner.plan("help me relax"), 60)
        _answered(counts, (time.monotonic() - started) * 1000, (PLAN_TIMEOUT_S + 1) * 1000)
        if plan.source != "preset" or not plan.steps:
            counts["crashes"] += 1
    except Exception as exc:
        _failed(counts, f"planner stall {name}", exc)
    finally:
        await planner.aclose()


async def _hostile(
    rng: random.Random,
    registry: DeviceRegistry,
    server: ScriptedServer,
    broker: Broker,
    total: int,
    counts: dict[str, int],
) -> None:
    allowed = {device.command_topic for device in registry}
    allowed |= {t for d in registry if (t := get_topic(d))}  # asking Zigbee2MQTT for a state
    config = broker.mqtt_config("reliability-llm")
    forbidden = _watch(broker.port, allowed, config.availability_topic, counts)
    bus = EventBus()
    bus.bind_loop(asyncio.get_running_loop())
    gateway = DeviceGateway(registry, config, bus)
    gateway.start()
    try:
        if not await gateway.wait_connected(10):
            raise RuntimeError("the gateway did not connect to the bench's broker")
        actions = DeviceActions(gateway, bus)
        tools = ToolBox(registry, actions)
        agent = LlmAgent(LlmConfig(base_url=server.base_url, model="hostile"), registry, actions)
        planner = _planner(registry, server.base_url, VibeConfig(planner_model="hostile-plan"))
        baseline = 0
        for number in range(total):
            if number == min(20, total // 2):
                baseline = _rss_kb()  # after warm-up: imports and first allocations are not growth
            tool, arguments = hostile_arguments(rng)
            counts["tries"] += 1
            try:
                route = number % 10
                if route == 0:
                    await _through_agent(agent, server, number, tool, arguments, counts)
                elif route == 5:
                    await _through_planner(planner, server, tool, arguments, counts)
                else:
                    result = await tools.run(number, tool, arguments)
                    counts["unbounded_errors"] += not _bounded(result.content)
            except Exception as exc:
                _failed(counts, f"hostile {tool} ({len(arguments)} chars)", exc)
            server.requests.clear()  # the scripted server's record is not the daemon's memory
        if baseline:
            counts["rss_growth_kb"] = max(0, _rss_kb() - baseline)
        await agent.aclose()
        await planner.aclose()
    finally:
        gateway.stop()
        await asyncio.sleep(0.3)  # the watcher sees the last publishes
        forbidden.set()


def _bounded(content: str) -> bool:
    return len(content) < LONGEST_RESULT and not any(ord(c) < 32 or c == "\u202e" for c in content)


async def _through_agent(
    agent: LlmAgent, server: ScriptedServer, turn: int, tool: str, arguments: str, counts: dict[str, int]
) -> None:
    server.push(Tools((Call(tool, arguments, piece=MB),)), Text("Done."), model="hostile")
    said = "".join([piece async for piece in agent.reply(turn, "do it")])
    if said != "Done.":
        counts["crashes"] += 1
    if len(json.dumps(server.requests[-1])) > LONGEST_REQUEST:
        counts["unbounded_errors"] += 1


def _planner(registry: DeviceRegistry, url: str, vibe: VibeConfig) -> LlmPlanner:
    """One client per planner, as the daemon has: a client each time would measure httpx, not us."""
    client = openai.AsyncOpenAI(base_url=url, api_key="not-needed", max_retries=0)
    presets = PresetPlanner(None, registry, "relax")
    return LlmPlanner(LlmConfig(base_url=url), vibe, registry, presets, client)


async def _through_planner(
    planner: LlmPlanner, server: ScriptedServer, tool: str, arguments: str, counts: dict[str, int]
) -> None:
    server.push(Tools((Call(tool, arguments),)), Tools(()), model="hostile-plan")
    plan = await asyncio.wait_for(planner.plan("make it cosy"), 30)
    if not plan.steps:
        counts["crashes"] += 1
    if len(json.dumps(server.requests[-1])) > LONGEST_REQUEST:
        counts["unbounded_errors"] += 1


def _watch(port: int, allowed: set[str], own: str, counts: dict[str, int]) -> threading.Event:
    """A client on `#` counting publishes outside `allowed`, and any retained one (but `own`, the
    daemon's retained online/offline)."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    done = threading.Event()
    client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    ready = threading.Event()

    def on_message(_client: Any, _userdata: Any, message: mqtt.MQTTMessage) -> None:
        if message.topic in (own, bridge_topic()):  # the simulator's retained bridge state is Z2M's own
            return
        if message.topic not in allowed or message.retain:
            counts["forbidden_publishes"] += 1

    client.on_message = on_message
    client.on_subscribe = lambda *_args: ready.set()
    client.connect("127.0.0.1", port)
    client.loop_start()
    client.subscribe("#", qos=1)
    ready.wait(5)

    def stop() -> None:
        done.wait()
        client.disconnect()
        client.loop_stop()

    threading.Thread(target=stop, name="reliability-llm-watch", daemon=True).start()
    return done


def _damaged(rng: random.Random, tmp: Path, total: int, counts: dict[str, int]) -> None:
    for number in range(total):
        counts["tries"] += 1
        folder = tmp / f"state-{number}"
        folder.mkdir()
        path = folder / "state.sqlite"
        name = state_damage(rng, path)
        try:
            for _start in range(2):  # the second start must work too: no crash loop
                StateStore(path).open_session(new=False)
        except ConfigError:
            if name != "directory":
                counts["crashes"] += 1
        except Exception as exc:
            _failed(counts, f"state file {name}", exc)


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--cases", type=int, default=500)
    args = parser.parse_args()
    started = time.monotonic()
    for key, value in run(args.seed, args.cases).items():
        print(f"{key:22} {value}")
    print(f"{'wall_s':22} {time.monotonic() - started:.1f}")


if __name__ == "__main__":
    main()
