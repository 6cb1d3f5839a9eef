"""Reliability family `surrogates`: a lone surrogate on every input path, and Home Assistant still hears.

The real program (`voiced run --text -`, as tests/plans_home.py starts it) with its web server,
Home Assistant's entities (node_id `bench`) and discovery of Home Assistant configs on, its devices
simulated by `voiced simulate` on a private Mosquitto. Each case puts lone surrogates (as JSON
escapes; on the broker and stdin also as the UTF-8 bytes of a surrogate, which are not UTF-8) on
one input path, round-robin:

- `say`, `vibe`, `tasks`: POST /api/say, /api/vibe, /api/tasks with one in the text;
- `confirm`: a waiting task confirmed (or refused) with one in its notes;
- `typed`: a line on the daemon's stdin with a surrogate's bytes;
- `device_state`: a device's state (or availability) payload with one in a value or a key;
- `discovery`: a Home Assistant discovery config with one in its name and ids, retained on the
  broker, then a state on the device's own topic with one too;
- `ha_command`: Home Assistant's birth message and voiced's mute switch with one.

After each case a plain typed turn must reach Home Assistant: its transcript on
`voiced/bench/transcript` and "thinking" on `voiced/bench/state`; and /metrics must count no
background task failure, /healthz no degraded task.

Counts: tries (cases), dead_tasks (task failures /metrics counted: a background task that raised),
still_degraded (cases after which /healthz was not ok), entities_silent (cases after which the
turn's transcript or state did not reach Home Assistant within WITHIN_S), entities_publishing
(cases after which they did), responses_5xx and no_response (the HTTP cases), tracebacks (in the
daemon's log), crashes (the daemon died or did not exit 0); cleaned_transcripts: /api/say turns
whose own transcript reached Home Assistant with the surrogate as U+FFFD.
Run: python bench/reliability/surrogates.py [--seed N] [--cases N]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
# Run as a script, this folder comes first on sys.path, and its http.py would shadow the stdlib's.
sys.path[:] = [str(REPO), *(p for p in sys.path if Path(p or ".").resolve() != HERE)]

import httpx  # noqa: E402

from tests.conftest import Broker  # noqa: E402
from tests.home import SimulatedHome  # noqa: E402
from tests.plans_home import TypedDaemon, plan_config  # noqa: E402
from tests.test_ha_entities import Retained  # noqa: E402

NODE = "bench"
WITHIN_S = 15.0
PATHS = ("say", "vibe", "tasks", "confirm", "typed", "device_state", "discovery", "ha_command")
HIGH, LOW = ("\ud800", "\udbff", "\ud83d"), ("\udc00", "\udfff", "\ude00")  # never a high then a low
WORDS = ("turn on the kitchen light", "something calm", "play some jazz", "dim the bedroom light", "")
WAITING_PLAN = "in 10 minutes turn off the bedroom light"  # read back: waits for a confirmation
STATE_TOPICS = (
    "zigbee2mqtt/kitchen_light",
    "zigbee2mqtt/bedroom_light",
    "zigbee2mqtt/diffuser",
    "voiced/music/state",
    "zigbee2mqtt/kitchen_light/availability",
    "voiced/music/availability",
)
FAILURES = ("dead_tasks", "still_degraded", "entities_silent", "responses_5xx", "no_response")


def _lone(rng: random.Random) -> str:
    """One to three lone surrogates: all high or all low halves, so no two make a valid pair."""
    half = rng.choice((HIGH, LOW))
    return "".join(rng.choice(half) for _ in range(rng.randint(1, 3)))


def _text(rng: random.Random, words: str | None = None) -> str:
    """Words with lone surrogates before, inside or after them."""
    words = rng.choice(WORDS) if words is None else words
    cut = rng.randint(0, len(words))
    lone = _lone(rng)
    return rng.choice([f"{lone} {words}", f"{words[:cut]}{lone}{words[cut:]}", f"{words} {lone}"])


def _payload(value: object, rng: random.Random) -> bytes:
    """JSON with lone surrogates as escapes (legal JSON), or as their UTF-8 bytes (not UTF-8)."""
    text = json.dumps(value)  # ASCII: a lone surrogate as "\ud800"
    if rng.random() < 0.5:
        return text.encode()
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


class _Run:
    def __init__(self, daemon: TypedDaemon, home: SimulatedHome, ha: Retained, rng: random.Random) -> None:
        self.daemon, self.home, self.ha, self.rng = daemon, home, ha, rng
        self.web = httpx.Client(base_url=f"http://127.0.0.1:{daemon.port}", timeout=60)
        self.states: list[bytes] = []
        ha.client.message_callback_add(
            f"voiced/{NODE}/state", lambda _c, _u, m: self.states.append(m.payload)
        )
        self.counts = dict.fromkeys(("tries", *FAILURES, "entities_publishing", "cleaned_transcripts"), 0)
        self.counts.update(responses_2xx=0, responses_4xx=0)

    def post(self, path: str, value: object) -> httpx.Response | None:
        try:
            # As escapes: the bytes of a surrogate are not UTF-8, a 400 (bench/reliability/http.py)
            response = self.web.post(path, content=json.dumps(value).encode())
        except httpx.TransportError:
            self.counts["no_response"] += 1
            return None
        key = f"responses_{response.status_code // 100}xx"
        self.counts[key] = self.counts.get(key, 0) + 1
        if response.status_code >= 500:
            print(f"  {path}: {response.status_code} {response.text[:200]!r}", flush=True)
        return response

    def say_on_broker(self, topic: str, payload: bytes, retain: bool = False) -> None:
        self.ha.client.publish(topic, payload, qos=1, retain=retain).wait_for_publish(5)

    def task(self) -> str:
        created = self.web.post("/api/tasks", json={"requirement": WAITING_PLAN})
        return str(created.json().get("id", "plan-0")) if created.status_code == 201 else "plan-0"

    def case(self, case: int, path: str) -> None:
        rng = self.rng
        if path == "say":
            response = self.post("/api/say", {"text": _text(rng)})
            if response is not None and response.status_code == 200:
                topic = f"voiced/{NODE}/transcript"
                self.counts["cleaned_transcripts"] += _until(
                    lambda: "\ufffd" in self.ha.last.get(topic, b"").decode("utf-8", "replace"), 5.0
                )
        elif path == "vibe":
            self.post("/api/vibe", {"request": _text(rng, rng.choice(("something calm", "a cosy evening")))})
            self.web.request("DELETE", "/api/vibe")
        elif path == "tasks":
            self.post("/api/tasks", {"requirement": _text(rng, WAITING_PLAN), _lone(rng): _lone(rng)})
        elif path == "confirm":
            notes = {"approved": rng.random() < 0.5, "user_notes": _text(rng, "only if it is dark")}
            self.post(f"/api/tasks/{self.task()}/confirm", notes)
        elif path == "typed":
            line = _text(rng).encode("utf-8", "surrogatepass") + b"\n"
            stdin = self.daemon.proc.stdin
            assert stdin is not None
            stdin.flush()
            stdin.buffer.write(line)
            stdin.buffer.flush()
        elif path == "device_state":
            topic = rng.choice(STATE_TOPICS)
            value: dict[str, object] = rng.choice(
                [
                    {"state": _text(rng, "ON")},
                    {"state": "ON", _lone(rng): 1},
                    {"state": "OFF", "brightness": 100, "color_mode": _lone(rng)},
                    {"volume": 30, "title": _text(rng, "Blue")},
                ]
            )
            if topic.endswith("/availability"):
                value = {"state": _text(rng, "online")}
            self.say_on_broker(topic, _payload(value, rng), retain=rng.random() < 0.3)
        elif path == "discovery":
            ident = f"bench_plug_{case}"
            config = {
                "name": _text(rng, f"plug {case}"),
                "unique_id": f"{ident}{_lone(rng)}",
                "command_topic": f"bench/plug{case}/set",
                "state_topic": f"bench/plug{case}",
                "device": {"name": _text(rng, "socket"), "identifiers": [_lone(rng)]},
            }
            self.say_on_broker(f"homeassistant/switch/{ident}/config", _payload(config, rng), retain=True)
            self.say_on_broker(f"bench/plug{case}", _text(rng, "ON").encode("utf-8", "surrogatepass"))
        else:  # ha_command
            topic = rng.choice(["homeassistant/status", f"voiced/{NODE}/mute/set"])
            word = "online" if topic.endswith("status") else rng.choice(["ON", "OFF"])
            self.say_on_broker(topic, _text(rng, word).encode("utf-8", "surrogatepass"))
            self.say_on_broker(f"voiced/{NODE}/mute/set", b"OFF")  # the probe turn needs an open ear

    def still_publishing(self, case: int) -> bool:
        """A plain typed turn reaches Home Assistant: its transcript, and "thinking" as its state."""
        probe = f"what time is it {case}"
        before = len(self.states)
        self.daemon.say(probe)
        topic = f"voiced/{NODE}/transcript"
        heard = _until(lambda: self.ha.last.get(topic, b"") == probe.encode(), WITHIN_S)
        thought = _until(lambda: b"thinking" in self.states[before:], WITHIN_S)
        return heard and thought

    def task_failures(self) -> dict[str, float]:
        failures = {}
        for line in self.web.get("/metrics").text.splitlines():
            if line.startswith("voiced_task_failures_total{"):
                name, value = line.rsplit(" ", 1)
                failures[name[len("voiced_task_failures_total") :]] = float(value)
        return failures


def _until(check: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _cases(run: _Run, rounds: int) -> None:
    for case in range(rounds):
        path = PATHS[case % len(PATHS)]
        run.counts["tries"] += 1
        run.case(case, path)
        if run.still_publishing(case):
            run.counts["entities_publishing"] += 1
        else:
            run.counts["entities_silent"] += 1
            print(f"  case {case} ({path}): Home Assistant's entities did not hear the next turn", flush=True)
        failed = run.task_failures()
        if sum(failed.values()) > run.counts["dead_tasks"]:
            print(f"  case {case} ({path}): background tasks failed: {failed}", flush=True)
        run.counts["dead_tasks"] = round(sum(failed.values()))
        health = run.web.get("/healthz").json()
        if not health["ok"]:
            run.counts["still_degraded"] += 1
            print(f"  case {case} ({path}): degraded: {health['degraded']}", flush=True)
        if run.daemon.proc.poll() is not None:
            break


def run(seed: int, cases: int) -> dict[str, int]:
    """`cases` // 5 cases (at least two on each path), round-robin over the paths."""
    rng = random.Random(seed)
    rounds = max(2 * len(PATHS), cases // 5)
    with tempfile.TemporaryDirectory(prefix="voiced-bench-surrogates-") as folder:
        workdir = Path(folder)
        broker = Broker(workdir)
        broker.start()
        try:
            config = plan_config(
                workdir,
                broker.port,
                homeassistant={"discovery": True, "node_id": NODE},
                devices={"discovery": ["homeassistant"]},
            )
            with SimulatedHome(config, broker.port) as home:
                ha = Retained(broker)
                daemon = TypedDaemon(config, workdir)
                go = _Run(daemon, home, ha, rng)
                try:
                    if not _until(lambda: f"voiced/{NODE}/transcript" in ha.last, WITHIN_S):
                        print("  Home Assistant's entities never appeared", flush=True)
                    _cases(go, rounds)
                    alive = daemon.proc.poll() is None
                finally:
                    go.web.close()
                    code = daemon.stop()
                    ha.close()
        finally:
            broker.stop()
    counts = go.counts
    counts["crashes"] = int(not alive) + int(code != 0)
    marks = ("Traceback (most recent", "Exception in ASGI application")
    counts["tracebacks"] = sum("".join(daemon.output).count(mark) for mark in marks)
    if counts["tracebacks"] or counts["crashes"]:
        print(daemon.report(), flush=True)
    print(
        f"  {counts['tries']} cases over {len(PATHS)} paths: {counts['dead_tasks']} dead tasks, "
        f"entities still publishing after {counts['entities_publishing']} of {counts['tries']}",
        flush=True,
    )
    return counts


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--cases", type=int, default=1000)
    args = parser.parse_args()
    print(json.dumps(run(args.seed, args.cases)))
