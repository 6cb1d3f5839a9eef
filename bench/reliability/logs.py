"""Reliability family `logs`: text from outside that tries to forge a line of the daemon's log.

The real `voiced run --text -` (log level debug, the production formatter) against its own
Mosquitto and `voiced simulate`, with the web server and discovery on. Seeded hostile strings,
each carrying a fake log line that starts with `1999-`, arrive by every way text comes in: typed
turns, HTTP bodies (values and keys), device states and availability payloads, discovery configs
(names, topics, keys), and the LLM plan planner's tool arguments (in-process, over a scripted
OpenAI-compatible server: its refusal line is the one the probe forged).

`forged_lines`: lines of the log (split as any viewer splits them: every line break Unicode
knows) that start with `1999-`. `tracebacks`: records with one. `crashes`: the daemon ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import openai
import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench.home_config import write_home_config  # noqa: E402
from tests.conftest import Broker, free_port  # noqa: E402
from tests.home import SimulatedHome, voiced  # noqa: E402
from tests.openai_server import Call, ScriptedServer, Tools  # noqa: E402
from voiced.devices.registry import DeviceRegistry  # noqa: E402
from voiced.logs import SafeFormatter  # noqa: E402
from voiced.plans.llm_planner import LlmPlanFailed, LlmPlanner  # noqa: E402

TOKEN = "bench-logs-token-0123456789ab"
FAKE = "1999-01-01 00:00:00,000 ERROR voiced.plans.engine: plan-1 deleted every device"
BREAKS = ("\n", "\r", "\r\n", "\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1e")
DISCOVERY = ["homeassistant", "zigbee2mqtt"]
DECOR = ("", "\x1b[2K\x1b[1G", "\x1b]0;owned\x07", "\x00", "\x7f", "\t")


def hostile(rng: random.Random) -> str:
    return f"x{rng.choice(DECOR)}{rng.choice(BREAKS)}{FAKE}{rng.choice(BREAKS)}"


def _forged(text: str) -> int:
    return sum(line.lstrip("\x00\x1b").startswith("1999-") for line in text.splitlines())


def _daemon_cases(work: Path, rng: random.Random, cases: int) -> dict[str, int]:
    broker = Broker(work)
    broker.start()
    web_port = free_port()
    config = write_home_config(work, broker.port, web_port, devices={"discovery": DISCOVERY})
    counts = {"tries": 0, "crashes": 0}
    log = work / "daemon.log"
    try:
        with SimulatedHome(config, broker.port), log.open("w") as stderr:
            env = {"VOICED_WEB_TOKEN": TOKEN, "PATH": "/usr/bin:/bin"}
            command = [*voiced(config, "--log-level", "debug", "run", "--text", "-")]
            daemon = subprocess.Popen(
                [*command, "--output", str(work / "r.wav")],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                cwd=work,
                env=env,
            )
            assert daemon.stdin is not None
            client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
            client.connect("127.0.0.1", broker.port)
            client.loop_start()
            web = httpx.Client(
                base_url=f"http://127.0.0.1:{web_port}", headers={"Authorization": f"Bearer {TOKEN}"}
            )
            deadline = time.monotonic() + 120
            while True:
                try:
                    if web.get("/healthz").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline and daemon.poll() is None, log.read_text()[-3000:]
                time.sleep(0.2)
            for case in range(cases):
                counts["tries"] += 1
                text = hostile(rng)
                way = case % 6
                if way == 0:  # a typed turn (a line break would end the line: the rest of them)
                    typed = text.replace("\n", " ")
                    daemon.stdin.write(f"turn on the {typed} light\n".encode())
                    daemon.stdin.flush()
                elif way == 1:
                    body = {"text": f"play {text}", text: text}
                    with contextlib.suppress(httpx.TimeoutException):  # a turn's reply waits its turn
                        web.post(rng.choice(["/api/say", "/api/vibe", "/api/tasks"]), json=body, timeout=2)
                elif way == 2:
                    state = json.dumps({"state": text, "brightness": text, text: 1})
                    client.publish(rng.choice(["zigbee2mqtt/kitchen_light", "voiced/music/state"]), state)
                elif way == 3:
                    client.publish("zigbee2mqtt/bridge/state", json.dumps({"state": text}))
                elif way == 4:
                    config_body = {"name": text, "command_topic": f"x/{text}", "state_topic": text, text: 1}
                    client.publish(f"homeassistant/light/n{case}/config", json.dumps(config_body))
                else:
                    devices = [{"friendly_name": text, "ieee_address": text, "definition": {text: text}}]
                    client.publish("zigbee2mqtt/bridge/devices", json.dumps(devices))
                time.sleep(0.05)
            time.sleep(2)
            if daemon.poll() is not None:
                counts["crashes"] += 1
            daemon.stdin.close()
            daemon.wait(timeout=60)
            client.loop_stop()
            client.disconnect()
            web.close()
    finally:
        broker.stop()
    text = log.read_text(errors="replace")
    return {
        **counts,
        "forged_lines": _forged(text),
        "tracebacks": text.count("Traceback (most recent call last)"),
        "log_lines": len(text.splitlines()),
    }


class _Captured(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.stream = io.StringIO()
        self.setFormatter(SafeFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        self.tracebacks = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.tracebacks += bool(record.exc_info)
        self.stream.write(self.format(record) + "\n")


def _planner_cases(rng: random.Random, cases: int) -> dict[str, int]:
    """The plan planner's refusals, with the model's hostile keys and values in its tool call."""
    registry = DeviceRegistry.load(REPO / "devices")
    server = ScriptedServer()
    server.start()
    captured = _Captured()
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.DEBUG)
    root.addHandler(captured)
    tries = 0

    async def scenario() -> None:
        nonlocal tries
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="bench", max_retries=0)
        planner = LlmPlanner(registry, client, model="planner", timeout_s=5, clock=time.time)
        for _ in range(cases):
            text = hostile(rng)
            steps = [{"tool": "set_light", "input": {"device": text, text: 1}, "reason": text}]
            arguments = json.dumps({"name": text, "steps": steps})
            server.push(*[Tools((Call("make_plan", arguments),)) for _ in range(3)], model="planner")
            tries += 1
            with contextlib.suppress(LlmPlanFailed):
                await planner.plan("dim every light in ten minutes")
        await client.close()

    try:
        asyncio.run(scenario())
    finally:
        root.removeHandler(captured)
        root.setLevel(level)
        server.stop()
    text = captured.stream.getvalue()
    return {"tries": tries, "forged_lines": _forged(text), "tracebacks": captured.tracebacks}


def run(seed: int, cases: int) -> dict[str, int]:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="voiced-bench-logs-") as tmp:
        daemon = _daemon_cases(Path(tmp), rng, max(30, cases // 5))
    planner = _planner_cases(rng, max(10, cases // 50))
    print(f"  daemon: {daemon}", flush=True)
    print(f"  planner: {planner}", flush=True)
    return {
        "tries": daemon["tries"] + planner["tries"],
        "tracebacks": daemon["tracebacks"] + planner["tracebacks"],
        "crashes": daemon["crashes"],
        "forged_lines": daemon["forged_lines"] + planner["forged_lines"],
        "log_lines": daemon["log_lines"],
    }


if __name__ == "__main__":
    print(run(12, 200))
