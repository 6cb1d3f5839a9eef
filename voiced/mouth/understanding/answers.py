"""Questions answered from the devices' own reports and the clock, and honest refusals."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from voiced.devices.colours import COLORS, hex_to_xy
from voiced.language import english
from voiced.language.replies import join, say, the
from voiced.language.whites import white_name
from voiced.mouth.understanding.grammar import human
from voiced.mouth.understanding.home import DOMAIN_KINDS, Home, Match, Outcome
from voiced.mouth.understanding.lacking import controlled


def _is_on(home: Home, name: str) -> bool | None:
    state = home.states(name)
    if state is None:
        return None
    value = str(state.get("state", "")).upper()
    if home.kind_of(name) == "music":
        return value == "PLAYING"
    return value == "ON"


def _no_report(name: str) -> str:
    return say("no_report", [the(human(name))])


def get_state(home: Home, match: Match, whole: bool = False) -> Outcome | None:
    """`whole`: a yes-or-no question of them all ("are the lights off?"): yes, or no and which are
    not; else ("which lights are on?") those that are."""
    domain = match.get("domain")
    kinds = DOMAIN_KINDS.get(str(domain)) if domain else ("light", "diffuser", "music", "switch")
    if kinds is None:
        return None
    picked = home.pick(match, kinds)
    if picked is None:
        return None
    if not picked.names:
        return Outcome(say("no_such_kind", kind=picked.as_bare), acted=False)
    asked_on = str(match.get("state", "on")).lower() == "on"
    word, other = ("on", "off") if asked_on else ("off", "on")
    known = {n: _is_on(home, n) for n in picked.names}
    unknown = [n for n, v in known.items() if v is None]
    matching = [n for n, v in known.items() if v is not None and v == asked_on]
    others = [n for n, v in known.items() if v is not None and v != asked_on]
    targets = tuple(n for n in picked.names if known[n] == asked_on)
    whole = whole or len(picked.names) == 1  # "is the kitchen light on?": yes or no

    def told(key: str, names: list[str], **fields: str) -> str:
        """`key` said of the devices: "all the lights" when they are all that was asked about."""
        whole_group = len(names) > 1 and len(names) == len(picked.names)
        things = [picked.said] if whole_group else [the(human(n)) for n in names]
        return say(key, things, count=len(names), **fields)

    said: list[str] = []
    if whole and matching and not others:
        said.append(told("state_yes" if not unknown else "state_is", matching, state=word))
    elif whole and others:
        said.append(told("state_no", others, other=other))
        if matching:
            said.append(told("state_is", matching, state=word))
    elif matching:
        said.append(told("state_is", matching, state=word))
    elif not unknown or others:
        group = picked.as_group
        said.append(say("state_none", [group], count=len(picked.names), state=word))
    if unknown:
        said.append(told("no_report", unknown))
    # "are any lights on?" then "turn it off": "it" is what the answer named
    return Outcome(
        " ".join(said), targets=targets if len(picked.names) > 1 else tuple(picked.names), acted=False
    )


def light_level(home: Home, match: Match) -> Outcome | None:
    picked = home.pick(match, ("light",))
    if picked is None or not picked.names:
        return None
    lines = []
    for name in picked.names:
        state = home.states(name)
        if state is None:
            lines.append(_no_report(name))
        elif str(state.get("state", "")).upper() != "ON":
            lines.append(say("device_is_off", device=human(name)))
        elif isinstance(state.get("brightness"), int | float):
            percent = round(state["brightness"] * 100 / 254)
            lines.append(say("device_at_percent", device=human(name), percent=percent))
        else:
            lines.append(say("device_is_on", device=human(name)))
    return Outcome(" ".join(lines), targets=tuple(picked.names), acted=False)


def what_is_playing(home: Home, match: Match) -> Outcome | None:
    players = home.of_kinds(("music",))
    if not players:
        return Outcome(say("no_player"), acted=False)
    name = players[0]
    state = home.states(name)
    if state is None:
        return Outcome(_no_report(name), acted=False)
    if str(state.get("state", "")).lower() != "playing":
        return Outcome(say("nothing_playing"), targets=(name,), acted=False)
    what = state.get("track") or state.get("query") or state.get("genre")
    volume = state.get("volume")
    key = ("now_playing" if what else "music_playing") + ("_at" if volume is not None else "")
    said = say(key, what=what, volume=volume)
    return Outcome(said, targets=(name,), acted=False)


def what_scent(home: Home, match: Match) -> Outcome | None:
    diffusers = home.of_kinds(("diffuser",))
    if not diffusers:
        return Outcome(say("no_diffuser"), acted=False)
    name = diffusers[0]
    state = home.states(name)
    if state is None:
        return Outcome(_no_report(name), acted=False)
    if str(state.get("state", "")).upper() != "ON":
        return Outcome(say("device_is_off", device=human(name)), targets=(name,), acted=False)
    scent, intensity = state.get("scent"), state.get("intensity")
    key = {(True, True): "diffuser_on_with_at", (True, False): "diffuser_on_with"}.get(
        (bool(scent), intensity is not None), "diffuser_on_at" if intensity is not None else "device_is_on"
    )
    said = say(key, device=human(name), scent=scent, intensity=intensity)
    return Outcome(said, targets=(name,), acted=False)


def current_time(now: datetime) -> Outcome:
    return Outcome(say("time_now", time=now.strftime("%I:%M %p").lstrip("0")), acted=False)


def current_date(now: datetime) -> Outcome:
    today = say("today", weekday=now.strftime("%A"), month=now.strftime("%B"), day=now.day)
    return Outcome(today, acted=False)


def help_text(home: Home) -> Outcome:
    """What this home has, and an example: "what can you do?", "what devices do you control?"."""
    things = [the(human(d.name)) for d in home.registry]
    scents = [s for d in home.registry for s in getattr(d, "scents", None) or []]
    said = [say("help_devices", things)]
    said.append(say("help_abilities_scents", scents[:6]) if scents else say("help_abilities"))
    lights = home.of_kinds(("light",))
    if lights:
        said.append(say("help_try", device=human(lights[0])))
    return Outcome(" ".join(said), acted=False)


_KINDS = english().word_sets["light_nouns"]


def volume_level(home: Home, match: Match) -> Outcome | None:
    players = home.of_kinds(("music",))
    if not players:
        return Outcome(say("no_player"), acted=False)
    state = home.states(players[0])
    if state is None or not isinstance(state.get("volume"), int | float):
        return Outcome(_no_report(players[0]), targets=(players[0],), acted=False)
    said = say("volume_at", volume=round(state["volume"]))
    return Outcome(said, targets=(players[0],), acted=False)


def cannot_do(home: Home, match: Match) -> Outcome:
    verb, thing = str(match.get("verb", "do")), str(match.get("thing", "that")).strip()
    for article in english().thing_articles:
        thing = thing.removeprefix(article + " ")
    value = match.get("value")
    for device in home.registry:
        scents = getattr(device, "scents", None)
        if scents and value and thing in (human(device.name), *device.aliases):
            return Outcome(say("no_such_scent", list(scents), thing=thing, value=value), acted=False)
    if match.get("said"):  # "who are you?": what this home has, from its devices' kinds
        kinds = {device.kind for device in home.registry}
        said = str(match.get("said")).replace("{things}", join(controlled(kinds, english())))
        return Outcome(said, acted=False)
    lights = home.of_kinds(("light",))
    if thing.split()[-1:] and thing.split()[-1] in _KINDS and lights and not value:
        if thing in (human(n) for n in lights) or thing.removesuffix("s") in (human(n) for n in lights):
            return Outcome(say("what_to_do_with", thing=thing), acted=False)  # "open" it
        # "turn on the garage light": no such light, which is not the same as a thing we cannot do
        return Outcome(say("no_such_light", [the(human(n)) for n in lights], thing=thing), acted=False)
    what = say("the_thing_to", thing=thing, value=value) if value else say("the_thing", thing=thing)
    kinds = {device.kind for device in home.registry}
    return Outcome(say("only_control", controlled(kinds, english()), verb=verb, what=what), acted=False)


def _white(mireds: int) -> str:
    return say("a_white", white=white_name(mireds))


def _colour_name(state: dict[str, Any]) -> str | None:
    """The nearest colour we can name to what the light reports (xy or hex), or its white."""
    colour = state.get("color")
    if state.get("color_mode") != "color_temp" and isinstance(colour, dict):
        if isinstance(colour.get("hex"), str):
            return next((n for n, h in COLORS.items() if h.lower() == colour["hex"].lower()), colour["hex"])
        x, y = colour.get("x"), colour.get("y")
        if isinstance(x, int | float) and isinstance(y, int | float):

            def distance(item: tuple[str, str]) -> float:
                cx, cy = hex_to_xy(item[1])
                return (cx - x) ** 2 + (cy - y) ** 2

            return min(COLORS.items(), key=distance)[0]
    temp = state.get("color_temp")
    return _white(int(temp)) if isinstance(temp, int | float) else None


def light_colour(home: Home, match: Match) -> Outcome | None:
    picked = home.pick(match, ("light",))
    if picked is None:
        return None
    if not picked.names:
        return Outcome(say("no_such_kind", kind=picked.as_bare), acted=False)
    said = []
    for name in picked.names:
        state = home.states(name)
        if state is None:
            said.append(_no_report(name))
        elif str(state.get("state", "")).upper() == "OFF":
            said.append(say("device_is_off", device=human(name)))
        else:
            colour = _colour_name(state)
            told = say("colour_is", device=human(name), colour=colour) if colour else ""
            said.append(told or say("colour_unsaid", device=human(name)))
    return Outcome(" ".join(said), targets=tuple(picked.names), acted=False)


def what_is_on(home: Home, match: Match) -> Outcome:
    """Every device that reports being on (the music: playing), and those that have not reported."""
    on, unknown, named = [], [], []
    for device in home.registry:
        known = _is_on(home, device.name)
        if known is None:
            unknown.append(human(device.name))
        elif known:
            state = home.state(device.name)
            extra = state.get("scent") if device.kind == "diffuser" else state.get("genre")
            shown = f" ({extra})" if extra and device.kind != "light" else ""
            on.append(the(human(device.name)) + shown)
            named.append(device.name)
    said = say("on_now", on)
    if unknown:
        said += " " + say("no_report", [the(name) for name in unknown])
    return Outcome(said, targets=tuple(named), acted=False)  # "turn them all off" next: these
