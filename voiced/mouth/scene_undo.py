"""Taking a scene back: "never mind" right after "goodnight" puts the home back as it was before it.

Each device's own report is kept as a scene starts. "Never mind" (or "stop the scene") in the very
next turn stops the scene if it still runs and sends each device the scene changed the command that
returns it to that report (voiced/devices/restore.py). Any other turn in between makes the scene
the way things are: "never mind" then only stops a scene still running, as before.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass
from typing import Any

from voiced.devices.actions import DeviceActions
from voiced.devices.confirm import expected_state, mismatches
from voiced.devices.model import DeviceCommand
from voiced.devices.restore import restore
from voiced.language.replies import say, the

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class Before:
    """The home as a scene found it."""

    scene: str
    states: dict[str, dict[str, Any] | None]
    sends: dict[str, int]  # commands sent to each device so far: later ones are the scene's

    @property
    def called(self) -> str:
        """ "the good night scene"; a scene asked for in many words is "the scene"."""
        name = self.scene.replace("_", " ")
        return say("scene_called", scene=name) if len(name.split()) <= 2 else say("scene_unnamed")


@dataclass(frozen=True)
class TakeBack:
    commands: tuple[DeviceCommand, ...]  # what puts the changed devices back
    said: str  # what to say of it (before the devices' own failures)


class SceneUndo:
    def __init__(self, actions: DeviceActions) -> None:
        self._actions = actions
        self._before: Before | None = None

    def turn_begins(self) -> Before | None:
        """The home before the scene the last turn started, if it did; forgotten from now on."""
        before, self._before = self._before, None
        return before

    def scene_starts(self, scene: str) -> None:
        states = {name: copy.deepcopy(self._actions.state_of(name)) for name in self._actions.kinds()}
        sends = {name: self._actions.sends(name)[0] for name in states}
        self._before = Before(scene, states, sends)

    def forget(self) -> None:
        self._before = None

    def take_back(self, before: Before, stopped: bool) -> TakeBack:
        """What puts back every device the scene changed; `stopped`: it was still running."""
        back: list[DeviceCommand] = []
        unknown: list[str] = []
        for name, kind in self._actions.kinds().items():
            was, now = before.states.get(name), self._actions.state_of(name)
            # a command the scene sent may not have been reported yet: it changes the device all the same
            count, last = self._actions.sends(name)
            on_its_way = (
                count > before.sends.get(name, 0)
                and last is not None
                and bool(mismatches(now, expected_state(last)))
            )
            if was == now and not on_its_way:
                continue
            command = restore(name, kind, was)
            if command is None:
                if was is None:  # it had not reported before the scene: how it was is not known
                    unknown.append(the(name.replace("_", " ")))
                continue
            if on_its_way or mismatches(now, expected_state(command)):
                back.append(command)
        _LOGGER.info("taking %s back: %d device(s) to put back", before.called, len(back))
        if back:
            said = say("scene_stopped_and_undone" if stopped else "scene_undone", scene=before.called)
        elif stopped:
            said = say("scene_stopped")
        else:
            said = say("scene_nothing_to_undo", scene=before.called)
        if unknown:
            said += " " + say("scene_kept", unknown)
        return TakeBack(tuple(back), said)
