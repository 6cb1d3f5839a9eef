"""Deadlines for a request's headers and body, which uvicorn does not have.

uvicorn's keep-alive timeout only starts after a response: a client that connects and sends
nothing, half a request line, or a body slower than anyone types, holds a connection (and a
handler awaiting the body) forever. Here the headers must be complete within `headers_s` of the
connection or of the request's first byte, and the body within `body_s` of the headers; else the
client gets a 408 and the connection is closed. A request whose body is complete (every GET,
so the long-lived SSE stream too) has no deadline: its response may take as long as it takes.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

_LOGGER = logging.getLogger(__name__)

HEADERS_S = 10.0
BODY_S = 10.0


def _timeout_response(what: str) -> bytes:
    body = f'{{"error": "{what} not received in time; the connection is closed"}}'.encode()
    head = (
        "HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


class DeadlineH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a headers deadline and a body deadline (`with_deadlines`)."""

    headers_s: float = HEADERS_S
    body_s: float = BODY_S

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._waiting_for: str | None = None  # "headers" or "body" while a deadline runs

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._expect("headers", self.headers_s)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.transport.is_closing():
            self._disarm()
        elif self.conn.their_state is h11.IDLE:
            self._expect("headers", self.headers_s)  # the first bytes of a next request: from now
        else:
            self._follow_body()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # may start a pipelined request already received
        self._follow_body()  # idle is left to uvicorn's keep-alive timeout

    def _follow_body(self) -> None:
        if self.conn.their_state is h11.SEND_BODY and not self.transport.is_closing():
            self._expect("body", self.body_s)
        else:
            self._disarm()  # the request is whole (or the connection is done with)

    def _expect(self, what: str, seconds: float) -> None:
        if self._waiting_for == what:
            return  # the deadline runs from the first byte, not the last
        self._disarm()
        self._waiting_for = what
        self._deadline = self.loop.call_later(seconds, self._expired, what)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = None
        self._waiting_for = None

    def _expired(self, what: str) -> None:
        self._deadline = None
        self._waiting_for = None
        if self.transport.is_closing():
            return
        cycle = self.cycle if what == "body" else None
        answered = cycle is not None and cycle.response_started
        _LOGGER.info("web: closed a connection from %s: its request %s took too long", self._peer(), what)
        if cycle is not None:
            cycle.disconnected = True  # the handler's own reply, if any, goes nowhere
            cycle.message_event.set()  # and its wait for the body ends
        if not answered:
            self.transport.write(_timeout_response(f"request {what}"))
        self.transport.close()

    def _peer(self) -> str:
        return f"{self.client[0]}:{self.client[1]}" if self.client else "an unknown client"


def with_deadlines(headers_s: float = HEADERS_S, body_s: float = BODY_S) -> type[DeadlineH11Protocol]:
    """The protocol class for `uvicorn.Config(http=...)` (uvicorn builds it with its own arguments)."""
    return type("DeadlineH11Protocol", (DeadlineH11Protocol,), {"headers_s": headers_s, "body_s": body_s})
