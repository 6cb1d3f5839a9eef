"""A scene as a plan: the vibe agent's tool calls, checked against the declared devices."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from voiced.devices.model import DeviceCommand
from voiced.devices.tools import DEVICE_TOOLS, DeviceTools, ToolError, describe

VibeTool = Literal["set_light", "set_scent", "play_music", "narrate"]
VIBE_TOOLS: tuple[str, ...] = (*DEVICE_TOOLS, "narrate")
MAX_NARRATION_CHARS = 300


class VibeStep(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    tool: VibeTool
    input: dict[str, Any]


class VibePlan(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    request: str
    source: Literal["preset", "llm"]
    name: str = Field(description="the preset's name, or 'llm'")
    steps: tuple[VibeStep, ...]
    note: str = ""  # e.g. which preset stood in for a request none matched

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class NarrateArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=MAX_NARRATION_CHARS, description="one short spoken line")


def check_step(tools: DeviceTools, step: VibeStep) -> DeviceCommand | str:
    """The command a device step sends, or the narration's text; ToolError if the call is wrong."""
    if step.tool == "narrate":
        try:
            return NarrateArgs.model_validate(step.input).text.strip()
        except ValidationError as exc:
            raise ToolError(f"invalid arguments for narrate: {describe(exc)}") from None
    return tools.command(step.tool, step.input, [])


def step_device(step: VibeStep) -> str | None:
    device = step.input.get("device")
    return str(device).replace(" ", "_") if device is not None else None
