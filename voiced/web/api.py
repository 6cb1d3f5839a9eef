"""The HTTP API's handlers; what they act on is injected as `Controls` (built in voiced/app.py)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field as default
from typing import Any, Protocol

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from voiced.bus import EventBus
from voiced.devices.actions import DeviceActions
from voiced.devices.registry import DeviceRegistry
from voiced.errors import short_repr
from voiced.mouth.vibe_control import VibeControl
from voiced.plans.setup import Plans
from voiced.supervision import Supervision
from voiced.web.bodies import BadRequest, error, field, json_object, query_text
from voiced.web.command_words import command_words
from voiced.web.device_view import ordered, row
from voiced.web.metrics import CONTENT_TYPE, Metrics
from voiced.web.turns import TurnLog
from voiced.web.typed_turn import TypedTurn, finished, scenes_ended

_LOGGER = logging.getLogger(__name__)

SAY_TIMEOUT_S = 120.0  # a typed turn: the reply, spoken aloud, and any device confirmations
SCENE_WAIT_S = 30.0  # then the scenes it started, until they end
MAX_TURNS = 100


class DeviceView(Protocol):
    @property
    def connected(self) -> bool: ...

    def state_of(self, name: str) -> dict[str, Any] | None: ...

    def availability(self, name: str) -> bool | None: ...


@dataclass(frozen=True)
class Controls:
    bus: EventBus
    registry: DeviceRegistry
    devices: DeviceView
    take_turn: Callable[[str], int]  # queues a typed turn, returns its number
    mute: Callable[[bool], None]
    is_muted: Callable[[], bool]
    conversation: Callable[[], dict[str, Any] | None]  # None: no brain
    vibe: VibeControl | None = None
    plans: Plans | None = None  # the task API (voiced/web/tasks.py)
    supervision: Supervision = default(default_factory=Supervision)  # background tasks: degraded?
    actions: DeviceActions | None = None  # the page's device controls (voiced/web/device_control.py)
    say_timeout_s: float = SAY_TIMEOUT_S
    scene_wait_s: float = SCENE_WAIT_S  # after the turn, its scenes' commands (voiced/web/typed_turn.py)


class Api:
    def __init__(
        self, controls: Controls, turns: TurnLog, metrics: Metrics, clients: Callable[[], int] = lambda: 0
    ) -> None:
        self._c = controls
        self._clients = clients
        self._turns = turns
        self._metrics = metrics

    async def healthz(self, request: Request) -> Response:
        broker = self._c.devices.connected
        degraded = self._c.supervision.degraded
        return JSONResponse(
            {
                "ok": not degraded,
                "degraded": list(degraded),  # background tasks restarting after a failure
                "broker_connected": broker,
                "muted": self._c.is_muted(),
                "sse_clients": self._clients(),
            }
        )

    async def metrics(self, request: Request) -> Response:
        return Response(self._metrics.render(), media_type=CONTENT_TYPE)

    async def state(self, request: Request) -> Response:
        state = self._c.conversation()
        if state is None:
            return error("no conversation state: the brain is off (brain.enabled: false)", 404)
        return JSONResponse(state)

    async def devices(self, request: Request) -> Response:
        """Every device, by room then name (the same order every time), with its state in words."""
        view = self._c.devices
        areas = self._c.registry.areas
        rows = [
            row(device, view.state_of(device.name), view.availability(device.name), areas)
            for device in ordered(list(self._c.registry), areas)
        ]
        return JSONResponse({"broker_connected": view.connected, "devices": rows})

    async def turns(self, request: Request) -> Response:
        raw = query_text(request, "limit", "20") or ""
        # isascii: "²".isdigit() is true, and int("²") a ValueError; so is int() of 4,301 digits.
        if not (raw.isascii() and raw.isdigit() and len(raw) <= 3) or not 1 <= int(raw) <= MAX_TURNS:
            wanted = f"a whole number from 1 to {MAX_TURNS}"
            return error(f"query parameter 'limit' must be {wanted}, got {short_repr(raw)}", 400)
        turns = self._turns.recent(int(raw))
        for turn in turns:
            turn["commands"] = [self._with_words(command) for command in turn["commands"]]
        return JSONResponse({"turns": turns})

    def _with_words(self, command: dict[str, Any]) -> dict[str, Any]:
        """A command as sent, plus what it did in words ("Kitchen light: on, 40 %")."""
        if "payload" not in command:
            return command  # refused: its reason is words already
        return {**command, "words": command_words(self._c.registry, command["device"], command["payload"])}

    async def say(self, request: Request) -> Response:
        try:
            text = field(await json_object(request), "text", str)
        except BadRequest as exc:
            return error(str(exc), exc.status)
        events = self._c.bus.subscribe("web-say")  # before the turn starts: none of its events is missed
        try:
            turn = self._c.take_turn(text)
            typed = TypedTurn(turn)
            try:
                await asyncio.wait_for(finished(events, typed), self._c.say_timeout_s)
            except TimeoutError:
                return error(f"turn {turn} did not finish within {self._c.say_timeout_s:.0f} s", 504)
            await scenes_ended(events, typed, self._c.scene_wait_s)
        finally:
            self._c.bus.unsubscribe(events)
        reply = typed.answer()
        reply["commands"] = [self._with_words(command) for command in reply["commands"]]
        return JSONResponse({"turn": turn, "heard": text, **reply})

    async def vibe_start(self, request: Request) -> Response:
        if self._c.vibe is None:
            return error("no scene agent in this daemon", 404)
        try:
            wanted = field(await json_object(request), "request", str)
        except BadRequest as exc:
            return error(str(exc), exc.status)
        return JSONResponse({"result": await self._c.vibe.start(wanted, 0)}, status_code=202)

    async def vibe_cancel(self, request: Request) -> Response:
        if self._c.vibe is None:
            return error("no scene agent in this daemon", 404)
        return JSONResponse({"result": await self._c.vibe.cancel("cancelled from the web")})

    async def mute(self, request: Request) -> Response:
        try:
            muted = field(await json_object(request), "muted", bool)
        except BadRequest as exc:
            return error(str(exc), exc.status)
        self._c.mute(muted)
        return JSONResponse({"muted": self._c.is_muted()})
