"""A scripted OpenAI-compatible chat server over real HTTP (stdlib only), for tests.

Each POST /v1/chat/completions consumes the next step of the script: streamed text (token by token,
optionally slow, cut off, or stalled), streamed tool calls (arguments split across chunks, exactly as
OpenAI sends them), an HTTP error, raw bytes (garbage SSE), a hang (no answer at all), or another
step paced byte by byte (a trickle) and maybe dropped or stalled part way. Every request body is
recorded.
"""

from __future__ import annotations

import json
import logging
import re
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

_LOGGER = logging.getLogger(__name__)
ARGUMENT_PIECE = 7  # tool-call arguments are streamed in pieces this long


@dataclass(frozen=True)
class Text:
    text: str
    token_delay_s: float = 0.0
    first_delay_s: float = 0.0  # after the headers, before the first chunk
    cut_after: int | None = None  # drop the connection after this many tokens
    stall_after: int | None = None  # after this many tokens, go silent (the connection stays open)


@dataclass(frozen=True)
class Call:
    name: str
    arguments: str  # raw, so tests can send malformed JSON
    piece: int = ARGUMENT_PIECE  # streamed in pieces this long (megabytes go in larger ones)


def call(name: str, **arguments: Any) -> Call:
    return Call(name, json.dumps(arguments))


@dataclass(frozen=True)
class Tools:
    calls: tuple[Call, ...]
    text: str = ""  # content streamed before the calls


@dataclass(frozen=True)
class HttpError:
    status: int = 500
    body: str = '{"error": {"message": "scripted failure", "type": "server_error"}}'


@dataclass(frozen=True)
class Raw:
    """A 200 text/event-stream response with exactly these bytes as its body."""

    body: bytes


@dataclass(frozen=True)
class Hang:
    """The request is read and never answered: no headers, the connection held open."""

    seconds: float = 60.0


@dataclass(frozen=True)
class Paced:
    """`step`'s whole response (headers too) sent one byte every `byte_delay_s`; after `limit_bytes`
    the connection is dropped or goes silent."""

    step: Text | Tools
    byte_delay_s: float = 0.0
    limit_bytes: int | None = None
    then: Literal["drop", "stall"] = "drop"


Step = Text | Tools | HttpError | Raw | Hang | Paced
SILENT_S = 60.0  # how long a stalled response stays silent (the client gives up long before)


class _Cut(Exception):
    """The script ended this response early."""


def tokens(text: str) -> list[str]:
    return re.findall(r"\s*\S+", text)


class ScriptedServer:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.aborted = 0  # streams the client closed before the end
        self._script: list[Step] = []
        self._by_model: dict[str, list[Step]] = {}  # steps only requests for this model consume
        # When the script is empty: the answer chosen from the request itself, so a long run of
        # turns (some misheard, some dropped) can never get out of step with its answers.
        self.respond: Callable[[dict[str, Any]], Step | None] | None = None
        self._lock = threading.Condition()
        self._stop = threading.Event()
        self._httpd = _Httpd(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name="openai-server", daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def push(self, *steps: Step, model: str | None = None) -> None:
        with self._lock:
            (self._script if model is None else self._by_model.setdefault(model, [])).extend(steps)

    def sleep(self, seconds: float) -> None:
        self._stop.wait(seconds)

    def wait_aborted(self, count: int = 1, timeout: float = 5.0) -> bool:
        with self._lock:
            return self._lock.wait_for(lambda: self.aborted >= count, timeout)

    def _next(self, body: dict[str, Any]) -> Step | None:
        with self._lock:
            self.requests.append(body)
            own = self._by_model.get(str(body.get("model")))
            if own:
                return own.pop(0)
            if self._script:
                return self._script.pop(0)
        return self.respond(body) if self.respond is not None else None

    def _note_aborted(self) -> None:
        with self._lock:
            self.aborted += 1
            self._lock.notify_all()


class _Httpd(ThreadingHTTPServer):
    daemon_threads = True
    owner: ScriptedServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Httpd

    def log_message(self, format: str, *args: Any) -> None:
        _LOGGER.debug(format, *args)

    def do_POST(self) -> None:
        self._pace: Paced | None = None
        self._sent = 0
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, '{"error": {"message": "not found"}}')
            return
        owner = self.server.owner
        step = owner._next(body)
        self._id = f"chatcmpl-{len(owner.requests)}"
        self._model = str(body.get("model", "scripted"))
        if isinstance(step, Paced):
            self._pace, step = step, step.step
        try:
            if isinstance(step, Hang):
                self._silent(step.seconds)
                self.close_connection = True
            elif step is None:
                self._send(500, '{"error": {"message": "script exhausted"}}')
            elif isinstance(step, HttpError):
                self._send(step.status, step.body)
            elif not body.get("stream"):
                if isinstance(step, Text):
                    owner.sleep(step.first_delay_s)  # a slow model, answering in one piece
                self._send(200, json.dumps(self._completion(step)))
            else:
                self._stream(step)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
            owner._note_aborted()
        except _Cut:
            self.close_connection = True

    def _silent(self, seconds: float) -> None:
        """Send nothing until the client gives up (closes), the server stops, or `seconds` pass."""
        self.wfile.flush()
        owner = self.server.owner
        until = time.monotonic() + seconds
        while time.monotonic() < until and not owner._stop.is_set():
            readable, _w, _x = select.select([self.connection], [], [], 0.05)
            if readable and not self.connection.recv(1, socket.MSG_PEEK):
                owner._note_aborted()
                return

    def _out(self, data: bytes) -> None:
        """Every byte of the response goes through here, so a Paced step can trickle or cut it."""
        pace = self._pace
        if pace is None:
            self.wfile.write(data)
            return
        for byte in data:
            if pace.limit_bytes is not None and self._sent >= pace.limit_bytes:
                if pace.then == "stall":
                    self._silent(SILENT_S)
                self.connection.shutdown(socket.SHUT_RDWR)
                raise _Cut
            self.server.owner.sleep(pace.byte_delay_s)
            self.wfile.write(bytes((byte,)))
            self.wfile.flush()
            self._sent += 1

    def send_response(self, code: int, message: str | None = None) -> None:
        if self._pace is None:
            super().send_response(code, message)
            return
        self.log_request(code)
        self.send_response_only(code, message)
        self.send_header("Server", self.version_string())

    def end_headers(self) -> None:
        if self._pace is None:
            super().end_headers()
            return
        self._headers_buffer.append(b"\r\n")
        head, self._headers_buffer = b"".join(self._headers_buffer), []
        self._out(head)

    def _send(self, status: int, text: str) -> None:
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self._out(data)

    def _write(self, data: bytes) -> None:
        if data:  # an empty chunk would end the body
            self._out(b"%x\r\n%s\r\n" % (len(data), data))

    def _event(self, delta: dict[str, Any], finish: str | None = None) -> None:
        chunk = {
            "id": self._id,
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": self._model,
            "system_fingerprint": None,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        self._write(b"data: " + json.dumps(chunk).encode() + b"\n\n")

    def _stream(self, step: Text | Tools | Raw) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        owner = self.server.owner
        if isinstance(step, Raw):
            self._write(step.body)
            self._out(b"0\r\n\r\n")
            return
        if isinstance(step, Text):
            owner.sleep(step.first_delay_s)
            self._event({"role": "assistant", "content": ""})
            for number, token in enumerate(tokens(step.text)):
                if step.cut_after is not None and number >= step.cut_after:
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                if step.stall_after is not None and number >= step.stall_after:
                    self._silent(SILENT_S)
                    raise _Cut
                owner.sleep(step.token_delay_s)
                self._event({"content": token})
            self._event({}, "stop")
        else:
            self._event({"role": "assistant", "content": "" if step.text else None})
            for token in tokens(step.text):
                self._event({"content": token})
            for index, item in enumerate(step.calls):
                head = {"name": item.name, "arguments": ""}
                start = {
                    "index": index,
                    "id": f"call_{self._id}_{index}",
                    "type": "function",
                    "function": head,
                }
                self._event({"tool_calls": [start]})
                for at in range(0, len(item.arguments), item.piece):
                    piece = item.arguments[at : at + item.piece]
                    self._event({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            self._event({}, "tool_calls")
        self._write(b"data: [DONE]\n\n")
        self._out(b"0\r\n\r\n")

    def _completion(self, step: Text | Tools | Raw) -> dict[str, Any]:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": step.text if not isinstance(step, Raw) else "",
        }
        finish = "stop"
        if isinstance(step, Tools):
            finish = "tool_calls"
            message["tool_calls"] = [
                {
                    "id": f"call_{self._id}_{i}",
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for i, c in enumerate(step.calls)
            ]
        return {
            "id": self._id,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self._model,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }
