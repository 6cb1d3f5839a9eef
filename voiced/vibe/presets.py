"""Scene presets (YAML) and the planner that needs no LLM: the request's words pick a preset."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from voiced.devices.registry import DeviceRegistry
from voiced.devices.tools import DEVICE_TOOLS, DeviceTools, ToolError
from voiced.errors import ConfigError, describe_validation_error
from voiced.language.replies import say
from voiced.vibe.plan import VIBE_TOOLS, VibePlan, VibeStep, check_step
from voiced.yamlfile import load_yaml

_LOGGER = logging.getLogger(__name__)
BUILT_IN = Path(__file__).with_name("presets.yaml")
_WORD = re.compile(r"[a-z0-9]+")


class Preset(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    keywords: list[str] = Field(default_factory=list)
    reply: str = Field(default_factory=lambda: say("setting_mood"), min_length=1)
    steps: list[dict[str, Any]] = Field(min_length=1)


_PRESETS: TypeAdapter[dict[str, Preset]] = TypeAdapter(dict[str, Preset])


def _expand(tools: DeviceTools, step: dict[str, Any], where: str, *, strict: bool) -> list[VibeStep]:
    """One preset step for this home: `device` omitted = the first of its kind, "*" = all of them.

    `strict` (the user's own presets): a named device this home lacks is a mistake. The built-in
    presets name the example devices and simply leave out what a home does not have.
    """
    fields = dict(step)
    tool = fields.pop("tool", None)
    if tool not in VIBE_TOOLS:
        raise ConfigError(f"{where}: tool: must be one of {', '.join(VIBE_TOOLS)} (got {tool!r})")
    if tool == "narrate":
        return [VibeStep(tool="narrate", input=fields)]
    names = tools.names(DEVICE_TOOLS[tool])
    target = fields.pop("device", None)
    if target == "*":
        chosen = names
    elif target is None:
        chosen = names[:1]
    else:
        chosen = [target] if target in names else []
        if strict and not chosen:
            kind = DEVICE_TOOLS[tool]
            raise ConfigError(
                f"{where}: unknown {kind} device {target!r} (declared: {', '.join(names) or 'none'})"
            )
    if not chosen:
        _LOGGER.debug("%s: no %s device here; step left out", where, DEVICE_TOOLS[tool])
    return [VibeStep(tool=tool, input={"device": name, **fields}) for name in chosen]


def _checked(tools: DeviceTools, raw: dict[str, Any], where: str, *, strict: bool) -> list[VibeStep]:
    """The step's calls, each checked as the vibe agent would make it; ConfigError names the step."""
    try:
        steps = _expand(tools, raw, where, strict=strict)
        for step in steps:
            check_step(tools, step)
    except ToolError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    except ValidationError as exc:
        raise ConfigError(describe_validation_error(where, exc)) from None
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        # a value the tools' own checks let through ("²" for a number): still the file's mistake
        raise ConfigError(f"{where}: invalid value: {type(exc).__name__}: {str(exc)[:200]}") from None
    return steps


def preset_moods(path: Path | None = None) -> dict[str, tuple[str, ...]]:
    """Each preset's keywords, the moods the local understanding listens for (the file is checked
    in full when the vibe agent loads it: here only what is well formed is taken)."""
    raw = load_yaml(path or BUILT_IN) or {}
    moods: dict[str, tuple[str, ...]] = {}
    for name, preset in raw.items() if isinstance(raw, dict) else ():
        words = preset.get("keywords") if isinstance(preset, dict) else None
        if isinstance(words, list):
            moods[str(name)] = tuple(str(w).lower() for w in words if isinstance(w, str))
    return moods


class PresetPlanner:
    def __init__(self, path: Path | None, registry: DeviceRegistry, default: str) -> None:
        """Load and check every preset against the declared devices; ConfigError names the step."""
        path = path or BUILT_IN
        try:
            presets = _PRESETS.validate_python(load_yaml(path) or {})
        except ValidationError as exc:
            raise ConfigError(describe_validation_error(path, exc, schema=dict[str, Preset])) from None
        tools = DeviceTools(registry)
        self.plans: dict[str, tuple[Preset, tuple[VibeStep, ...]]] = {}
        for name, preset in presets.items():
            steps: list[VibeStep] = []
            for index, raw in enumerate(preset.steps):
                where = f"{path}: {name}.steps[{index}]"
                steps.extend(_checked(tools, raw, where, strict=path != BUILT_IN))
            self.plans[name] = (preset, tuple(steps))
        if default not in self.plans:
            raise ConfigError(f"vibe.default_preset: {default!r} is not a preset in {path}")
        self._default = default

    def reply(self, name: str) -> str | None:
        found = self.plans.get(name)
        return found[0].reply if found else None

    def choose(self, request: str) -> tuple[str, str]:
        """The preset for a request, and a note when none matched and the default stood in."""
        key = request.strip().lower().replace(" ", "_")
        if key in self.plans:
            return key, ""
        words = set(_WORD.findall(request.lower()))
        best, best_hits = self._default, 0
        for name, (preset, _steps) in self.plans.items():
            hits = sum(1 for keyword in preset.keywords if set(_WORD.findall(keyword.lower())) <= words)
            if hits > best_hits:
                best, best_hits = name, hits
        if best_hits == 0:
            return best, f"no preset matches {request!r}; used {best!r}"
        return best, ""

    def plan(self, request: str) -> VibePlan:
        name, note = self.choose(request)
        _preset, steps = self.plans[name]
        return VibePlan(request=request, source="preset", name=name, steps=steps, note=note)
