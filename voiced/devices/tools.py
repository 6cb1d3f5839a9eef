"""The device tools both agents call: `set_light`, `set_scent`, `play_music`.

Arguments are parsed from the model's JSON into typed models and turned into a DeviceCommand for
a declared device. A bad call (unknown device, malformed JSON, a wrong type, an undeclared scent)
raises ToolError naming the problem, so the model can correct itself; out-of-range numbers are
clamped and the clamp reported in `notes`. A hostile call (megabytes of arguments, nesting deeper
than JSON allows, numbers of thousands of digits) is a ToolError too, and every error quotes only
a short excerpt, control characters escaped: it goes back to the model and into the log.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from voiced.devices.colours import COLOR_TEMPS, COLORS
from voiced.devices.model import (
    MAX_TRACKS,
    DeviceCommand,
    DiffuserDevice,
    DiffuserSet,
    LightDevice,
    LightSet,
    MusicDevice,
    MusicSet,
)
from voiced.devices.registry import DeviceRegistry
from voiced.safe_text import UnsafeJson
from voiced.safe_text import loads as safe_loads

_PCT: dict[str, Any] = {"minimum": 0, "maximum": 100}
_D = TypeVar("_D", LightDevice, DiffuserDevice, MusicDevice)
_HEX = re.compile(r"^#?([0-9a-f]{6})$", re.IGNORECASE)
DEVICE_TOOLS = {"set_light": "light", "set_scent": "diffuser", "play_music": "music"}
MAX_ARGUMENT_CHARS = 8192  # a full batch of tracks fits with room to spare
EXCERPT_CHARS = 60
_HUGE = 1e12  # past this a number is nonsense, and formatting it may overflow a float
# C0/C1 controls, zero-width and bidi marks, lone surrogates: nothing a log line should carry raw.
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff\ud800-\udfff]")


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """`text` cut to `limit` characters, control and bidi characters escaped: safe for logs and errors."""
    cut = text if len(text) <= limit else f"{text[:limit]}… ({len(text)} chars)"
    return _UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", cut)


def shown(value: Any, limit: int = EXCERPT_CHARS) -> str:
    """A value as the model and the log see it: its repr, bounded and escaped."""
    if isinstance(value, (dict, list)) and len(value) > limit:
        return f"a {type(value).__name__} of {len(value)} items"
    try:
        text = repr(value)
    except (ValueError, RecursionError):  # an int past Python's digit limit, or nesting too deep
        return f"a {type(value).__name__} too large to show"
    return excerpt(text, limit)


class ToolError(Exception):
    """A tool call the model must correct; nothing was sent."""


class ToolArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _tidy(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("expected a number or text, not true/false")
        return value.strip().lower() if isinstance(value, str) else value


class SetLightArgs(ToolArgs):
    device: str = Field(description="the light")
    state: Literal["on", "off"] | None = None
    brightness_pct: float | None = Field(None, json_schema_extra=_PCT)
    color: str | None = Field(None, description=f"a colour name ({', '.join(COLORS)}) or #RRGGBB")
    color_temp: int | str | None = Field(
        None, description="white temperature: 'warm', 'neutral', 'cool', or mireds"
    )


class SetScentArgs(ToolArgs):
    device: str = Field(description="the diffuser")
    state: Literal["on", "off"] | None = None
    scent: str | None = None
    intensity: float | None = Field(None, json_schema_extra=_PCT)
    duration_min: int | None = Field(None, ge=1, description="switch off after this many minutes")


class PlayMusicArgs(ToolArgs):
    device: str = Field(description="the music player")
    action: Literal["play", "pause", "stop"] | None = None
    genre: str | None = None
    volume: float | None = Field(None, json_schema_extra=_PCT)
    tracks: list[Annotated[str, Field(min_length=1, max_length=200)]] | None = Field(
        None, min_length=1, max_length=MAX_TRACKS, description="a batch of tracks to queue, in order"
    )


DeviceArgs = SetLightArgs | SetScentArgs | PlayMusicArgs
ARGS: dict[str, type[ToolArgs]] = {
    "set_light": SetLightArgs,
    "set_scent": SetScentArgs,
    "play_music": PlayMusicArgs,
}


def _clamp(name: str, value: float, low: float, high: float, notes: list[str]) -> float:
    clamped = max(low, min(high, value))
    if clamped != value:
        was = f"{value:g}" if abs(value) < _HUGE else "(a huge number)"
        notes.append(f"{name} {was} clamped to {clamped:g}")
    return float(clamped)


def _on_off(state: str | None) -> Literal["ON", "OFF"] | None:
    return None if state is None else "ON" if state == "on" else "OFF"


def describe(error: ValidationError) -> str:
    problems: dict[str, str] = {}
    for item in error.errors():
        where = str(item["loc"][0]) if item["loc"] else "arguments"
        got = "" if item["type"] == "missing" else f" (got {shown(item.get('input'))})"
        message = item["msg"].removeprefix("Value error, ")
        problems.setdefault(where, f"{where}: {message}{got}")
    return "; ".join(problems.values())


def load_arguments(arguments: str) -> dict[str, Any]:
    """The model's JSON arguments as a dict; ToolError (bounded, no echo) for anything else."""
    if len(arguments) > MAX_ARGUMENT_CHARS:
        raise ToolError(f"the arguments are over {MAX_ARGUMENT_CHARS} characters long")
    try:
        # every string in them cleaned; a huge number is clamped later (Python's own limit holds here)
        raw = safe_loads(arguments or "{}", max_number_chars=sys.get_int_max_str_digits())
    except json.JSONDecodeError as exc:
        raise ToolError(f"the arguments are not valid JSON ({exc.msg} at char {exc.pos})") from None
    except UnsafeJson as exc:
        raise ToolError(f"the arguments are {exc}") from None
    if not isinstance(raw, dict):
        raise ToolError(f"the arguments must be a JSON object, got {type(raw).__name__}")
    return raw


def parse_arguments(name: str, args: type[BaseModel], arguments: str | dict[str, Any]) -> Any:
    """The model's JSON arguments as `args`; ToolError naming what is wrong."""
    raw = load_arguments(arguments) if isinstance(arguments, str) else arguments
    try:
        return args.model_validate(raw)
    except ValidationError as exc:
        raise ToolError(f"invalid arguments for {name}: {describe(exc)}") from None


def tidy_schema(node: Any) -> Any:
    """Pydantic's schema, minus titles and null branches: shorter for small local models."""
    if isinstance(node, list):
        return [tidy_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {k: tidy_schema(v) for k, v in node.items() if k != "title" and not (k == "default" and v is None)}
    branches = [b for b in out.pop("anyOf", []) if b != {"type": "null"}]
    if len(branches) == 1:
        out.update(branches[0])
    elif branches:
        out["anyOf"] = branches
    return out


class DeviceTools:
    """Device tool calls → commands for the declared devices of one registry."""

    def __init__(self, registry: DeviceRegistry) -> None:
        self._registry = registry

    @property
    def _enums(self) -> dict[str, dict[str, list[str]]]:
        """Read from the registry at each call: discovered devices come and go."""
        return {
            "set_light": {"device": self.names("light")},
            "set_scent": {"device": self.names("diffuser"), "scent": self._declared("diffuser", "scents")},
            "play_music": {"device": self.names("music"), "genre": self._declared("music", "genres")},
        }

    def names(self, kind: str) -> list[str]:
        return [device.name for device in self._registry.by_kind(kind)]

    def _declared(self, kind: str, field: str) -> list[str]:
        values = {value for device in self._registry.by_kind(kind) for value in getattr(device, field)}
        return sorted(values)

    def parameters(self, tool: str) -> dict[str, Any]:
        params: dict[str, Any] = tidy_schema(ARGS[tool].model_json_schema())
        for field, values in self._enums[tool].items():
            if values:
                params["properties"][field]["enum"] = values
        return params

    def command(self, tool: str, arguments: str | dict[str, Any], notes: list[str]) -> DeviceCommand:
        """Parse and check one call; raises ToolError. Clamps are appended to `notes`."""
        if tool not in ARGS:
            raise ToolError(f"unknown tool {shown(tool)} (device tools: {', '.join(ARGS)})")
        args: DeviceArgs = parse_arguments(tool, ARGS[tool], arguments)
        if not args.model_dump(exclude={"device"}, exclude_none=True):
            raise ToolError(f"nothing to change on {shown(args.device)}: give at least one setting")
        try:
            if isinstance(args, SetLightArgs):
                return self._light(args, notes)
            if isinstance(args, SetScentArgs):
                return self._scent(args, notes)
            return self._music(args, notes)
        except ValidationError as exc:  # a value the command itself refuses: still the model's to fix
            raise ToolError(f"invalid arguments for {tool}: {describe(exc)}") from None

    def _device(self, name: str, cls: type[_D]) -> _D:
        name = name.replace(" ", "_")
        for device in self._registry:
            if isinstance(device, cls) and device.name == name:
                return device
        kind = cls.__name__.removesuffix("Device").lower()
        known = ", ".join(d.name for d in self._registry if isinstance(d, cls)) or "none"
        raise ToolError(f"unknown {kind} device {shown(name)} (declared: {known})")

    def _scent(self, args: SetScentArgs, notes: list[str]) -> DiffuserSet:
        diffuser = self._device(args.device, DiffuserDevice)
        if args.scent is not None and args.scent not in diffuser.scents:
            scents = ", ".join(diffuser.scents)
            raise ToolError(f"unknown scent {shown(args.scent)} for {diffuser.name} (has: {scents})")
        top = diffuser.intensity_max
        intensity = None if args.intensity is None else _clamp("intensity", args.intensity, 0, top, notes)
        return DiffuserSet(
            device=diffuser.name,
            state=_on_off(args.state),
            scent=args.scent,
            intensity=None if intensity is None else round(intensity),
            duration_min=None if args.duration_min is None else min(args.duration_min, 1440),
        )

    def _music(self, args: PlayMusicArgs, notes: list[str]) -> MusicSet:
        player = self._device(args.device, MusicDevice)
        if args.genre is not None and player.genres and args.genre not in player.genres:
            genres = ", ".join(player.genres)
            raise ToolError(f"unknown genre {shown(args.genre)} for {player.name} (has: {genres})")
        volume = None if args.volume is None else _clamp("volume", args.volume, 0, player.volume_max, notes)
        return MusicSet(
            device=player.name,
            action=args.action,
            genre=args.genre,
            volume=None if volume is None else round(volume),
            tracks=None if args.tracks is None else tuple(args.tracks),
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
                raise ToolError(f"unknown color {shown(args.color)} (use {', '.join(COLORS)} or #RRGGBB)")
            color_hex = f"#{match.group(1).upper()}"
        mireds = None
        if args.color_temp is not None:
            temp = args.color_temp
            if isinstance(temp, str):
                # isdigit() alone takes '²' and other digits int() refuses; 12 digits is plenty
                if temp not in COLOR_TEMPS and not (temp.isascii() and temp.isdigit() and len(temp) < 13):
                    raise ToolError(f"unknown color_temp {shown(temp)} (use warm, neutral, cool or mireds)")
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
