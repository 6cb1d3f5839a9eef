"""The main agent's tools: device tools, the environment, and the vibe agent's controls.

Every device change goes through DeviceActions.execute. A bad call publishes nothing and answers
the model with an error that names the problem, so it can correct itself.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from openai.types.chat import ChatCompletionFunctionToolParam
from pydantic import BaseModel, ConfigDict, Field

from voiced.bus import EventBus
from voiced.devices.actions import DeviceActions
from voiced.devices.registry import DeviceRegistry
from voiced.devices.tools import (
    DEVICE_TOOLS,
    DeviceTools,
    ToolArgs,
    ToolError,
    excerpt,
    parse_arguments,
    shown,
    tidy_schema,
)
from voiced.events import AgentToolCall

_LOGGER = logging.getLogger(__name__)

NOT_SENT = "nothing was sent"
EVENT_INPUT_CHARS = 500  # events carry an excerpt of the model's arguments, never megabytes
_PARTS_OF_DAY = ((22, "night"), (17, "evening"), (12, "afternoon"), (5, "morning"), (0, "night"))
SCENES_UNAVAILABLE = (
    "scenes are not available here; set the devices one by one with set_light, set_scent and play_music"
)


class VibeControl(Protocol):
    """What the main agent may do with the vibe agent (seed 001): start, cancel, both at once."""

    async def start(self, request: str, turn: int) -> str:
        """Start a background scene (cancelling any running one); returns at once with what to tell."""
        ...

    async def cancel(self, reason: str) -> str:
        """Cancel the running scene; returns what happened."""
        ...


@dataclass(frozen=True)
class ToolResult:
    ok: bool
    content: str  # what the model reads


class NoArgs(ToolArgs):
    pass


class VibeArgs(BaseModel):
    """Not ToolArgs: the user's words keep their case."""

    model_config = ConfigDict(extra="forbid")
    request: str = Field(
        min_length=1, max_length=500, description="the mood or scene asked for, in the user's words"
    )


@dataclass(frozen=True)
class _Tool:
    description: str
    args: type[BaseModel]


_TOOLS: dict[str, _Tool] = {
    "get_environment": _Tool("The devices' current states and the local time of day.", NoArgs),
    "call_vibe_agent": _Tool(
        "Set a whole mood or scene across lights, scent and music, in the background. Returns at once; "
        "tell the user briefly that you are setting it up.",
        VibeArgs,
    ),
    "reset_vibe": _Tool("Cancel the mood or scene being set up.", NoArgs),
}
_DEVICE_DESCRIPTIONS = {
    "set_light": "Switch or adjust a light.",
    "set_scent": "Switch or adjust the scent diffuser.",
    "play_music": "Play, pause or stop music; genre, volume, or a batch of tracks.",
}


class ToolBox:
    """The main agent's tools over one registry, one DeviceActions and (maybe) the vibe agent."""

    def __init__(
        self,
        registry: DeviceRegistry,
        actions: DeviceActions,
        clock: Callable[[], datetime] = datetime.now,
        *,
        vibe: VibeControl | None = None,
        bus: EventBus | None = None,
    ) -> None:
        self._registry = registry
        self._actions = actions
        self._clock = clock
        self._vibe = vibe
        self._bus = bus
        self._devices = DeviceTools(registry)

    def schemas(self) -> list[ChatCompletionFunctionToolParam]:
        result: list[ChatCompletionFunctionToolParam] = []
        for name, description in _DEVICE_DESCRIPTIONS.items():
            if self._devices.names(DEVICE_TOOLS[name]):  # no such device in this home: no tool
                result.append(_schema(name, description, self._devices.parameters(name)))
        for name, tool in _TOOLS.items():
            result.append(_schema(name, tool.description, tidy_schema(tool.args.model_json_schema())))
        return result

    async def run(self, turn: int, name: str, arguments: str) -> ToolResult:
        """Execute one tool call; never raises for anything the model got wrong."""
        try:
            content = await self._run(turn, name, arguments)
        except ToolError as exc:
            content = f"error: {exc}; {NOT_SENT}"
        # The name and the arguments are the model's: escaped, so they can't forge a log line.
        _LOGGER.info("turn %d: tool %s: %s", turn, shown(name), excerpt(content, 300))
        if self._bus is not None:
            event = AgentToolCall(
                turn=turn,
                tool=excerpt(name),
                input=excerpt(arguments, EVENT_INPUT_CHARS),
                result=content,
            )
            self._bus.publish(event)
        return ToolResult(not content.startswith("error:"), content)

    async def _run(self, turn: int, name: str, arguments: str) -> str:
        if name in DEVICE_TOOLS:
            notes: list[str] = []
            result = await self._actions.execute_acked(turn, self._devices.command(name, arguments, notes))
            if not result.ok:
                return f"error: {result.message}"
            return "; ".join([f"ok: {result.message}", *notes])
        tool = _TOOLS.get(name)
        if tool is None:
            raise ToolError(f"unknown tool {shown(name)} (available: {', '.join([*DEVICE_TOOLS, *_TOOLS])})")
        args = parse_arguments(name, tool.args, arguments)
        if name == "get_environment":
            return self._environment()
        if self._vibe is None:
            return f"error: {SCENES_UNAVAILABLE}" if name == "call_vibe_agent" else "ok: no scene is running"
        if isinstance(args, VibeArgs):
            if not self._actions.connected:
                return "error: the devices can't be reached (the MQTT broker is down); no scene was started"
            return "ok: " + await self._vibe.start(args.request, turn)
        return "ok: " + await self._vibe.cancel("the user asked to stop the scene")

    def _environment(self) -> str:
        now = self._clock()
        part = next(name for start, name in _PARTS_OF_DAY if now.hour >= start)
        devices = {}
        for device in self._registry:
            state = self._actions.state_of(device.name) or "unknown"
            devices[device.name] = state if self._actions.is_online(device.name) else "offline"
        local = f"{now:%A %Y-%m-%d %H:%M}"
        return json.dumps({"local_time": local, "part_of_day": part, "devices": devices})


def _schema(name: str, description: str, params: dict[str, object]) -> ChatCompletionFunctionToolParam:
    fn = {"name": name, "description": description, "parameters": params}
    return {"type": "function", "function": fn}  # type: ignore[return-value,typeddict-item]
