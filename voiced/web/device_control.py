"""`POST /api/devices/{name}`: the page's controls, through the same typed, clamped tools as voice.

The body is the device's tool call, its device named by the path:

| device | tool | body, for example |
| light | set_light | {"state": "on", "brightness_pct": 40}, {"color": "blue"}, {"color_temp": "warm"} |
| diffuser | set_scent | {"state": "on", "scent": "citrus", "intensity": 30} |
| music | play_music | {"action": "pause"}, {"volume": 25}, {"action": "play", "genre": "jazz"} |
| switch | set_switch | {"state": "off"} |

`"tool"` may be given too and must be the device's. The arguments are checked by the agents' own
code (voiced/devices/tools.py: types, declared scents and genres, numbers clamped and the clamps
told in `notes`); the command then passes the registry's and the safety gate's checks as a spoken
one does and goes out through DeviceActions (never raw MQTT). The answer waits for the device
to report the change:

| status | when |
| 200 {device, label, sent, notes, state, view, confirmed} | the device reported the change |
| 400 {error} | not a JSON object, an unknown field, a wrong type, an undeclared scent, nothing to change |
| 404 {error} | no such device |
| 409 {error} | the device refuses it (offline, cannot dim, the broker's ACL said no) |
| 503 {error} | the broker is down or not answering, or this server has no device controls |
| 504 {error, state, view} | sent, but the device did not report the change in time |
"""

from __future__ import annotations

from typing import Any, Literal

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from voiced.devices.actions import DeviceActions
from voiced.devices.model import Device, DeviceCommand, SwitchDevice, SwitchSet
from voiced.devices.registry import DeviceRegistry
from voiced.devices.tools import DeviceTools, ToolArgs, ToolError, parse_arguments
from voiced.errors import short_repr
from voiced.web.bodies import BadRequest, error, json_object, path_text
from voiced.web.device_view import controls, label, state_view

SENT_BY = "web"  # the commands' task_id: not a turn's, so the brain takes no taste from them


class SetSwitchArgs(ToolArgs):
    device: str
    state: Literal["on", "off"]


class DeviceControl:
    def __init__(self, registry: DeviceRegistry, actions: DeviceActions | None) -> None:
        self._registry = registry
        self._actions = actions
        self._tools = DeviceTools(registry)

    def _device(self, name: str) -> Device | None:
        return next((device for device in self._registry if device.name == name), None)

    async def handle(self, request: Request) -> Response:
        name = path_text(request, "name")
        device = self._device(name)
        if device is None:
            known = ", ".join(sorted(d.name for d in self._registry)) or "none"
            return error(f"no device {short_repr(name)} (devices: {known})", 404)
        if self._actions is None:
            return error("this server has no device controls", 503)
        notes: list[str] = []
        try:
            command = self.command(device, await json_object(request), notes)
        except BadRequest as exc:
            return error(str(exc), exc.status)
        return await self._send(device, command, notes, self._actions)

    def command(self, device: Device, body: dict[str, Any], notes: list[str]) -> DeviceCommand:
        """The body checked as the device's tool call; BadRequest naming what is wrong."""
        tool = str(controls(device)["tool"])
        given = dict(body)
        named = given.pop("tool", None)
        if named is not None and named != tool:
            raise BadRequest(f"{device.name} is a {device.kind}: its tool is {tool}, not {short_repr(named)}")
        if given.get("device", device.name) != device.name:
            named_device = short_repr(given["device"])
            raise BadRequest(
                f"field 'device' is {named_device} but the path names {device.name}; leave it out"
            )
        given["device"] = device.name
        try:
            if isinstance(device, SwitchDevice):
                args = parse_arguments(tool, SetSwitchArgs, given)
                return SwitchSet(device=device.name, state="ON" if args.state == "on" else "OFF")
            return self._tools.command(tool, given, notes)
        except ToolError as exc:
            raise BadRequest(str(exc)) from None

    async def _send(
        self, device: Device, command: DeviceCommand, notes: list[str], actions: DeviceActions
    ) -> Response:
        name = label(device)
        result = await actions.execute_acked(0, command, task_id=SENT_BY)
        if not result.ok or result.sent is None:
            return error(f"{name}: {result.message}", 503 if result.broker_down else 409)
        missing = await actions.unconfirmed(result.sent)
        state = actions.state_of(device.name)
        view = state_view(device, state)
        if missing:
            why = f"{name} did not confirm within {actions.confirm_timeout_s:g} s ({', '.join(missing)})"
            return JSONResponse({"error": why, "state": state, "view": view}, status_code=504)
        return JSONResponse(
            {
                "device": device.name,
                "label": name,
                "sent": result.sent.command.payload(),
                "notes": notes,
                "state": state,
                "view": view,
                "confirmed": f"{name} says: {view['summary']}",
            }
        )
