"""Which devices a match reaches when the words leave it open: the daemon's own room, "all", "it"."""

from __future__ import annotations

from voiced.language import english
from voiced.mouth.understanding.home import Home, Match, Slot

# Requests about lights and switches that "it" may point at; volume and pause mean the music anyway.
POINTED = frozenset(
    ("LightColor", "LightStep", "HassLightSet", "LightBrightness", "LightState", "HassTurnOn", "HassTurnOff")
)


def names_one(match: Match) -> bool:
    area = match.slots.get("area")
    return "name" in match.slots or "domain" in match.slots or (area is not None and bool(area.text))


def scoped(home: Home, match: Match, text: str) -> Match:
    """ "Dim the lights" with a room of our own means this room's, unless "all" or "house" was said."""
    room = home.room
    area = match.slots.get("area")
    said, lang = set(text.split()), english()
    if area is not None and not area.text and lang.guess_everywhere & said and not lang.guess_here & said:
        # "set all the lights to max": the room the matcher took from context is not what was said;
        # with no name, the kind is the target ("every light red": every light, not this room's)
        slots = {k: v for k, v in match.slots.items() if k != "area"}
        if "name" not in slots and "domain" not in slots and lang.guess_light & said:
            slots["domain"] = Slot("light", "")
        return Match(match.intent, slots, match.fuzzy, match.wild)
    if room is None or "domain" not in match.slots or "name" in match.slots or "area" in match.slots:
        return match
    if lang.guess_scope & said or not home.in_room(room, ("light", "music", "diffuser")):
        return match
    return Match(match.intent, {**match.slots, "area": Slot(room, "")}, match.fuzzy, match.wild)
