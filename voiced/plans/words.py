"""What a plan says: each command in words, the read-back, the list of plans, the outcome."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from voiced.devices.colours import COLORS
from voiced.devices.model import DeviceCommand, DiffuserSet, LightSet, MusicSet, SwitchSet
from voiced.plans.model import ExecutionPlan, PlanStep

_HEX_NAMES = {value.upper(): name for name, value in COLORS.items()}


def _name(device: str) -> str:
    return device.replace("_", " ")


def _pct(brightness: int) -> int:
    return round(brightness * 100 / 254)


def describe(command: DeviceCommand) -> str:
    """ "dim the living room light to 20 %", "turn off the kitchen light", "play jazz at volume 25"."""
    name = _name(command.device)
    if isinstance(command, LightSet):
        if command.state == "OFF":
            return f"turn off the {name}"
        if command.brightness is not None:
            return f"set the {name} to {_pct(command.brightness)} %"
        if command.color_hex is not None:
            return f"make the {name} {_HEX_NAMES.get(command.color_hex.upper(), command.color_hex)}"
        if command.color_temp is not None:
            return f"set the {name} to {command.color_temp} mireds"
        return f"turn on the {name}"
    if isinstance(command, DiffuserSet):
        if command.state == "OFF":
            return f"turn off the {name}"
        scent = f" with {command.scent}" if command.scent else ""
        strength = f" at {command.intensity} %" if command.intensity is not None else ""
        return f"turn on the {name}{scent}{strength}"
    if isinstance(command, SwitchSet):
        return f"turn {command.state.lower()} the {name}"
    return _music(command)


def _music(command: MusicSet) -> str:
    volume = f" at volume {command.volume}" if command.volume is not None else ""
    if command.action == "play":
        what = command.genre or command.query or ("a playlist" if command.tracks else "music")
        return f"play {what}{volume}"
    if command.action in ("pause", "stop"):
        return f"{command.action} the music"
    if command.action in ("next", "previous"):
        return f"skip to the {command.action} track"
    return f"set the volume to {command.volume}" if command.volume is not None else "leave the music as it is"


def clock(at: float) -> str:
    """ "7:00 AM": what piper reads as a time."""
    return time.strftime("%I:%M %p", time.localtime(at)).lstrip("0")


def _when(step: PlanStep, now: float) -> str:
    if step.at is None and step.delay_s is None:
        return ""
    seconds = round(step.at - now if step.at is not None else step.delay_s or 0)
    if 0 < seconds < 90:
        return f"in {seconds} second{'s' if seconds != 1 else ''}"
    minutes = round(seconds / 60)
    if step.at is None or 0 < minutes < 60:
        return f"in {minutes} minute{'s' if minutes != 1 else ''}"
    return f"at {clock(step.at)}"


def phrases(plan: ExecutionPlan, now: float) -> list[str]:
    """One phrase per step, or per group of steps said as one, in order."""
    said: list[str] = []
    seen: set[str] = set()
    for step in plan.steps:
        if step.group:
            if step.group in seen:
                continue
            seen.add(step.group)
            when = _when(step, now)
            said.append(f"{step.group} starting {when}" if when else step.group)
            continue
        when = _when(step, now)
        said.append(f"{step.action} {when}" if when else step.action)
    return said


def join_then(parts: Sequence[str]) -> str:
    if not parts:
        return "nothing"
    if len(parts) == 1:
        return parts[0]
    return f"{', '.join(parts[:-1])}, then {parts[-1]}"


def read_back(plan: ExecutionPlan, now: float) -> str:
    """ "I'll dim the living room to 20 %, turn off the kitchen light, then play jazz at volume 25.
    Shall I go ahead?" """
    return f"I'll {join_then(phrases(plan, now))}. Shall I go ahead?"


def planned_line(view: dict[str, Any], now: float) -> str:
    plan = ExecutionPlan.model_validate(view["execution_plan"])
    status = str(view["status"]).replace("_", " ")
    return f"{plan.name}: {join_then(phrases(plan, now))} ({status})"


def step_phrase(step: PlanStep) -> str:
    return step.group or step.action


def no_answer_line(state: Mapping[str, Any]) -> str:
    name = ExecutionPlan.model_validate(state["execution_plan"]).name
    return f"I didn't hear back about the {name}, so I cancelled it."


def outcome_line(state: Mapping[str, Any]) -> str:
    """Said at the next pause when a plan ends: done, or what was skipped and why."""
    name = ExecutionPlan.model_validate(state["execution_plan"]).name
    if state.get("status") == "completed":
        return f"The {name} is done."
    skipped = [e for e in state.get("execution_history", []) if e.get("decision") == "skip"]
    said = [f"{e['action']}: {e['reason']}" for e in skipped[:3]]
    if state.get("ended"):
        said.append(f"stopped early: {state['ended']}")
    why = "; ".join(said) or state.get("result", "")
    return f"The {name} is only partly done: {why}."
