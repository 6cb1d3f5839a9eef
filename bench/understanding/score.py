"""Score the local agent on a corpus of sentences by what it really publishes on a broker.

Shared by the benchmark (bench/understanding.py) and the CI test (tests/test_understanding_corpus.py).
For every case: the device simulator is put into the case's starting states (commands on the
command topics, then the gateway's view of each state is waited for), the agent is built with
the case's room, `understand(text)` is timed, its reply is carried out by
`voiced.mouth.local_agent.carry_out` through the real gateway, and a separate MQTT client records
every publish on the command topics. The recorded (device, JSON payload) pairs are compared with
the case's `expect` as multisets:

- exact: what was published is exactly what was expected (for `expect: []`: nothing published);
- miss: nothing was published although something was expected;
- wrong: anything else (a wrong, partial or extra command, or anything for `expect: []`);
- error: the agent raised.

A fence makes the recording exact without long sleeps: after the agent's publishes are
acknowledged by the broker, the recorder publishes a marker to itself; the broker forwards in
order, so every earlier command is in once the marker is back (plus a short quiet window for a
publish the agent did not wait for).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import math
import socket
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import paho.mqtt.client as mqtt
import yaml
from paho.mqtt.enums import CallbackAPIVersion

from voiced.bus import EventBus
from voiced.config import MqttConfig, SafetyConfig
from voiced.devices.actions import DeviceActions
from voiced.devices.gateway import DeviceGateway
from voiced.devices.model import Device, DiffuserDevice, LightDevice
from voiced.devices.registry import DeviceRegistry
from voiced.devices.simulator import DeviceSimulator, initial_state
from voiced.mouth.agent import AgentReply
from voiced.mouth.intents import LocalIntentAgent
from voiced.mouth.local_agent import carry_out
from voiced.vibe.presets import preset_moods

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DEVICES = REPO / "devices"
CORPORA = {
    "ha": HERE / "corpus_ha.yaml",
    "ours": HERE / "corpus_ours.yaml",
    "ha_ood": HERE / "corpus_ha_ood.yaml",  # kinds the home lacks: nothing may act
}
BRIGHTNESS_STEP_PCT = 25
FENCE_TOPIC = "voiced-bench/understanding/fence"
WAIT_S = 5.0  # for anything the broker or the simulator should do in milliseconds
QUIET_S = 0.01  # after the fence and the last command: a publish the agent did not wait for
QUIET_MAX_S = 0.5

Outcome = Literal["exact", "miss", "wrong", "error"]
Command = tuple[str, dict[str, Any]]  # (device, JSON payload)
AgentFactory = Callable[[DeviceRegistry, Callable[[str], dict[str, Any] | None], str | None], Any]

log = logging.getLogger(__name__)


# -- the corpus ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    text: str
    family: str
    corpus: str  # "ha" or "ours"
    source: str
    expect: tuple[Command, ...]
    room: str | None = None
    states: dict[str, dict[str, Any]] = field(default_factory=dict)


def _no_booleans(value: Any, where: str) -> None:
    """YAML reads a plain ON/OFF as a boolean; no payload or state of ours holds one."""
    if isinstance(value, bool):
        raise ValueError(f'{where}: a boolean; write "ON"/"OFF" in quotes')
    if isinstance(value, dict):
        for key, item in value.items():
            _no_booleans(item, f"{where}.{key}")
    if isinstance(value, list):
        for i, item in enumerate(value):
            _no_booleans(item, f"{where}[{i}]")


def load_corpus(path: Path, corpus: str, registry: DeviceRegistry | None = None) -> list[Case]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    names = {d.name for d in registry} if registry is not None else None
    cases: list[Case] = []
    for i, raw in enumerate(data["cases"]):
        where = f"{path.name} case {i + 1} ({raw.get('text')!r})"
        unknown = set(raw) - {"text", "family", "source", "room", "states", "expect"}
        if unknown:
            raise ValueError(f"{where}: unknown fields {sorted(unknown)}")
        expect = tuple((str(e["device"]), dict(e["payload"])) for e in raw["expect"])
        states = {str(k): dict(v) for k, v in (raw.get("states") or {}).items()}
        _no_booleans({"expect": [p for _, p in expect], "states": states}, where)
        if names is not None:
            bad = {d for d, _ in expect} | set(states)
            if bad - names:
                raise ValueError(f"{where}: no such device {sorted(bad - names)}")
        cases.append(
            Case(
                text=str(raw["text"]),
                family=str(raw["family"]),
                corpus=corpus,
                source=str(raw.get("source", corpus)),
                expect=expect,
                room=raw.get("room"),
                states=states,
            )
        )
    return cases


def load(which: str = "all", registry: DeviceRegistry | None = None) -> list[Case]:
    """`which`: "ha", "ours" or "all"."""
    names = list(CORPORA) if which == "all" else [which]
    return [case for name in names for case in load_corpus(CORPORA[name], name, registry)]


# -- scoring ------------------------------------------------------------------------------------------


def _key(command: Command) -> str:
    return f"{command[0]} {json.dumps(command[1], sort_keys=True)}"


def classify(expect: Iterable[Command], published: Iterable[Command], error: str | None = None) -> Outcome:
    if error is not None:
        return "error"
    wanted, got = Counter(map(_key, expect)), Counter(map(_key, published))
    if wanted == got:
        return "exact"
    return "miss" if not got else "wrong"


@dataclass
class Result:
    case: Case
    outcome: Outcome
    published: list[Command]
    understand_ms: float | None
    said: str = ""
    error: str | None = None
    room_passed: bool = True  # False: the case has a room the agent could not be given

    def as_dict(self) -> dict[str, Any]:
        return {
            "text": self.case.text,
            "corpus": self.case.corpus,
            "family": self.case.family,
            "source": self.case.source,
            "room": self.case.room,
            "outcome": self.outcome,
            "expect": [{"device": d, "payload": p} for d, p in self.case.expect],
            "published": [{"device": d, "payload": p} for d, p in self.published],
            "understand_ms": self.understand_ms,
            "said": self.said,
            "error": self.error,
        }


# -- the home: broker client, simulator, gateway --------------------------------------------------------


class Recorder:
    """A plain paho client: records every command on the devices' command topics, sets up states."""

    def __init__(self, port: int, topics: dict[str, str]) -> None:
        self._topics = topics  # command topic -> device
        self._lock = threading.Lock()
        self._seen: list[tuple[float, Command]] = []
        self._fences: dict[str, threading.Event] = {}
        self._subscribed = threading.Event()
        self._client = mqtt.Client(
            callback_api_version=CallbackAPIVersion.VERSION2,
            protocol=mqtt.MQTTv5,
            client_id=f"voiced-bench-recorder-{uuid.uuid4().hex[:8]}",
        )
        self._client.on_connect = self._on_connect
        self._client.on_subscribe = lambda *_: self._subscribed.set()
        self._client.on_message = self._on_message
        self._client.connect("127.0.0.1", port)
        sock = self._client.socket()
        if isinstance(sock, socket.socket):  # no Nagle: our acks and publishes would wait ~40 ms
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._client.loop_start()
        if not self._subscribed.wait(WAIT_S):
            self.close()
            raise TimeoutError(f"the recorder was not subscribed within {WAIT_S} s")

    def _on_connect(self, client: mqtt.Client, *_args: Any) -> None:
        client.subscribe([(topic, 1) for topic in [*self._topics, FENCE_TOPIC]])

    def _on_message(self, _client: Any, _userdata: Any, message: mqtt.MQTTMessage) -> None:
        if message.topic == FENCE_TOPIC:
            with self._lock:
                fence = self._fences.get(message.payload.decode())
            if fence is not None:
                fence.set()
            return
        device = self._topics.get(message.topic)
        if device is None:
            return
        try:
            payload = json.loads(message.payload)
        except (UnicodeDecodeError, json.JSONDecodeError):
            payload = {"<not JSON>": message.payload.decode(errors="replace")}
        with self._lock:
            self._seen.append((time.monotonic(), (device, payload)))

    def publish(self, topic: str, payload: dict[str, Any]) -> None:
        info = self._client.publish(topic, json.dumps(payload), qos=1)
        info.wait_for_publish(WAIT_S)
        if not info.is_published():
            raise TimeoutError(f"no PUBACK for the set-up command on {topic} within {WAIT_S} s")

    async def collect(self, *, quiet: bool = True) -> list[Command]:
        """Every command since the last call: up to a fence, then (`quiet`) until a short quiet window."""
        token = uuid.uuid4().hex
        fence = threading.Event()
        with self._lock:
            self._fences[token] = fence
        try:
            self._client.publish(FENCE_TOPIC, token, qos=1)
            if not await asyncio.to_thread(fence.wait, WAIT_S):
                raise TimeoutError(f"the recorder's fence did not come back within {WAIT_S} s")
        finally:
            with self._lock:
                self._fences.pop(token, None)
        deadline = time.monotonic() + QUIET_MAX_S
        while quiet and time.monotonic() < deadline:
            with self._lock:
                last = self._seen[-1][0] if self._seen else 0.0
            silent_for = time.monotonic() - last
            if silent_for >= QUIET_S:
                break
            await asyncio.sleep(QUIET_S - silent_for)
        with self._lock:
            got = [command for _, command in self._seen]
            self._seen.clear()
        return got

    def close(self) -> None:
        self._client.loop_stop()
        self._client.disconnect()


def baseline(device: Device) -> dict[str, Any]:
    """Where every case starts: the simulator's own initial state (no values that are None)."""
    return {k: v for k, v in initial_state(device).items() if v is not None}


def setup_payload(device: Device, state: dict[str, Any]) -> dict[str, Any]:
    """The command that puts a simulated device into `state`."""
    if isinstance(device, LightDevice):
        return {k: v for k, v in state.items() if k != "color_mode"}  # reported, never commanded
    if isinstance(device, DiffuserDevice):
        return dict(state)
    payload = {k: v for k, v in state.items() if k != "state"}
    if "state" in state:
        payload["action"] = {"playing": "play", "paused": "pause", "stopped": "stop"}[state["state"]]
    return payload


def _matches(state: dict[str, Any] | None, wanted: dict[str, Any]) -> bool:
    return state is not None and all(state.get(k) == v for k, v in wanted.items())


def takes_room() -> bool:
    """Whether the agent can be told the daemon's own room (a keyword being added to it)."""
    return "room" in inspect.signature(LocalIntentAgent).parameters


def build_agent(
    registry: DeviceRegistry, states: Callable[[str], dict[str, Any] | None], room: str | None
) -> Any:
    kwargs: dict[str, Any] = {}
    if room is not None and takes_room():
        kwargs["room"] = room
    return LocalIntentAgent(registry, states, BRIGHTNESS_STEP_PCT, moods=preset_moods(), **kwargs)


class FreshAgents:
    """An agent with no conversation for every case: no "it" or question asked back carries over.

    Building one takes ~0.4 s (templates compiled, the fuzzy matcher warmed up), too slow for
    hundreds of cases: one agent per room is built once and told to forget before each case.
    """

    def __init__(self) -> None:
        self._agents: dict[tuple[int, int, str | None], Any] = {}

    def __call__(
        self, registry: DeviceRegistry, states: Callable[[str], dict[str, Any] | None], room: str | None
    ) -> Any:
        key = (id(registry), id(states), room)
        if key not in self._agents:
            self._agents[key] = build_agent(registry, states, room)
        agent = self._agents[key]
        agent.forget()
        return agent


class Home:
    """A broker's worth of home: the simulator, the gateway the agent reads and writes through, a recorder."""

    def __init__(self, port: int, registry: DeviceRegistry | None = None) -> None:
        self.port = port
        self.registry = registry or DeviceRegistry.load(DEVICES)

    async def __aenter__(self) -> Home:
        tag = uuid.uuid4().hex[:8]
        self.bus = EventBus()
        self.bus.bind_loop(asyncio.get_running_loop())
        self.simulator = DeviceSimulator(self.registry, self._mqtt(f"voiced-bench-sim-{tag}"))
        self.gateway: DeviceGateway | None = None
        self.recorder: Recorder | None = None
        self._touched: set[str] = set()  # devices the last case published to
        try:
            self.simulator.start()
            if not await self.simulator.wait_connected(WAIT_S):
                raise TimeoutError(f"the simulator did not connect within {WAIT_S} s")
            # The rate limit is lifted (hundreds of cases in seconds would trip it); the caps stay.
            safety = SafetyConfig(max_commands=1000, per_seconds=0.001)
            self.gateway = DeviceGateway(self.registry, self._mqtt(f"voiced-bench-{tag}"), self.bus, safety)
            self.gateway.start()
            if not await self.gateway.wait_connected(WAIT_S):
                raise TimeoutError(f"the gateway did not connect within {WAIT_S} s")
            self.actions = DeviceActions(self.gateway, self.bus)
            self.states = self.gateway.state_of  # one object: FreshAgents keys its templates on it
            self.recorder = Recorder(self.port, {d.command_topic: d.name for d in self.registry})
            await self.until(lambda: all(self._state(d.name) for d in self.registry), "the first states")
        except BaseException:
            await self.__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(self, *_exc: object) -> None:
        if self.recorder is not None:
            self.recorder.close()
        if self.gateway is not None:
            self.gateway.stop()
        self.simulator.stop()

    def _mqtt(self, client_id: str) -> MqttConfig:
        return MqttConfig(port=self.port, client_id=client_id, connect_timeout_s=WAIT_S)

    def _state(self, name: str) -> dict[str, Any] | None:
        assert self.gateway is not None
        return self.gateway.state_of(name)

    async def until(
        self, condition: Callable[[], bool], what: str, now: Callable[[], str] = lambda: ""
    ) -> None:
        deadline = time.monotonic() + WAIT_S
        while not condition():
            if time.monotonic() > deadline:
                raise TimeoutError(f"timed out after {WAIT_S} s waiting for {what} {now()}")
            await asyncio.sleep(0.002)

    async def prepare(self, states: dict[str, dict[str, Any]]) -> None:
        """Every device into its baseline state overlaid with `states`, as the gateway sees it."""
        assert self.recorder is not None
        wanted = {d.name: {**baseline(d), **states.get(d.name, {})} for d in self.registry}
        touched, self._touched = self._touched, set()
        for device in self.registry:
            # A device the last case commanded may not have reported yet: set it up regardless.
            if device.name in touched or not _matches(self._state(device.name), wanted[device.name]):
                self.recorder.publish(device.command_topic, setup_payload(device, wanted[device.name]))
        await self.until(
            lambda: all(_matches(self._state(n), s) for n, s in wanted.items()),
            f"the states {wanted}",
            lambda: f"they are {[self._state(n) for n in wanted]}",
        )
        await self.recorder.collect(quiet=False)  # our own set-up commands, acknowledged: not the agent's

    def touched(self, devices: Iterable[str]) -> None:
        """Devices commanded since the last `prepare`: the next one sets them up whatever they show."""
        self._touched |= set(devices)

    async def run(self, turn: int, case: Case, make_agent: AgentFactory) -> Result:
        assert self.recorder is not None
        await self.prepare(case.states)
        agent = make_agent(self.registry, self.states, case.room)
        elapsed: float | None = None
        said, error = "", None
        try:
            start = time.perf_counter()
            reply = agent.understand(case.text)
            if inspect.isawaitable(reply):
                reply = await reply
            elapsed = (time.perf_counter() - start) * 1000
            assert isinstance(reply, AgentReply), f"understand() returned {type(reply).__name__}"
            done = await carry_out(turn, reply, self.actions)
            said = done.said
        except Exception as exc:
            log.exception("case %r", case.text)
            error = f"{type(exc).__name__}: {exc}"
        published = await self.recorder.collect()
        self._touched = {device for device, _payload in published}
        return Result(
            case,
            classify(case.expect, published, error),
            published,
            elapsed,
            said,
            error,
            room_passed=case.room is None or takes_room(),
        )


async def run_cases(
    cases: Sequence[Case],
    port: int,
    *,
    registry: DeviceRegistry | None = None,
    make_agent: AgentFactory | None = None,
    on_result: Callable[[Result], None] | None = None,
) -> list[Result]:
    """Every case against the broker on 127.0.0.1:`port` (which must be running)."""
    """`make_agent(registry, states, room)`: the agent for one case (default: a fresh local agent)."""
    agents = make_agent or FreshAgents()
    results: list[Result] = []
    async with Home(port, registry) as home:
        for turn, case in enumerate(cases, start=1):
            result = await home.run(turn, case, agents)
            results.append(result)
            if on_result is not None:
                on_result(result)
    return results


# -- figures --------------------------------------------------------------------------------------------

OUTCOMES: tuple[Outcome, ...] = ("exact", "miss", "wrong", "error")


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest rank; nan for no values."""
    if not values:
        return math.nan
    ranked = sorted(values)
    return ranked[max(0, math.ceil(p / 100 * len(ranked)) - 1)]


def exact_rate(results: Iterable[Result]) -> float:
    results = list(results)
    return sum(r.outcome == "exact" for r in results) / len(results) if results else math.nan


def summary(results: Sequence[Result]) -> dict[str, Any]:
    """Counts per corpus and family, totals, and understanding time."""
    out: dict[str, Any] = {}
    for corpus in dict.fromkeys(r.case.corpus for r in results):
        mine = [r for r in results if r.case.corpus == corpus]
        families: dict[str, Counter[str]] = defaultdict(Counter)
        for r in mine:
            families[r.case.family][r.outcome] += 1
        out[corpus] = {
            "families": {
                f: {"n": sum(c.values()), **{o: c[o] for o in OUTCOMES}} for f, c in families.items()
            },
            "n": len(mine),
            **{o: sum(r.outcome == o for r in mine) for o in OUTCOMES},
            "exact_rate": exact_rate(mine),
        }
    times = [r.understand_ms for r in results if r.understand_ms is not None]
    out["understand_ms"] = {"n": len(times), "p50": percentile(times, 50), "p95": percentile(times, 95)}
    out["rooms_not_passed"] = sum(not r.room_passed for r in results)
    return out


TITLES = {
    "ha": "Home Assistant's sentences (tests/en, mapped onto our devices)",
    "ours": "voiced's own cases",
    "ha_ood": "Home Assistant's sentences for kinds this home lacks (fans, covers, climate, locks, ...)",
}


HEAD_ROW = "  {:20} {:>5} {:>6} {:>7} {:>5} {:>6} {:>6}"


def _commands(commands: Sequence[Command]) -> str:
    if not commands:
        return "nothing"
    return "; ".join(f"{d} {json.dumps(p, separators=(',', ':'))}" for d, p in commands)


def report(results: Sequence[Result], *, verbose: bool = False) -> str:
    figures = summary(results)
    lines: list[str] = []
    for corpus in dict.fromkeys(r.case.corpus for r in results):
        data = figures[corpus]
        lines += ["", f"{TITLES.get(corpus, corpus)}: {data['n']} cases"]
        lines.append(HEAD_ROW.format("family", "n", "exact", "exact%", "miss", "wrong", "error"))
        rows = sorted(data["families"].items())
        for family, c in [*rows, ("TOTAL", data)]:
            pct = f"{100 * c['exact'] / c['n']:.1f}%" if c["n"] else "-"
            lines.append(HEAD_ROW.format(family, c["n"], c["exact"], pct, c["miss"], c["wrong"], c["error"]))
    timing = figures["understand_ms"]
    lines += [
        "",
        f"understand() per utterance: p50 {timing['p50']:.2f} ms, p95 {timing['p95']:.2f} ms"
        f" over {timing['n']} utterances",
    ]
    if figures["rooms_not_passed"]:
        lines.append(
            f"note: the agent takes no room yet; {figures['rooms_not_passed']} cases ran without theirs"
        )
    shown = [r for r in results if verbose or r.outcome != "exact"]
    if shown:
        lines += ["", "every case" if verbose else "wrong, missed and failed cases"]
    for r in shown:
        room = f" (room: {r.case.room})" if r.case.room else ""
        lines.append(f"  {r.outcome.upper():5} [{r.case.corpus} {r.case.family}] {r.case.text!r}{room}")
        if r.outcome != "exact" or verbose:
            lines.append(f"        expected:  {_commands(r.case.expect)}")
            lines.append(f"        published: {_commands(r.published)}")
        if r.error:
            lines.append(f"        error: {r.error}")
        if verbose and r.said:
            lines.append(f"        said: {r.said}")
    return "\n".join(lines)
