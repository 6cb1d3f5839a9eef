"""Reliability family `http`: hostile requests and slow clients against the daemon's web API.

The real program (`voiced run --text -`, as tests/plans_home.py starts it) with its web server on
a free port, its devices simulated by `voiced simulate` on a private Mosquitto. Seeded hostile
bodies on every endpoint that reads one (bench/reliability/_http_bodies.py), hostile query strings
and path parameters, raw bytes no HTTP library sends; meanwhile half-open and slow clients, and an
SSE client that must stay connected. Afterwards, once the rate limit's window has passed with no
command sent, a typed turn must still be answered and switch a light.

Counts: tries (requests and slow clients), tracebacks (in the daemon's log: "Traceback", uvicorn's
"Exception in ASGI application", our last-resort "web: … failed:" line), crashes (the daemon died,
did not exit 0, or the turn afterwards was not carried out), responses_2xx/4xx/5xx, no_response
(a request unanswered within STALL_S), closed_unanswered (raw bytes the server closed on without
a status line), half_open_held_30s and slow_held_30s (clients the server had not closed after
30 s), sse_cut (the SSE stream ended before the run did).
Run: python bench/reliability/http.py [--seed N] [--cases N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
# Run as a script, this folder comes first on sys.path, and this file would shadow the stdlib's http.
sys.path[:] = [str(REPO), *(p for p in sys.path if Path(p or ".").resolve() != HERE)]

import httpx  # noqa: E402

from bench.reliability._http_bodies import ENDPOINTS, RAW_REQUESTS, body, query  # noqa: E402
from tests.conftest import Broker  # noqa: E402
from tests.home import SimulatedHome  # noqa: E402
from tests.plans_home import TypedDaemon, plan_config  # noqa: E402
from voiced.config import SafetyConfig  # noqa: E402

STALL_S = 60.0  # a typed turn is answered in well under a second; a minute is a hang
HELD_S = 30.0
RATE_WINDOW_S = SafetyConfig().per_seconds  # the gateway's rate limit, as plan_config leaves it
QUIET_WITHIN_S = 60.0
KITCHEN_OFF = ("zigbee2mqtt/kitchen_light/set", {"state": "OFF"})
WAITING_PLAN = "in 10 minutes turn off the bedroom light"  # read back: waits for a confirmation
HALF_OPEN = [
    b"",
    b"G",
    b"GET /api/devi",
    b"GET /healthz HTTP/1.1\r\n",
    b"GET /healthz HTTP/1.1\r\nHost: x\r\nAccept: */*",
    b'POST /api/say HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n\r\n{"text": "tu',
    b'POST /api/mute HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"mu',
    b"POST /api/tasks HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n",
]
SLOW = [  # (sent at once, then one byte of this every half second)
    (b"", b"GET /healthz HTTP/1.1\r\nX-Slow: " + b"a" * 10_000),
    (b"GET /api/turns HTTP/1.1\r\n", b"X-Slow: b\r\n" * 1000),
    (b"POST /api/say HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n", b'{"text": "' + b"c" * 4990),
    (b"POST /api/tasks HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", b"1\r\nx\r\n" * 1000),
]


def _counts() -> dict[str, int]:
    names = ("tries", "tracebacks", "crashes", "responses_2xx", "responses_4xx", "responses_5xx")
    return dict.fromkeys((*names, "no_response", "half_open_held_30s", "slow_held_30s", "sse_cut"), 0)


async def _held(port: int, first: bytes, trickle: bytes = b"") -> float:
    """Seconds until the server closed the connection (HELD_S + 5 when it never did)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    started = time.monotonic()
    try:
        writer.write(first)

        async def drip() -> None:
            for byte in trickle:
                await asyncio.sleep(0.5)
                writer.write(bytes([byte]))

        dripping = asyncio.create_task(drip())
        try:
            while await asyncio.wait_for(reader.read(4096), HELD_S + 5 - (time.monotonic() - started)):
                pass
        except (TimeoutError, ConnectionError):
            pass
        finally:
            dripping.cancel()
        return time.monotonic() - started
    finally:
        writer.close()


async def _raw(port: int, request: bytes) -> int | None:
    """The status the server answered raw bytes with (0: closed without one; None: no answer)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        line = await asyncio.wait_for(reader.readline(), STALL_S)
        parts = line.split()
        return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    except ConnectionError:
        return 0
    except TimeoutError:
        return None
    finally:
        writer.close()


async def _sse(base: str, stop: asyncio.Event) -> bool:
    """True when the stream stayed open until `stop`."""
    client = httpx.AsyncClient(base_url=base, timeout=httpx.Timeout(10, read=None))
    async with client, client.stream("GET", "/api/events") as stream:

        async def drain() -> None:
            async for _line in stream.aiter_lines():
                pass  # read, or the hub lets a client 256 events behind go

        reading, waiting = asyncio.create_task(drain()), asyncio.create_task(stop.wait())
        done, _ = await asyncio.wait({reading, waiting}, return_when=asyncio.FIRST_COMPLETED)
        reading.cancel()
        waiting.cancel()
        return reading not in done


async def _waiting_task(client: httpx.AsyncClient) -> str:
    try:
        created = await client.post("/api/tasks", content=json.dumps({"requirement": WAITING_PLAN}))
    except httpx.HTTPError:
        return "plan-0"  # the hostile requests go on; a dead daemon is counted at the end
    return str(created.json().get("id", "plan-0")) if created.status_code == 201 else "plan-0"


async def _hostile(base: str, port: int, rng: random.Random, cases: int, counts: dict[str, int]) -> None:
    async with httpx.AsyncClient(base_url=base, timeout=STALL_S) as client:
        task = await _waiting_task(client)
        for case in range(cases):
            if case % 50 == 49:
                task = await _waiting_task(client)  # confirm and cancel need one that waits
            counts["tries"] += 1
            pick = rng.random()
            if pick < 0.97 - len(RAW_REQUESTS) / max(cases, 1):
                status = await _one(client, rng, task, pick < 0.75)
            else:
                status = await _raw(port, rng.choice(RAW_REQUESTS))
            if status is None:
                counts["no_response"] += 1
            elif status == 0:
                counts["closed_unanswered"] = counts.get("closed_unanswered", 0) + 1
            else:  # 2xx: a hostile text cleaned and acted on; 4xx: refused, saying why
                key = f"responses_{status // 100}xx"
                counts[key] = counts.get(key, 0) + 1


async def _one(client: httpx.AsyncClient, rng: random.Random, task: str, with_body: bool) -> int | None:
    try:
        if with_body:
            method, path, fields = rng.choice(ENDPOINTS)
            _family, content = body(fields, rng)
            headers = {"content-type": "application/json"}
            response = await client.request(method, path.format(task=task), content=content, headers=headers)
            return response.status_code
        path, texts = query(rng, task)
        raw = {name: value.encode("latin-1") for name, value in texts.items()}  # as a header carries "²"
        async with client.stream("GET", path, headers=raw) as streamed:
            return streamed.status_code  # an SSE stream is not read: its status is enough
    except httpx.TransportError:  # a timeout, or the connection dropped without an answer
        return None


async def _attack(port: int, rng: random.Random, cases: int, counts: dict[str, int]) -> bool:
    """The hostile requests with the slow clients alongside; True when the SSE stream stayed up."""
    base = f"http://127.0.0.1:{port}"
    stop = asyncio.Event()
    sse = asyncio.create_task(_sse(base, stop))
    await asyncio.sleep(0.5)
    slow = [_held(port, first) for first in HALF_OPEN] + [_held(port, first, drip) for first, drip in SLOW]
    counts["tries"] += len(slow)
    held = asyncio.gather(*slow)
    await _hostile(base, port, rng, cases, counts)
    times = await held
    counts["half_open_held_30s"] = sum(seconds >= HELD_S for seconds in times[: len(HALF_OPEN)])
    counts["slow_held_30s"] = sum(seconds >= HELD_S for seconds in times[len(HALF_OPEN) :])
    print(f"  half-open and slow clients closed after {[round(t, 1) for t in times]} s", flush=True)
    stop.set()
    return await sse


def _quiet(home: SimulatedHome, window_s: float, within_s: float) -> bool:
    """Wait until no device command has gone out for `window_s`; False if they still go after `within_s`."""
    started = last = time.monotonic()
    while time.monotonic() - last < window_s:
        if time.monotonic() - started > within_s:
            return False
        if home.published():
            last = time.monotonic()
        time.sleep(0.2)
    return True


def _still_works(daemon: TypedDaemon, home: SimulatedHome) -> bool:
    """A typed turn afterwards is answered and switches the light.

    The attack's accepted "turn on the kitchen light…" bodies may have used up the rate limit (one
    for every device: 30 commands in 10 s), which would rightly refuse this turn too. So it waits
    until no command has gone out for a whole window first (within QUIET_WITHIN_S: commands still
    going out after the attack are a failure of their own)."""
    rate_limited = sum(
        "rate limit" in str(e.get("reason", "")) for e in daemon.events() if e["kind"] == "command_refused"
    )
    print(f"  commands the rate limit refused during the attack: {rate_limited}", flush=True)
    httpx.post(f"http://127.0.0.1:{daemon.port}/api/mute", json={"muted": False}, timeout=10)
    if not _quiet(home, RATE_WINDOW_S + 0.5, QUIET_WITHIN_S):
        print(f"  device commands still going out {QUIET_WITHIN_S:g} s after the attack", flush=True)
        return False
    reply = daemon.reply_to("turn off the kitchen light")
    time.sleep(0.5)
    sent = home.published()
    if "Turning off the kitchen light." in reply and KITCHEN_OFF in sent:
        return True
    print(f"  the turn afterwards: said {reply!r}, sent {sent}", flush=True)
    return False


def _failures(output: list[str]) -> str:
    """The daemon's failed requests and tracebacks, each with what followed it."""
    marks = ("Traceback (most recent", "Exception in ASGI application")
    shown = [
        n
        for n, line in enumerate(output)
        if any(mark in line for mark in marks) or ("web: " in line and " failed: " in line)
    ]
    return "\n".join("".join(output[n : n + 25]) for n in shown[:5])


def run(seed: int, cases: int) -> dict[str, int]:
    rng = random.Random(seed)
    counts = _counts()
    with tempfile.TemporaryDirectory() as folder:
        workdir = Path(folder)
        broker = Broker(workdir)
        broker.start()
        try:
            config = plan_config(workdir, broker.port)
            with SimulatedHome(config, broker.port) as home:
                daemon = TypedDaemon(config, workdir)
                try:
                    counts["sse_cut"] = int(not asyncio.run(_attack(daemon.port, rng, cases, counts)))
                    alive = daemon.proc.poll() is None and _still_works(daemon, home)
                finally:
                    code = daemon.stop()
                counts["crashes"] += int(not alive) + int(code != 0)
                log = "".join(daemon.output)
                counts["tracebacks"] = sum(
                    log.count(mark) for mark in ("Traceback (most recent", "Exception in ASGI application")
                ) + sum("web: " in line and " failed: " in line for line in daemon.output)
                if counts["tracebacks"] or counts["crashes"]:
                    print(_failures(daemon.output) or daemon.report(), flush=True)
        finally:
            broker.stop()
    return counts


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--cases", type=int, default=1000)
    args = parser.parse_args()
    print(json.dumps(run(args.seed, args.cases)))
