"""Turning things on and off across kinds (HassTurnOn/Off, "everything"), and scenes."""

from __future__ import annotations

from voiced.devices.model import DeviceCommand
from voiced.mouth.understanding.grammar import SCENE_PREFIX, human
from voiced.mouth.understanding.home import (
    DOMAIN_KINDS,
    Home,
    Match,
    Outcome,
    diffuser,
    join,
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
        return Outcome(f"There are no {picked.said.removeprefix('the ')}.", acted=False)
    commands = [command_for(home, n, on) for n in picked.names]
    verb = "on" if on else "off"
    return Outcome(f"Turning {verb} {picked.said}.", commands, tuple(picked.names))


def _named_and_rooms(home: Home, match: Match, rooms: list[str], on: bool) -> Outcome | None:
    """Named devices and the lights of the rooms said beside them (a room's lights, as above)."""
    named = home.pick(
        Match(match.intent, {k: v for k, v in match.slots.items() if k.startswith("name")}), ALL_KINDS
    )
    lit = home.pick(Match(match.intent, {k: match.slots[k] for k in rooms}), ("light",))
    if named is None or lit is None or not lit.names:
        return None
    names = list(dict.fromkeys([*named.names, *lit.names]))
    said = join([f"the {human(n)}" for n in names])
    return Outcome(
        f"Turning {'on' if on else 'off'} {said}.", [command_for(home, n, on) for n in names], tuple(names)
    )


def everything(home: Home, match: Match, on: bool) -> Outcome:
    room = match.get("area")
    names = home.in_room(str(room), ALL_KINDS) if room else home.of_kinds(ALL_KINDS)
    where = f" in the {room}" if room else ""
    if not names:
        return Outcome(f"There's nothing I can control{where}.", acted=False)
    commands = [command_for(home, n, on) for n in names]
    return Outcome(f"Turning {'on' if on else 'off'} everything{where}.", commands, tuple(names))


def all_lights_but(home: Home, match: Match, on: bool) -> Outcome | None:
    """ "Lights off except the bedroom": every light but those named (by name or room)."""
    kept = home.pick(match, ("light",), default_all=False)
    if kept is None or not kept.names:
        return None
    names = [n for n in home.of_kinds(("light",)) if n not in kept.names]
    if not names:
        return Outcome(f"That leaves no light to turn {'on' if on else 'off'}.", acted=False)
    said = join([f"the {human(n)}" for n in names])
    commands = [command_for(home, n, on) for n in names]
    return Outcome(f"Turning {'on' if on else 'off'} {said}.", commands, tuple(names))
