"""The web API on a real uvicorn server (free port), driven over real HTTP with httpx.

What the daemon would do is injected: a real bus, the repo's devices, and a scripted turn-taker
that publishes the events a turn publishes.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from tests.conftest import free_port
from voiced.assistant_state import publish_assistant_state
from voiced.bus import EventBus
from voiced.config import WebConfig
from voiced.devices.registry import DeviceRegistry
from voiced.ear.mute import MuteSwitch
from voiced.events import AgentText, AssistantState, CommandSent, Transcript, TurnFinished
from voiced.tasks import cancel_and_wait
from voiced.web.api import Controls
from voiced.web.server import WebServer, bind

TIMEOUT = httpx.Timeout(10.0)
TOKEN = "s3cret-s3cret-s3cret"  # 16+ characters, as any token beyond loopback must be


class Devices:
    """The gateway's read side, as the web sees it."""

    connected = True

    def __init__(self) -> None:
        self.states: dict[str, dict[str, Any]] = {"kitchen_light": {"state": "ON", "brightness": 200}}

    def state_of(self, name: str) -> dict[str, Any] | None:
        return self.states.get(name)

    def availability(self, name: str) -> bool | None:
        return {"bedroom_light": False, "kitchen_light": True}.get(name)


class ScriptedTurns:
    """Takes a typed turn the way the daemon does: its events on the bus, then TurnFinished."""

    def __init__(self, bus: EventBus) -> None:
        self.bus = bus
        self.taken: list[str] = []
        self.delay_s = 0.05  # from the turn taken to its events

    def __call__(self, text: str) -> int:
        self.taken.append(text)
        turn = 1_000_000 + len(self.taken)
        asyncio.get_running_loop().call_later(self.delay_s, self._answer, turn, text)
        return turn

    def _answer(self, turn: int, text: str) -> None:
        self.bus.publish(Transcript(turn=turn, text=text))
        self.bus.publish(AgentText(turn=turn, text="Kitchen light on.", understood=True))
        self.bus.publish(
            CommandSent(turn=turn, device="kitchen_light", topic="t/set", payload='{"state":"ON"}')
        )
        self.bus.publish(TurnFinished(turn=turn))


Scenario = Callable[[httpx.AsyncClient, WebServer, EventBus, ScriptedTurns], Awaitable[None]]


def serve(
    registry: DeviceRegistry, scenario: Scenario, *, config: WebConfig | None = None, state: Any = None
) -> None:
    async def main() -> None:
        bus = EventBus()
        bus.bind_loop(asyncio.get_running_loop())
        web_config = config or WebConfig(port=free_port())
        mute = MuteSwitch(bus)
        turns = ScriptedTurns(bus)
        presence = asyncio.create_task(
            publish_assistant_state(bus, bus.subscribe("state")), name="assistant-state"
        )
        controls = Controls(
            bus=bus,
            registry=registry,
            devices=Devices(),
            take_turn=turns,
            mute=mute.set,
            is_muted=mute,
            conversation=lambda: state,
        )
        server = WebServer(web_config, controls, bind(web_config))
        await server.start()
        base = f"http://127.0.0.1:{web_config.port}"
        try:
            async with httpx.AsyncClient(base_url=base, timeout=TIMEOUT) as client:
                await asyncio.wait_for(scenario(client, server, bus, turns), 60)
        finally:
            await asyncio.wait_for(server.stop(), 10)
            await cancel_and_wait([presence])

    asyncio.run(main())


def test_health_devices_turns_and_state(registry: DeviceRegistry) -> None:
    async def scenario(
        client: httpx.AsyncClient, server: WebServer, bus: EventBus, turns: ScriptedTurns
    ) -> None:
        health = (await client.get("/healthz")).json()
        assert health == {
            "ok": True,
            "degraded": [],
            "broker_connected": True,
            "muted": False,
            "sse_clients": 0,
        }
        rows = (await client.get("/api/devices")).json()["devices"]
        devices = {d["name"]: d for d in rows}
        assert set(devices) == {device.name for device in registry}
        assert devices["kitchen_light"]["state"] == {"state": "ON", "brightness": 200}
        assert devices["kitchen_light"]["view"]["summary"] == "on · 79 %"
        assert [(d["room_label"], d["label"]) for d in rows] == [  # rooms, then names: every time
            ("Bedroom", "Bedroom light"),
            ("Kitchen", "Kitchen light"),
            ("Living room", "Diffuser"),
            ("Living room", "Living room light"),
            ("Living room", "Music"),
        ]
        assert devices["bedroom_light"]["online"] is False
        assert devices["music"]["online"] is None  # not heard from yet
        assert (await client.get("/api/state")).json() == {"mood": "calm"}
        page = await client.get("/")
        assert page.status_code == 200 and "EventSource" not in page.text and "app.js" in page.text
        assert "new EventSource" in (await client.get("/static/app.js")).text

    serve(registry, scenario, state={"mood": "calm"})


def test_state_without_a_brain_is_a_json_404(registry: DeviceRegistry) -> None:
    async def scenario(
        client: httpx.AsyncClient, server: WebServer, bus: EventBus, turns: ScriptedTurns
    ) -> None:
        response = await client.get("/api/state")
        assert response.status_code == 404
        assert "brain is off" in response.json()["error"]
        missing = await client.get("/api/nothing")
        assert missing.status_code == 404 and "/api/nothing" in missing.json()["error"]
        wrong = await client.get("/api/say")
        assert wrong.status_code == 405 and "GET is not allowed on /api/say" in wrong.json()["error"]

    serve(registry, scenario)


def test_say_takes_a_turn_and_returns_reply_commands_and_the_turn_in_turns(registry: DeviceRegistry) -> None:
    async def scenario(
        client: httpx.AsyncClient, server: WebServer, bus: EventBus, turns: ScriptedTurns
    ) -> None:
        response = await client.post("/api/say", json={"text": " turn on the kitchen light "})
        assert response.status_code == 200, response.text
        body = response.json()
        assert turns.taken == ["turn on the kitchen light"]
        assert body["reply"] == "Kitchen light on." and body["understood"] is True
        assert body["commands"] == [
            {
                "device": "kitchen_light",
                "payload": '{"state":"ON"}',
                "result": "sent",
                "words": "Kitchen light: on",
            }
        ]
        for _ in range(100):  # the hub reads the bus in its own task
            recent = (await client.get("/api/turns?limit=5")).json()["turns"]
            if recent:
                break
            await asyncio.sleep(0.02)
        assert recent[-1]["heard"] == "turn on the kitchen light"
        assert recent[-1]["stages"]["agent"] >= 0
        metrics = (await client.get("/metrics")).text
        assert 'voiced_turns_total{room=""} 1.0' in metrics  # no room: the web's scripted turns
        assert 'voiced_device_commands_total{device="kitchen_light",result="sent",room=""} 1.0' in metrics
        assert "voiced_broker_connected 1.0" in metrics
        bad = await client.get("/api/turns?limit=zero")
        assert bad.status_code == 400 and "'limit'" in bad.json()["error"]

    serve(registry, scenario)


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        (b"{not json", 400, "request body is not valid JSON"),
        (b"", 400, "request body is empty"),
        (b"[1, 2]", 400, "must be a JSON object, got an array"),
        (b'{"words": "hello"}', 400, "missing field 'text'"),
        (b'{"text": 42}', 400, "field 'text' must be a string, got a number"),
        (b'{"text": "   "}', 400, "field 'text' is blank"),
        (
            json.dumps({"text": "a" * 2001}).encode(),
            413,
            "field 'text' is 2001 characters long; at most 2000",
        ),
        (b"\xff\xfe", 400, "not UTF-8"),
    ],
)
def test_bad_bodies_are_json_errors_naming_what_is_wrong(
    registry: DeviceRegistry, body: bytes, status: int, message: str
) -> None:
    async def scenario(
        client: httpx.AsyncClient, server: WebServer, bus: EventBus, turns: ScriptedTurns
    ) -> None:
        response = await client.post("/api/say", content=body)
        assert response.status_code == status
        assert message in response.json()["error"]
        assert turns.taken == []

    serve(registry, scenario)


def test_mute_needs_a_boolean_and_publishes_the_muted_state(registry: DeviceRegistry) -> None:
    async def scenario(
        client: httpx.AsyncClient, server: WebServer, bus: EventBus, turns: ScriptedTurns
    ) -> None:
        states = bus.subscribe("test")
        wrong = await client.post("/api/mute", json={"muted": "yes"})
        assert (
            wrong.status_code == 400
            and "'muted' must be true or false, got a string" in wrong.json()["error"]
        )
        assert (await client.post("/api/mute", json={"muted": True})).json() == {"muted": True}
        assert (await client.get("/healthz")).json()["muted"] is True
        seen: list[str] = []
        while "muted" not in seen:
            event = await asyncio.wait_for(states.get(), 5)
            if isinstance(event, AssistantState):
                seen.append(event.state)
        assert (await client.post("/api/mute", json={"muted": False})).json() == {"muted": False}
        while seen[-1] != "idle":
            event = await asyncio.wait_for(states.get(), 5)
            if isinstance(event, AssistantState):
                seen.append(event.state)
        vibe = await client.post("/api/vibe", json={"request": "calm"})
        assert vibe.status_code == 404 and "no scene agent" in vibe.json()["error"]

    serve(registry, scenario)


def test_off_loopback_every_request_needs_the_bearer_token(registry: DeviceRegistry) -> None:
    port = free_port()
    config = WebConfig(host="0.0.0.0", port=port, token=TOKEN)

    async def scenario(
        client: httpx.AsyncClient, server: WebServer, bus: EventBus, turns: ScriptedTurns
    ) -> None:
        for path in ("/", "/healthz", "/metrics", "/api/devices"):
            refused = await client.get(path)
            assert refused.status_code == 401, path
            assert "no bearer token" in refused.json()["error"]
        wrong = await client.get("/healthz", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401 and "wrong bearer token" in wrong.json()["error"]
        assert (await client.get("/healthz", headers={"Authorization": f"Bearer {TOKEN}"})).status_code == 200
        assert (await client.get(f"/?access_token={TOKEN}")).status_code == 200

    serve(registry, scenario, config=config)


def test_a_port_already_taken_is_a_config_error_naming_it() -> None:
    from voiced.errors import ConfigError

    config = WebConfig(port=free_port())
    held = bind(config)
    try:
        with pytest.raises(ConfigError, match=f"cannot listen on 127.0.0.1:{config.port}"):
            bind(config)
    finally:
        held.close()


async def sse_events(response: httpx.Response, count: int) -> list[tuple[str, str, dict[str, Any]]]:
    """The next `count` events of an SSE stream: (id, event name, data)."""
    got: list[tuple[str, str, dict[str, Any]]] = []
    fields: dict[str, str] = {}
    async for line in response.aiter_lines():
        if not line:
            if "data" in fields:
                got.append((fields.get("id", ""), fields.get("event", ""), json.loads(fields["data"])))
                if len(got) == count:
                    return got
            fields = {}
            continue
        name, _, value = line.partition(":")
        fields[name] = value.removeprefix(" ")
    return got


def test_sse_names_events_by_kind_and_replays_after_last_event_id(registry: DeviceRegistry) -> None:
    def texts(events: list[tuple[str, str, dict[str, Any]]]) -> list[tuple[str, str]]:
        return [(name, data["text"]) for _, name, data in events if name in ("transcript", "agent_text")]

    def seqs(events: list[tuple[str, str, dict[str, Any]]]) -> list[int]:
        return [int(event_id.split("-")[1]) for event_id, _, _ in events]

    async def scenario(
        client: httpx.AsyncClient, server: WebServer, bus: EventBus, turns: ScriptedTurns
    ) -> None:
        for n in range(1, 6):
            bus.publish(Transcript(turn=n, text=f"line {n}"))
        await asyncio.sleep(0.2)  # the hub and the assistant's state (thinking) have caught up
        total = server.hub.seen
        async with client.stream("GET", "/api/events?last_id=0") as first:
            everything = await asyncio.wait_for(sse_events(first, total), 5)
        assert seqs(everything) == list(range(1, total + 1))
        assert texts(everything) == [("transcript", f"line {n}") for n in range(1, 6)]
        assert {"transcript", "assistant_state"} == {name for _, name, _ in everything}
        third = next(event for event in everything if event[2].get("text") == "line 3")
        async with client.stream("GET", "/api/events", headers={"Last-Event-ID": third[0]}) as resumed:
            bus.publish(AgentText(turn=6, text="after", understood=True))
            await asyncio.sleep(0.2)
            rest = await asyncio.wait_for(sse_events(resumed, server.hub.seen - seqs([third])[0]), 5)
        assert seqs(rest) == list(range(seqs([third])[0] + 1, server.hub.seen + 1))
        assert texts(rest) == [("transcript", "line 4"), ("transcript", "line 5"), ("agent_text", "after")]
        assert rest[-1][2]["thought"] == "[MASTER] after"
        # An id from another boot of the daemon: everything kept is replayed.
        async with client.stream("GET", "/api/events", headers={"Last-Event-ID": "0ldb00t-4"}) as other:
            again = await asyncio.wait_for(sse_events(other, server.hub.seen), 5)
        assert seqs(again)[0] == 1 and texts(again)[-1] == ("agent_text", "after")
        # Ids no int() takes ("²" is a digit to str.isdigit; 5,000 digits pass Python's limit): all replayed.
        for odd in (f"{server.hub.boot}-²", f"{server.hub.boot}-{'9' * 5000}"):
            async with client.stream("GET", "/api/events", headers={"Last-Event-ID": odd.encode()}) as weird:
                assert weird.status_code == 200
                assert seqs(await asyncio.wait_for(sse_events(weird, server.hub.seen), 5))[0] == 1


def test_a_client_that_never_reads_is_disconnected_and_memory_stays_bounded(registry: DeviceRegistry) -> None:
    async def scenario(
        client: httpx.AsyncClient, server: WebServer, bus: EventBus, turns: ScriptedTurns
    ) -> None:
        async with client.stream("GET", "/api/events") as _never_read:
            while server.hub.clients < 1:
                await asyncio.sleep(0.01)
            big = "x" * 4000  # 20 MB in all: more than any socket buffer holds
            for n in range(5000):
                bus.publish(AgentText(turn=1, text=f"{n} {big}", understood=True))
                if n % 100 == 0:
                    await asyncio.sleep(0)  # let the hub and the stream run, as in the daemon
            for _ in range(500):
                if server.hub.clients == 0:
                    break
                await asyncio.sleep(0.01)
            assert server.hub.clients == 0, "the client that never reads is still subscribed"
            # The ring is bounded: what the server holds does not grow with what was published.
            assert server.hub.kept <= 1000

    serve(registry, scenario)
