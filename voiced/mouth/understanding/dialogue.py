"""What a conversation remembers between turns beyond "it": the devices acted on lately (what "both"
means after two single requests) and which way the last change went (what "a bit more" repeats).
Pure: commands and the states before them in, the memory out."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from voiced.devices.model import DeviceCommand, LightSet
from voiced.language.replies import say
from voiced.mouth.understanding.grammar import human

# the value each kind of command moves up or down
_LEVELS = ("brightness", "intensity", "volume")
_KEPT = 4  # devices remembered: "both" needs two; more is noise


@dataclass(frozen=True)
class Recent:
    devices: tuple[str, ...] = ()  # acted on lately, the newest last
    direction: str | None = None  # "up" / "down": the last change's, or None when it set no level

    def after(self, commands: Sequence[DeviceCommand], before: Mapping[str, Mapping[str, Any]]) -> Recent:
        """The memory after a turn that sent `commands` (`before`: each device's state before them)."""
        if not commands:
            return self
        names = list(dict.fromkeys(c.device for c in commands))
        kept = [d for d in self.devices if d not in names] + names
        return Recent(tuple(kept[-_KEPT:]), _direction(commands, before))

    def pair(self, last: tuple[str, ...]) -> tuple[str, ...]:
        """ "Both": the last request's devices if they were two or more, else the last two acted on."""
        if len(last) >= 2 or len(self.devices) < 2:
            return last
        return self.devices[-2:]


def _direction(commands: Iterable[DeviceCommand], before: Mapping[str, Mapping[str, Any]]) -> str | None:
    moves = set()
    for command in commands:
        was = before.get(command.device, {})
        for field in _LEVELS:
            new, old = getattr(command, field, None), was.get(field)
            if isinstance(new, int) and isinstance(old, int) and new != old:
                moves.add("up" if new > old else "down")
    return moves.pop() if len(moves) == 1 else None


def assumed(commands: Sequence[DeviceCommand], silent: Iterable[str]) -> str:
    """What the reply says when a relative change was made from an assumed state because the device
    did not report its own in time ("dimmer" from an unknown brightness): where it was set to."""
    quiet = set(silent)
    parts: list[str] = []
    for command in commands:
        if command.device not in quiet:
            continue
        level = next(
            (getattr(command, f, None) for f in _LEVELS if getattr(command, f, None) is not None), None
        )
        if isinstance(level, int):
            percent = round(level * 100 / 254) if isinstance(command, LightSet) else level
            parts.append(say("to_percent", device=human(command.device), percent=percent))
    if not parts:
        return ""
    return say("assumed_level", parts)
