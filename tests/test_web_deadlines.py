"""Slow and half-open clients are closed by the server (real uvicorn, real sockets); an SSE stream
and a request whose reply takes long are not."""

from __future__ import annotations

import asyncio
import time

import httpx

from tests.conftest import free_port
from tests.test_web import ScriptedTurns, serve, sse_events
from voiced.bus import EventBus
from voiced.config import WebConfig
from voiced.devices.registry import DeviceRegistry
from voiced.events import Transcript
from voiced.web.server import WebServer

DEADLINE_S = 1.0
HALF_OPEN = {
    "silent": b"",
    "half a request line": b"GET /heal",
    "half the headers": b"GET /healthz HTTP/1.1\r\nHost: x\r\n",
    "half a body": b"POST /api/mute HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    b'Content-Length: 20\r\n\r\n{"mu',
}


async def _closed_after(port: int, sent: bytes, wait_s: float) -> tuple[float | None, bytes]:
    """(seconds until the server closed the connection, or None if it was still open; what it said)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    started = time.monotonic()
    writer.write(sent)
    got = b""
    try:
        while chunk := await asyncio.wait_for(reader.read(4096), wait_s):
            got += chunk
        return time.monotonic() - started, got
    except TimeoutError:
        return None, got
    finally:
        writer.close()


def test_half_open_and_slow_clients_are_closed_while_an_sse_stream_stays(registry: DeviceRegistry) -> None:
    config = WebConfig(port=free_port(), headers_timeout_s=DEADLINE_S, body_timeout_s=DEADLINE_S)

    async def scenario(
        client: httpx.AsyncClient, server: WebServer, bus: EventBus, turns: ScriptedTurns
    ) -> None:
        async with client.stream("GET", "/api/events") as stream:
            clients = (_closed_after(config.port, sent, 5.0) for sent in HALF_OPEN.values())
            closed = await asyncio.gather(*clients)
            for what, (after_s, said) in zip(HALF_OPEN, closed, strict=True):
                assert after_s is not None, f"{what}: still open after 5 s"
                assert DEADLINE_S * 0.9 <= after_s < DEADLINE_S + 1.5, (what, after_s)
                assert said.startswith(b"HTTP/1.1 408 "), (what, said)
                assert b"not received in time" in said, (what, said)
            # Past every deadline, the stream is still open and still carries events.
            bus.publish(Transcript(turn=7, text="still here"))
            (_id, name, data), *_ = await asyncio.wait_for(sse_events(stream, 1), 5)
            assert (name, data["text"]) == ("transcript", "still here")
        # A reply slower than the deadlines (the body came at once) is not cut.
        turns.delay_s = DEADLINE_S * 2
        said = await client.post("/api/say", json={"text": "turn on the kitchen light"})
        assert said.status_code == 200 and said.json()["reply"] == "Kitchen light on."
        assert (await client.get("/healthz")).json()["ok"] is True

    serve(registry, scenario, config=config)
