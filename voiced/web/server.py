"""The web server: Starlette on uvicorn, run as an owned task in the daemon's own event loop.

The socket is bound before the models load (`bind`), so a taken port fails in a second.
uvicorn's signal handlers are off: the daemon owns SIGTERM and stops us through `stop`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import html
import logging
import socket
from collections.abc import Generator
from importlib import resources
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from voiced.config import WebConfig
from voiced.errors import ConfigError
from voiced.events import Event
from voiced.tasks import cancel_and_wait
from voiced.web import sse
from voiced.web.api import Api, Controls
from voiced.web.command_words import in_words
from voiced.web.deadlines import with_deadlines
from voiced.web.device_control import DeviceControl
from voiced.web.hub import EventHub
from voiced.web.metrics import Metrics
from voiced.web.tasks import task_routes
from voiced.web.turns import TurnLog

_LOGGER = logging.getLogger(__name__)

STOP_S = 3.0


def bind(config: WebConfig) -> socket.socket:
    """The listening socket, or a ConfigError naming the address that cannot be had."""
    try:
        infos = socket.getaddrinfo(config.host, config.port, type=socket.SOCK_STREAM)
        family, kind, proto, _name, address = infos[0]
        sock = socket.socket(family, kind, proto)
    except (OSError, IndexError) as exc:
        raise ConfigError(f"web.host: cannot use {config.host!r}: {exc}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise ConfigError(
            f"web: cannot listen on {config.host}:{config.port}: {exc.strerror or exc}"
            " (another daemon running? set web.port to a free port, or 0 to turn the web server off)"
        ) from None
    sock.setblocking(False)
    return sock


PUBLIC_PATHS = ("/static/", "/favicon.ico")  # the page's own code and icon: no data, no secret
MODE_MARK = "<!--assistant-mode-->"  # in index.html: the assistant's state, filled in when served


class BearerAuth:
    """Every request needs `Authorization: Bearer <token>` (or `?access_token=`, for the page
    and its EventSource, which cannot send headers); the page's static files excepted, which
    the browser fetches without the page's query string."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self._app = app
        self._token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        public = scope["type"] == "http" and str(scope.get("path", "")).startswith(PUBLIC_PATHS)
        if scope["type"] == "http" and not public:
            request = Request(scope)
            given = request.headers.get("authorization", "")
            token = (
                given[7:] if given.lower().startswith("bearer ") else request.query_params.get("access_token")
            )
            if token is None or not hmac.compare_digest(token.encode(), self._token):
                what = "a wrong bearer token" if token else "no bearer token"
                body = {"error": f"{what}: send 'Authorization: Bearer <VOICED_WEB_TOKEN>'"}
                await JSONResponse(body, 401, {"WWW-Authenticate": "Bearer"})(scope, receive, send)
                return
        await self._app(scope, receive, send)


class LastResort:
    """A handler's unexpected exception becomes a JSON 500 and one log line, not uvicorn's
    plain-text 500 and a traceback (bench/reliability/http.py counts both; the aim is none)."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        started = False

        async def tracked(message: Any) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self._app(scope, receive, tracked)
        except Exception as exc:
            where = f"{scope.get('method')} {scope.get('path')!r}"
            _LOGGER.error("web: %s failed: %s: %s", where, type(exc).__name__, str(exc)[:200])
            if not started:
                await internal_error(where, exc)(scope, receive, send)


def internal_error(where: str, exc: Exception) -> JSONResponse:
    return JSONResponse({"error": f"internal error on {where}: {type(exc).__name__}"}, 500)


def build_app(
    controls: Controls, hub: EventHub, turns: TurnLog, metrics: Metrics, token: str | None
) -> ASGIApp:
    api = Api(controls, turns, metrics, lambda: hub.clients)
    device_control = DeviceControl(controls.registry, controls.actions)
    static = resources.files("voiced.web") / "static"

    async def events(request: Request) -> Response:
        return await sse.events(request, hub)

    async def index(request: Request) -> Response:
        """The page, its badge already saying what the assistant is doing (no "connecting…")."""
        said = hub.current("assistant_state")
        mode = html.escape(str(said["state"])) if said else "starting"
        page = (static / "index.html").read_text(encoding="utf-8").replace(MODE_MARK, mode)
        return Response(page, media_type="text/html; charset=utf-8")

    async def favicon(request: Request) -> Response:
        icon = (static / "favicon.svg").read_bytes()
        return Response(icon, media_type="image/svg+xml", headers={"Cache-Control": "max-age=86400"})

    async def not_found(request: Request, exc: Exception) -> Response:
        return JSONResponse({"error": f"no such endpoint: {request.method} {request.url.path}"}, 404)

    async def bad_method(request: Request, exc: Exception) -> Response:
        return JSONResponse({"error": f"{request.method} is not allowed on {request.url.path}"}, 405)

    routes = [
        Route("/", index),
        Route("/healthz", api.healthz),
        Route("/metrics", api.metrics),
        Route("/api/events", events),
        Route("/api/state", api.state),
        Route("/favicon.ico", favicon),
        Route("/api/devices", api.devices),
        Route("/api/devices/{name}", device_control.handle, methods=["POST"]),
        Route("/api/turns", api.turns),
        Route("/api/say", api.say, methods=["POST"]),
        Route("/api/vibe", api.vibe_start, methods=["POST"]),
        Route("/api/vibe", api.vibe_cancel, methods=["DELETE"]),
        Route("/api/mute", api.mute, methods=["POST"]),
        *(task_routes(controls.plans) if controls.plans is not None else []),
        Mount("/static", StaticFiles(directory=str(static)), name="static"),
    ]

    async def failed(request: Request, exc: Exception) -> Response:
        # Starlette still raises `exc` after this reply: LastResort logs it.
        return internal_error(f"{request.method} {request.url.path!r}", exc)

    handlers = {404: not_found, 405: bad_method, Exception: failed}
    app: ASGIApp = Starlette(routes=routes, exception_handlers=handlers)
    return LastResort(BearerAuth(app, token) if token else app)


class _OwnedServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield  # the daemon owns the signals


class WebServer:
    def __init__(self, config: WebConfig, controls: Controls, sock: socket.socket) -> None:
        self.turns = TurnLog()
        self.metrics = Metrics(broker_connected=controls.devices.connected)
        registry = controls.registry
        self.hub = EventHub(controls.bus, [self._observe], annotate=lambda event: in_words(registry, event))
        self._supervision = controls.supervision
        self._sock = sock
        app = build_app(
            controls, self.hub, self.turns, self.metrics, config.token if not config.loopback else None
        )
        uv = uvicorn.Config(
            app,
            http=with_deadlines(config.headers_timeout_s, config.body_timeout_s),
            ws="none",  # no WebSocket routes: an upgrade stays plain HTTP, under the same deadlines
            lifespan="off",
            log_config=None,
            access_log=False,
            timeout_graceful_shutdown=1,
        )
        self._server = _OwnedServer(uv)
        self._tasks: list[asyncio.Task[Any]] = []
        self.address = sock.getsockname()

    def _observe(self, event: Event) -> None:
        self.metrics.observe(event, self.turns.observe(event))

    async def start(self, timeout_s: float = 10.0) -> None:
        self._tasks = [
            asyncio.create_task(self._server.serve(sockets=[self._sock]), name="web-server"),
        ]
        self._supervision.start("web-hub", self.hub.run)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while not self._server.started:
            if self._tasks[0].done() or loop.time() > deadline:
                raise RuntimeError(f"the web server did not start on {self.address}")
            await asyncio.sleep(0.01)
        _LOGGER.info("web: serving on http://%s:%s/", *self.address[:2])

    async def stop(self) -> None:
        self.hub.close_all()  # open streams end, so the graceful shutdown has nothing to wait for
        self._server.should_exit = True
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=STOP_S)
        await cancel_and_wait(self._tasks)
        await self._supervision.stop("web-hub")
        self._sock.close()
