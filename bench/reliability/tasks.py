"""Reliability family `tasks`: each background task of a running daemon killed by an exception.

The whole daemon runs in this process (`run_daemon`, as `voiced run --text -` runs it) against
its own Mosquitto and the device simulator, with the web server, Home Assistant's entities,
discovery and the brain on; the bench holds its `Supervision` (RunOptions) to reach the tasks.
Each case makes one task fail with a seeded exception (`Supervision.crash`), types a turn, and
checks that the task came back and does its work again:

- `ha-entities`: the turn's transcript reaches Home Assistant's topic;
- `web-hub`: the turn reaches a live SSE stream and /metrics counts it;
- `assistant-state`: the assistant's state goes through "thinking" again on that topic;
- `discovery`: a device announced on the broker is learned (a `home_learned` event);
- `rehearsal`, `systemd-notify`: running again (or finished, for the rehearsal).

Counted: `not_recovered` (a check above failed within 15 s), `dead_tasks` (not running when it
should be), `still_degraded` (/healthz not ok once the task has run `healthy_after_s`),
`crashes` (the daemon stopped), `tracebacks` (records with one, besides the supervisor's own line
for each injected failure), `recovery_ms_max` (crash to the task's work seen again).
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import random
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench.home_config import write_home_config  # noqa: E402
from tests.conftest import Broker, free_port  # noqa: E402
from tests.test_ha_entities import Retained  # noqa: E402
from voiced.app import RunOptions, run_daemon  # noqa: E402
from voiced.audio.sinks import WavFileSink  # noqa: E402
from voiced.cli import check_all  # noqa: E402
from voiced.devices.simulator import DeviceSimulator  # noqa: E402
from voiced.ear.typed import TypedTurns  # noqa: E402
from voiced.engines import load_engines  # noqa: E402
from voiced.supervision import Supervision  # noqa: E402
from voiced.systemd import NotifySettings  # noqa: E402
from voiced.web.server import bind  # noqa: E402

TOKEN = "bench-tasks-token-0123456789"
HEALTHY_AFTER_S = 1.0
WITHIN_S = 15.0
FAULTS = (RuntimeError, ValueError, OSError, KeyError, TypeError, UnicodeError, AttributeError)
TURNS = ("turn on the kitchen light", "turn off the kitchen light", "what time is it")


class _Tracebacks(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.escaped: list[str] = []
        self.supervised = 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.name == "voiced.supervision":
            self.supervised += 1  # the one line each injected failure must give
        elif record.exc_info:
            self.escaped.append(f"{record.name}: {record.getMessage()}")


class _Systemd:
    """systemd's notify socket: what the daemon tells it (READY, STATUS, WATCHDOG, STOPPING)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.told: list[str] = []
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._socket.bind(str(path))
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while True:
            self.told.extend(self._socket.recv(4096).decode().splitlines())

    def said_after(self, start: int, line: str) -> Any:
        return lambda: line in self.told[start:]


class _Stream:
    """The daemon's SSE stream, read in a thread: the kinds of event seen, in order."""

    def __init__(self, url: str) -> None:
        self.kinds: list[str] = []
        self._url = url
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        with httpx.stream("GET", self._url, timeout=None) as response:
            for line in response.iter_lines():
                if line.startswith("event: "):
                    self.kinds.append(line[7:])


def _home(workdir: Path, broker_port: int, web_port: int) -> Path:
    devices = {"discovery": ["homeassistant"]}
    return write_home_config(
        workdir, broker_port, web_port, devices=devices, homeassistant={"discovery": True, "node_id": "bench"}
    )


async def _until(check: Any, timeout: float = WITHIN_S) -> bool:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


async def _scenario(workdir: Path, broker: Broker, rounds: int, rng: random.Random) -> dict[str, int]:
    web_port = free_port()
    config, registry = check_all(
        _home(workdir, broker.port, web_port), {"VOICED_WEB_TOKEN": TOKEN}, models=False
    )
    simulator = DeviceSimulator(registry, config.mqtt)
    simulator.start()
    engines = await asyncio.to_thread(load_engines, config, registry, whisper=False)
    read_end, write_end = os.pipe()
    source = TypedTurns.from_stream(io.FileIO(read_end, "rb"))
    sink = WavFileSink(workdir / "replies.wav", engines.synthesizer.sample_rate)
    supervision = Supervision(backoff_s=(0.2, 0.5, 1.0), healthy_after_s=HEALTHY_AFTER_S)
    systemd = _Systemd(workdir / "notify.sock")
    options = RunOptions(
        web_socket=bind(config.web),
        supervision=supervision,
        notify=NotifySettings(socket_path=str(systemd.path), watchdog_s=2.0),
    )
    daemon = asyncio.create_task(run_daemon(config, registry, engines, source, sink, options), name="daemon")
    ha = Retained(broker)
    states: list[bytes] = []
    ha.client.message_callback_add("voiced/bench/state", lambda _c, _u, m: states.append(bytes(m.payload)))
    base = f"http://127.0.0.1:{web_port}"
    headers = {"Authorization": f"Bearer {TOKEN}"}
    counts = dict.fromkeys(("tries", "not_recovered", "dead_tasks", "still_degraded", "crashes"), 0)
    slowest = 0.0
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=10) as web:

        async def up() -> bool:
            try:
                return (await web.get("/healthz")).status_code == 200
            except httpx.TransportError:
                return False

        deadline = time.monotonic() + 180
        while not await up():
            assert time.monotonic() < deadline and not daemon.done(), "the daemon did not start"
            await asyncio.sleep(0.2)
        stream = _Stream(f"{base}/api/events?access_token={TOKEN}")
        await asyncio.sleep(0.5)
        for case in range(rounds):
            name = supervision.names[case % len(supervision.names)]
            counts["tries"] += 1
            fault = rng.choice(FAULTS)(f"bench case {case}: {name}")
            turns_before = _turns(await web.get("/metrics"))
            seen_before, states_before, told_before = len(stream.kinds), len(states), len(systemd.told)
            started = time.monotonic()
            supervision.crash(name, fault)
            text = f"{rng.choice(TURNS)} {case}" if name == "ha-entities" else rng.choice(TURNS)
            os.write(write_end, (text + "\n").encode())
            if name == "discovery":
                topic = f"homeassistant/switch/bench_plug_{case}/config"
                body = {
                    "name": f"plug {case}",
                    "command_topic": f"bench/plug{case}/set",
                    "state_topic": f"bench/plug{case}",
                    "unique_id": f"p{case}",
                }
                ha.say(topic, json.dumps(body), retain=True)
            check = _back(name, supervision, ha, text, stream, seen_before, states, states_before)
            if name == "systemd-notify":
                check = systemd.said_after(told_before, "STATUS=thinking")
            if not await _until(check):
                counts["not_recovered"] += 1
                print(f"  case {case}: {name} did not come back", flush=True)
            slowest = max(slowest, time.monotonic() - started)
            if name == "web-hub" and not await _counted(web, turns_before):
                counts["not_recovered"] += 1
                print(f"  case {case}: /metrics did not count the turn", flush=True)
            await asyncio.sleep(HEALTHY_AFTER_S + 0.5)
            if not supervision.running(name) and name != "rehearsal":
                counts["dead_tasks"] += 1
            health = (await web.get("/healthz")).json()
            if not health["ok"]:
                counts["still_degraded"] += 1
                print(f"  case {case}: still degraded: {health['degraded']}", flush=True)
            if daemon.done():
                counts["crashes"] += 1
                break
    counts["told_stopping_early"] = sum("STOPPING=1" in m for m in systemd.told)
    os.close(write_end)
    try:
        await asyncio.wait_for(daemon, 60)
    except Exception as exc:  # a daemon that fails is the bench's finding, not its end
        print(f"  the daemon ended with {type(exc).__name__}: {exc}", flush=True)
        counts["crashes"] += 1
    ha.close()
    simulator.stop()
    return {**counts, "recovery_ms_max": round(slowest * 1000)}


def _back(
    name: str,
    supervision: Supervision,
    ha: Retained,
    text: str,
    stream: _Stream,
    seen_before: int,
    states: list[bytes],
    states_before: int,
) -> Any:
    """What shows that the task `name` is back at work after this case's turn."""
    if name == "ha-entities":
        return lambda: ha.last.get("voiced/bench/transcript", b"").decode() == text
    if name == "web-hub":
        return lambda: "turn_finished" in stream.kinds[seen_before:]
    if name == "assistant-state":
        return lambda: b"thinking" in states[states_before:]
    if name == "discovery":
        return lambda: "home_learned" in stream.kinds[seen_before:]
    return lambda: supervision.running(name)


def _turns(response: httpx.Response) -> float:
    """Turns taken, every room's (the counter is labelled by room)."""
    lines = response.text.splitlines()
    return sum(float(line.split()[-1]) for line in lines if line.startswith("voiced_turns_total"))


async def _counted(web: httpx.AsyncClient, before: float) -> bool:
    deadline = time.monotonic() + WITHIN_S
    while _turns(await web.get("/metrics")) <= before:
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.1)
    return True


def run(seed: int, cases: int) -> dict[str, int]:
    """`cases` // 25 crashes (at least one of each task), round-robin over the tasks."""
    rng = random.Random(seed)
    tracebacks = _Tracebacks()
    root = logging.getLogger()
    root.addHandler(tracebacks)
    try:
        with tempfile.TemporaryDirectory(prefix="voiced-bench-tasks-") as tmp:
            broker = Broker(Path(tmp))
            broker.start()
            try:
                counts = asyncio.run(_scenario(Path(tmp), broker, max(7, cases // 25), rng))
            finally:
                broker.stop()
    finally:
        root.removeHandler(tracebacks)
    for line in tracebacks.escaped[:5]:
        print(f"  traceback: {line}", flush=True)
    return {
        **counts,
        "tracebacks": len(tracebacks.escaped),
        "failures_logged": tracebacks.supervised,
    }


if __name__ == "__main__":
    print(run(12, 200))
