"""Putting a device back: the command that returns it to a state it reported, or undoes a command.

Used for what is meant to last a while ("turn on the diffuser for 10 minutes": off again after) and
for taking a scene back ("never mind" right after it). A state never reported gives None: the caller
says so. Music that was playing is played again (its genre, if it reported one): the track itself
cannot be put back.
"""

from __future__ import annotations

from collections.abc import Mapping

from voiced.devices.colours import COLORS, hex_to_xy
from voiced.devices.model import DeviceCommand, DiffuserSet, LightSet, MusicSet, SwitchSet


def _nearest_hex(x: float, y: float) -> str:
    def distance(value: str) -> float:
        cx, cy = hex_to_xy(value)
        return (cx - x) ** 2 + (cy - y) ** 2

    return min(COLORS.values(), key=distance)


def _light(device: str, state: Mapping[str, object]) -> LightSet:
    if state.get("state") == "OFF":
        return LightSet(device=device, state="OFF")
    brightness = state.get("brightness")
    fields: dict[str, object] = {"brightness": brightness} if isinstance(brightness, int) else {}
    colour = state.get("color")
    temp = state.get("color_temp")
    if state.get("color_mode") in ("xy", "hs") and isinstance(colour, Mapping):
        if isinstance(colour.get("hex"), str):
            fields["color_hex"] = colour["hex"]
        elif isinstance(colour.get("x"), int | float) and isinstance(colour.get("y"), int | float):
            fields["color_hex"] = _nearest_hex(float(colour["x"]), float(colour["y"]))  # type: ignore[arg-type]
    elif isinstance(temp, int):
        fields["color_temp"] = temp
    return LightSet.model_validate({"device": device, "state": "ON", **fields})


def restore(device: str, kind: str, state: Mapping[str, object] | None) -> DeviceCommand | None:
    """The command that puts `device` back as `state` (its own report) shows it; None if it can't."""
    if not state:
        return None
    power = state.get("state")
    if kind == "light" and power in ("ON", "OFF"):
        return _light(device, state)
    if kind == "diffuser" and power in ("ON", "OFF"):
        if power == "OFF":
            return DiffuserSet(device=device, state="OFF")
        kept = {k: state[k] for k in ("scent", "intensity") if state.get(k) is not None}
        return DiffuserSet.model_validate({"device": device, "state": "ON", **kept})
    if kind == "switch" and power in ("ON", "OFF"):
        return SwitchSet(device=device, state=power)  # type: ignore[arg-type]
    if kind == "music":
        return _music(device, str(power).lower(), state)
    return None


def _music(device: str, power: str, state: Mapping[str, object]) -> MusicSet | None:
    volume = state.get("volume")
    fields: dict[str, object] = {"volume": volume} if isinstance(volume, int) and 0 <= volume <= 100 else {}
    if power == "playing":
        genre = state.get("genre")
        if isinstance(genre, str) and genre:
            fields["genre"] = genre
        return MusicSet.model_validate({"device": device, "action": "play", **fields})
    action = {"stopped": "stop", "paused": "pause"}.get(power)
    if action is None:
        return None
    return MusicSet.model_validate({"device": device, "action": action, **fields})


def undo(command: DeviceCommand, before: Mapping[str, object] | None, kind: str) -> DeviceCommand | None:
    """What ends `command` after a while: the state before it, else its opposite (on ↔ off, play →
    stop); None when there is neither."""
    back = restore(command.device, kind, before)
    if back is not None:
        return back
    if isinstance(command, LightSet | DiffuserSet | SwitchSet) and command.state is not None:
        opposite = "OFF" if command.state == "ON" else "ON"
        return type(command).model_validate({"device": command.device, "state": opposite})
    if isinstance(command, LightSet | DiffuserSet):  # brightness, colour, scent alone: the light is on
        return type(command).model_validate({"device": command.device, "state": "OFF"})
    if isinstance(command, MusicSet) and command.action == "play":
        return MusicSet(device=command.device, action="stop")
    return None
