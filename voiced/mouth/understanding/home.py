"""What the handlers know of the home: devices, rooms, states, the last devices acted on.

A `Match` is one understood intent (strict or fuzzy) with its slots; an `Outcome` is what
a handler makes of it. Targets are resolved here: names, rooms, "here", "all", "it".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from voiced.devices.model import DeviceCommand, DiffuserSet, LightSet, MusicSet, SwitchSet
from voiced.devices.registry import DeviceRegistry
from voiced.language import english
from voiced.language.replies import join, say, the
from voiced.mouth.understanding.grammar import human

BRIGHTNESS_MAX = 254
WHICH_ONE = say("which_one")  # "it" pointing nowhere
DOMAIN_KINDS = {
    "light": ("light",),
    "media_player": ("music",),
    "switch": ("diffuser", "switch"),
}


def light(device: str, **fields: Any) -> LightSet:
    return LightSet.model_validate({"device": device, **fields})


def diffuser(device: str, **fields: Any) -> DiffuserSet:
    return DiffuserSet.model_validate({"device": device, **fields})


def switch(device: str, state: str) -> SwitchSet:
    return SwitchSet.model_validate({"device": device, "state": state})


def music(device: str, **fields: Any) -> MusicSet:
    return MusicSet.model_validate({"device": device, **fields})


def pct_to_brightness(pct: float) -> int:
    return round(pct * BRIGHTNESS_MAX / 100)


@dataclass(frozen=True)
class Slot:
    value: Any
    text: str = ""  # "" when the value came from context (the daemon's room)


@dataclass(frozen=True)
class Match:
    intent: str
    slots: dict[str, Slot]
    fuzzy: bool = False
    wild: bool = False  # a slot took free text (a search query, a mood): a corrected reading may do better

    def get(self, key: str, default: Any = None) -> Any:
        slot = self.slots.get(key)
        return default if slot is None else slot.value


@dataclass
class Outcome:
    reply: str
    commands: Sequence[DeviceCommand] = field(default_factory=list)
    targets: tuple[str, ...] = ()  # the devices this acted on or spoke of: what "it" means next
    scene: str | None = None
    acted: bool = True  # False for answers and refusals: nothing to do, but understood
    felt: bool = False  # from how it feels ("it's quite strong"): a request beside it says how much
    farewell: bool = False  # "goodnight": the bedtime scene alone, a farewell beside thanks or a request


@dataclass(frozen=True)
class Picked:
    names: list[str]
    said: str  # "the kitchen light", "the lights in the kitchen", "all the lights"
    group: str = ""  # the whole of them, as a state is said of it ("the lights"); "": as said
    bare: str = ""  # a kind the home lacks, with no article ("lights in the kitchen"); "": as said

    @property
    def as_group(self) -> str:
        return self.group or self.said

    @property
    def as_bare(self) -> str:
        return self.bare or self.said


class Home:
    def __init__(
        self,
        registry: DeviceRegistry,
        states: Callable[[str], dict[str, Any] | None],
        room: str | None = None,
    ) -> None:
        self.registry = registry
        self.states = states
        self.room = room.lower() if room else None
        self.last: tuple[str, ...] = ()  # devices last acted on
        self.unknown: set[str] = set()  # devices whose state a handler needed and did not have
        self.switched_on: set[str] = set()  # lights this utterance turned on (at the level they kept)

    def state(self, name: str) -> dict[str, Any]:
        return self.states(name) or {}

    def kind_of(self, name: str) -> str:
        return self.registry.get(name).kind

    def of_kinds(self, kinds: tuple[str, ...]) -> list[str]:
        return [d.name for d in self.registry if d.kind in kinds]

    def in_room(self, room: str, kinds: tuple[str, ...]) -> list[str]:
        return [d.name for d in self.registry if d.kind in kinds and (d.room or "").lower() == room.lower()]

    def pick(self, match: Match, kinds: tuple[str, ...], *, default_all: bool = True) -> Picked | None:
        """The devices a match names, of the given kinds; None if it names one of another kind.

        A name wins over a room. A room from context only (no room said) falls back to every
        device of the kind when this room has none ("pause" in the kitchen pauses the music).
        """
        every = self.of_kinds(kinds)
        lang = english()
        noun = lang.kind_names[kinds[0]].many if len(kinds) == 1 else lang.many_kinds
        names: list[str] = []
        for key in ("name", "name2", "name3"):
            value = match.get(key)
            if isinstance(value, str) and not value.startswith("\x00"):
                for name in value.split(","):
                    if name not in every:
                        return None
                    names.append(name)
        areas = [match.slots[k] for k in ("area", "area2") if k in match.slots]
        if len(areas) > 1 or (areas and names):
            found = [*names, *(n for a in areas for n in self.in_room(str(a.value), kinds))]
            found = list(dict.fromkeys(found))
            return Picked(found, join([the(human(n)) for n in found])) if found else None
        if names:
            names = list(dict.fromkeys(names))
            return Picked(names, join([the(human(n)) for n in names]))
        area = areas[0] if areas else None
        if area is not None:
            room = str(area.value).lower()
            here = self.in_room(room, kinds)
            if here:
                if len(here) == 1:
                    return Picked(here, the(human(here[0])))
                return Picked(here, say("kind_in_room", kind=noun, room=room))
            if area.text:  # a room was named and it has none
                bare = say("kind_in_room_bare", kind=noun, room=room)
                return Picked([], say("kind_in_room", kind=noun, room=room), bare=bare)
        if not every:
            return Picked([], say("kind_the", kind=noun), bare=noun)
        if not default_all:
            return None
        if len(every) == 1:
            return Picked(every, the(human(every[0])))
        return Picked(every, say("kind_all", kind=noun), group=say("kind_the", kind=noun))
