"""Turning things on and off across kinds (HassTurnOn/Off, "everything"), and scenes."""

from __future__ import annotations

from voiced.devices.model import DeviceCommand
from voiced.language.replies import say, the
from voiced.mouth.understanding.grammar import SCENE_PREFIX, human
from voiced.mouth.understanding.home import (
    DOMAIN_KINDS,
    Home,
    Match,
    Outcome,
    diffuser,
    light,
    music,
    switch,
)

ALL_KINDS = ("light", "diffuser", "music", "switch")


def command_for(home: Home, name: str, on: bool) -> DeviceCommand:
    kind = home.kind_of(name)
    state = "ON" if on else "OFF"
    if kind == "light":
        if on:
            home.switched_on.add(name)
        return light(name, state=state)
    if kind == "diffuser":
        return diffuser(name, state=state)
    if kind == "switch":
        return switch(name, state)
    return music(name, action="play" if on else "stop")


def turn(home: Home, match: Match, on: bool) -> Outcome | None:
    name = match.get("name")
    if isinstance(name, str) and name.startswith(SCENE_PREFIX):
        if not on:
            return Outcome("", scene="\x00reset")
        return Outcome("", scene=name.removeprefix(SCENE_PREFIX))
    domain = match.get("domain")
    if domain is None and "name" not in match.slots and "area" in match.slots:
        domain = "light"  # "turn on the kitchen and the bedroom": their lights
    said_rooms: list[str] = [k for k in ("area", "area2") if k in match.slots and match.slots[k].text]
    if domain is None and said_rooms and "name" in match.slots:
        return _named_and_rooms(home, match, said_rooms, on)  # "the diffuser and the living room"
    kinds = DOMAIN_KINDS.get(str(domain)) if domain else ALL_KINDS
    if kinds is None:
        return None
    picked = home.pick(match, kinds)
    if picked is None:
        return None
    if not picked.names:
        return Outcome(say("no_such_kind", kind=picked.as_bare), acted=False)
    commands = [command_for(home, n, on) for n in picked.names]
    return Outcome(say("turning", [picked.said], state=_state(on)), commands, tuple(picked.names))


def _named_and_rooms(home: Home, match: Match, rooms: list[str], on: bool) -> Outcome | None:
    """Named devices and the lights of the rooms said beside them (a room's lights, as above)."""
    named = home.pick(
        Match(match.intent, {k: v for k, v in match.slots.items() if k.startswith("name")}), ALL_KINDS
    )
    lit = home.pick(Match(match.intent, {k: match.slots[k] for k in rooms}), ("light",))
    if named is None or lit is None or not lit.names:
        return None
    names = list(dict.fromkeys([*named.names, *lit.names]))
    said = say("turning", [the(human(n)) for n in names], state=_state(on))
    return Outcome(said, [command_for(home, n, on) for n in names], tuple(names))


def everything(home: Home, match: Match, on: bool) -> Outcome:
    room = match.get("area")
    names = home.in_room(str(room), ALL_KINDS) if room else home.of_kinds(ALL_KINDS)
    if not names:
        said = say("nothing_to_control_in", room=room) if room else say("nothing_to_control")
        return Outcome(said, acted=False)
    commands = [command_for(home, n, on) for n in names]
    said = say("turning_everything_in", room=room, state=_state(on)) if room else ""
    return Outcome(said or say("turning_everything", state=_state(on)), commands, tuple(names))


def all_lights_but(home: Home, match: Match, on: bool) -> Outcome | None:
    """ "Lights off except the bedroom": every light but those named (by name or room)."""
    kept = home.pick(match, ("light",), default_all=False)
    if kept is None or not kept.names:
        return None
    names = [n for n in home.of_kinds(("light",)) if n not in kept.names]
    if not names:
        return Outcome(say("none_left", state=_state(on)), acted=False)
    said = say("turning", [the(human(n)) for n in names], state=_state(on))
    commands = [command_for(home, n, on) for n in names]
    return Outcome(said, commands, tuple(names))


def _state(on: bool) -> str:
    """A device's state as a command and a reply say it: "on" or "off"."""
    return "on" if on else "off"
