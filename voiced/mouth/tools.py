"""The LLM's tools: JSON schemas built from the registry, arguments checked, device commands executed.

Every device change goes through DeviceActions.execute. A bad call (unknown tool or device, malformed
JSON, a wrong type, an undeclared scent) publishes nothing and answers the model with an error that
names the problem, so it can correct itself. Out-of-range numbers are clamped and the clamp reported.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, TypeVar

import yaml
from openai.types.chat import ChatCompletionFunctionToolParam
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from voiced.devices.model import (
    DeviceCommand,
    DiffuserDevice,
    DiffuserSet,
    LightDevice,
    LightSet,
    MusicDevice,
    MusicSet,
)
from voiced.devices.registry import DeviceRegistry
from voiced.mouth.actions import DeviceActions
from voiced.mouth.intents import SENTENCES

_LOGGER = logging.getLogger(__name__)

_LISTS: dict[str, Any] = yaml.safe_load(SENTENCES.read_text(encoding="utf-8"))["lists"]
COLORS: dict[str, str] = {v["in"]: v["out"] for v in _LISTS["color"]["values"]}
COLOR_TEMPS: dict[str, int] = {v["in"]: int(v["out"]) for v in _LISTS["temperature"]["values"]}
_PCT: dict[str, Any] = {"minimum": 0, "maximum": 100}
_D = TypeVar("_D", LightDevice, DiffuserDevice, MusicDevice)
_HEX = re.compile(r"^#?([0-9a-f]{6})$")
NOT_SENT = "nothing was sent"
_PARTS_OF_DAY = ((22, "night"), (17, "evening"), (12, "afternoon"), (5, "morning"), (0, "night"))
SCENES_UNAVAILABLE = (
    "scenes are not available yet; set the devices one by one with set_light, set_scent and play_music"
)


class ToolError(Exception):
    """A tool call the model must correct; nothing was sent."""


@dataclass(frozen=True)
class ToolResult:
    ok: bool
    content: str  # what the model reads


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _tidy(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("expected a number or text, not true/false")
        return value.strip().lower() if isinstance(value, str) else value


class SetLightArgs(_Args):
    device: str = Field(description="the light")
    state: Literal["on", "off"] | None = None
    brightness_pct: float | None = Field(None, json_schema_extra=_PCT)
    color: str | None = Field(None, description=f"a colour name ({', '.join(COLORS)}) or #RRGGBB")
    color_temp: int | str | None = Field(
        None, description="white temperature: 'warm', 'neutral', 'cool', or mireds"
    )


class SetScentArgs(_Args):
    device: str = Field(description="the diffuser")
    state: Literal["on", "off"] | None = None
    scent: str | None = None
    intensity: float | None = Field(None, json_schema_extra=_PCT)


class PlayMusicArgs(_Args):
    device: str = Field(description="the music player")
    action: Literal["play", "pause", "stop"] | None = None
    genre: str | None = None
    volume: float | None = Field(None, json_schema_extra=_PCT)


class NoArgs(_Args):
    pass


class VibeArgs(_Args):
    request: str = Field(description="the mood or scene the user asked for, in their words")


def _clamp(name: str, value: float, low: float, high: float, notes: list[str]) -> float:
    clamped = max(low, min(high, value))
    if clamped != value:
        notes.append(f"{name} {value:g} clamped to {clamped:g}")
    return clamped


def _on_off(state: str | None) -> Literal["ON", "OFF"] | None:
    return None if state is None else "ON" if state == "on" else "OFF"


def _describe(error: ValidationError) -> str:
    problems: dict[str, str] = {}
    for item in error.errors():
        where = str(item["loc"][0]) if item["loc"] else "arguments"
        got = "" if item["type"] == "missing" else f" (got {item.get('input')!r})"
        message = item["msg"].removeprefix("Value error, ")
        problems.setdefault(where, f"{where}: {message}{got}")
    return "; ".join(problems.values())


def _tidy_schema(node: Any) -> Any:
    """Pydantic's schema, minus titles and null branches: shorter for small local models."""
    if isinstance(node, list):
        return [_tidy_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {k: _tidy_schema(v) for k, v in node.items() if k != "title" and not (k == "default" and v is None)}
    branches = [b for b in out.pop("anyOf", []) if b != {"type": "null"}]
    if len(branches) == 1:
        out.update(branches[0])
    elif branches:
        out["anyOf"] = branches
    return out


@dataclass(frozen=True)
class _Tool:
    description: str
    args: type[_Args]
    kind: str | None  # device kind for device tools


class ToolBox:
    """The main agent's tools over one registry and one DeviceActions."""

    def __init__(
        self,
        registry: DeviceRegistry,
        actions: DeviceActions,
        clock: Callable[[], datetime] = datetime.now,
    ) -> None:
        self._registry = registry
        self._actions = actions
        self._clock = clock
        self._tools: dict[str, _Tool] = {
            "set_light": _Tool("Switch or adjust a light.", SetLightArgs, "light"),
            "set_scent": _Tool("Switch or adjust the scent diffuser.", SetScentArgs, "diffuser"),
            "play_music": _Tool("Play, pause or stop music; genre, volume.", PlayMusicArgs, "music"),
            "get_environment": _Tool("The devices' current states and the local time of day.", NoArgs, None),
            "call_vibe_agent": _Tool("Set a whole mood or scene across devices.", VibeArgs, None),
            "reset_vibe": _Tool("Cancel the current mood or scene.", NoArgs, None),
        }
        self._enums: dict[str, dict[str, list[str]]] = {
            "set_light": {"device": self._names("light")},
            "set_scent": {"device": self._names("diffuser"), "scent": self._declared("diffuser", "scents")},
            "play_music": {"device": self._names("music"), "genre": self._declared("music", "genres")},
        }

    def _names(self, kind: str) -> list[str]:
        return [device.name for device in self._registry.by_kind(kind)]

    def _declared(self, kind: str, field: str) -> list[str]:
        values = {value for device in self._registry.by_kind(kind) for value in getattr(device, field)}
        return sorted(values)

    def schemas(self) -> list[ChatCompletionFunctionToolParam]:
        result: list[ChatCompletionFunctionToolParam] = []
        for name, tool in self._tools.items():
            if tool.kind is not None and not self._names(tool.kind):
                continue  # no such device in this home
            params = _tidy_schema(tool.args.model_json_schema())
            for field, values in self._enums.get(name, {}).items():
                if values:
                    params["properties"][field]["enum"] = values
            fn = {"name": name, "description": tool.description, "parameters": params}
            result.append({"type": "function", "function": fn})  # type: ignore[typeddict-item]
        return result

    def run(self, turn: int, name: str, arguments: str) -> ToolResult:
        """Execute one tool call; never raises for anything the model got wrong."""
        try:
            content = self._run(turn, name, arguments)
        except ToolError as exc:
            _LOGGER.info("turn %d: tool %s refused: %s", turn, name, exc)
            return ToolResult(False, f"error: {exc}; {NOT_SENT}")
        _LOGGER.info("turn %d: tool %s: %s", turn, name, content)
        return ToolResult(not content.startswith("error:"), content)

    def _run(self, turn: int, name: str, arguments: str) -> str:
        tool = self._tools.get(name)
        if tool is None:
            raise ToolError(f"unknown tool {name!r} (available: {', '.join(self._tools)})")
        try:
            raw = json.loads(arguments or "{}")
        except json.JSONDecodeError as exc:
            raise ToolError(f"the arguments are not valid JSON ({exc.msg} at char {exc.pos})") from None
        if not isinstance(raw, dict):
            raise ToolError(f"the arguments must be a JSON object, got {type(raw).__name__}")
        try:
            args = tool.args.model_validate(raw)
        except ValidationError as exc:
            raise ToolError(f"invalid arguments for {name}: {_describe(exc)}") from None
        if isinstance(args, SetLightArgs | SetScentArgs | PlayMusicArgs):
            notes: list[str] = []
            result = self._actions.execute(turn, self._command(args, notes))
            if not result.ok:
                return f"error: {result.message}"
            return "; ".join([f"ok: {result.message}", *notes])
        if name == "get_environment":
            return self._environment()
        return f"error: {SCENES_UNAVAILABLE}" if name == "call_vibe_agent" else "ok: no scene is running"

    def _device(self, name: str, cls: type[_D]) -> _D:
        name = name.replace(" ", "_")
        for device in self._registry:
            if isinstance(device, cls) and device.name == name:
                return device
        kind = cls.__name__.removesuffix("Device").lower()
        known = ", ".join(d.name for d in self._registry if isinstance(d, cls)) or "none"
        raise ToolError(f"unknown {kind} device {name!r} (declared: {known})")

    def _command(self, args: SetLightArgs | SetScentArgs | PlayMusicArgs, notes: list[str]) -> DeviceCommand:
        if not args.model_dump(exclude={"device"}, exclude_none=True):
            raise ToolError(f"nothing to change on {args.device!r}: give at least one setting")
        if isinstance(args, SetLightArgs):
            return self._light(args, notes)
        if isinstance(args, SetScentArgs):
            diffuser = self._device(args.device, DiffuserDevice)
            if args.scent is not None and args.scent not in diffuser.scents:
                scents = ", ".join(diffuser.scents)
                raise ToolError(f"unknown scent {args.scent!r} for {diffuser.name} (has: {scents})")
            top = diffuser.intensity_max
            intensity = None if args.intensity is None else _clamp("intensity", args.intensity, 0, top, notes)
            return DiffuserSet(
                device=diffuser.name,
                state=_on_off(args.state),
                scent=args.scent,
                intensity=None if intensity is None else round(intensity),
            )
        player = self._device(args.device, MusicDevice)
        if args.genre is not None and player.genres and args.genre not in player.genres:
            genres = ", ".join(player.genres)
            raise ToolError(f"unknown genre {args.genre!r} for {player.name} (has: {genres})")
        volume = None if args.volume is None else _clamp("volume", args.volume, 0, player.volume_max, notes)
        return MusicSet(
            device=player.name,
            action=args.action,
            genre=args.genre,
            volume=None if volume is None else round(volume),
        )

    def _light(self, args: SetLightArgs, notes: list[str]) -> LightSet:
        light = self._device(args.device, LightDevice)
        brightness = None
        if args.brightness_pct is not None:
            pct = _clamp("brightness_pct", args.brightness_pct, 0, 100, notes)
            brightness = round(pct * light.brightness_max / 100)
        color_hex = None
        if args.color is not None:
            match = _HEX.match(COLORS.get(args.color, args.color))
            if match is None:
                raise ToolError(f"unknown color {args.color!r} (use {', '.join(COLORS)} or #RRGGBB)")
            color_hex = f"#{match.group(1).upper()}"
        mireds = None
        if args.color_temp is not None:
            temp = args.color_temp
            if isinstance(temp, str):
                if temp not in COLOR_TEMPS and not temp.isdigit():
                    raise ToolError(f"unknown color_temp {temp!r} (use warm, neutral, cool or mireds)")
                temp = COLOR_TEMPS[temp] if temp in COLOR_TEMPS else int(temp)
            low, high = light.color_temp_min, light.color_temp_max
            mireds = round(_clamp("color_temp", temp, low, high, notes))
        return LightSet(
            device=light.name,
            state=_on_off(args.state),
            brightness=brightness,
            color_temp=mireds,
            color_hex=color_hex,
        )

    def _environment(self) -> str:
        now = self._clock()
        part = next(name for start, name in _PARTS_OF_DAY if now.hour >= start)
        devices = {d.name: self._actions.state_of(d.name) or "unknown" for d in self._registry}
        local = f"{now:%A %Y-%m-%d %H:%M}"
        return json.dumps({"local_time": local, "part_of_day": part, "devices": devices})
