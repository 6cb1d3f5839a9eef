"""Light handlers: on/off, brightness (absolute and relative, clamped aloud), colour and white."""

from __future__ import annotations

from voiced.devices.model import DeviceCommand
from voiced.language import english
from voiced.language.replies import join, say, the
from voiced.mouth.understanding.grammar import human
from voiced.mouth.understanding.home import (
    BRIGHTNESS_MAX,
    Home,
    Match,
    Outcome,
    Picked,
    light,
    pct_to_brightness,
)

DEFAULT_BRIGHTNESS = 127  # assumed when a light's state is unknown
LIGHT = ("light",)


def _none_there(picked: Picked) -> Outcome:
    return Outcome(say("no_such_kind", kind=picked.as_bare), acted=False)


def light_state(home: Home, match: Match, state: str) -> Outcome | None:
    picked = home.pick(match, LIGHT)
    if picked is None:
        return None
    if not picked.names:
        return _none_there(picked)
    commands = [light(n, state=state) for n in picked.names]
    if state == "ON":
        home.switched_on.update(picked.names)
    return Outcome(say("turning", [picked.said], state=state.lower()), commands, tuple(picked.names))


def level(home: Home, name: str) -> int:
    """Current brightness 0..254 (0 when off), DEFAULT_BRIGHTNESS when unknown (and noted in
    `home.unknown`, so the state can be asked for and the request understood again)."""
    state = home.state(name)
    if not state or ("brightness" not in state and str(state.get("state", "ON")).upper() != "OFF"):
        home.unknown.add(name)
    if str(state.get("state", "ON")).upper() == "OFF":
        return 0
    try:
        return int(state.get("brightness", DEFAULT_BRIGHTNESS))
    except (TypeError, ValueError):
        return DEFAULT_BRIGHTNESS


def brightness(home: Home, match: Match, pct_value: float) -> Outcome | None:
    picked = home.pick(match, LIGHT)
    if picked is None:
        return None
    if not picked.names:
        return _none_there(picked)
    pct = round(pct_value)
    note = ""
    if pct > 100:
        note, pct = " " + say("light_over_max", asked=pct), 100
    if pct <= 0:
        commands = [light(n, state="OFF") for n in picked.names]
        return Outcome(say("turning", [picked.said], state="off"), commands, tuple(picked.names))
    commands = [light(n, state="ON", brightness=pct_to_brightness(pct)) for n in picked.names]
    said = say("setting_percent", [picked.said], percent=pct)
    return Outcome(said + note, commands, tuple(picked.names))


def _targets(home: Home, match: Match) -> Picked | None:
    """The lights a request names; with none named ("brighter", "blue"), the lights just acted
    on, else this room's, else those that are on, else all."""
    if any(k in match.slots for k in ("name", "area", "domain")):
        return home.pick(match, LIGHT)
    lights = home.of_kinds(LIGHT)
    last = [n for n in home.last if n in lights]
    on = [n for n in lights if str(home.state(n).get("state", "")).upper() == "ON"]
    here = home.in_room(home.room, LIGHT) if home.room else []
    names = last or here or on
    if not names:
        return home.pick(match, LIGHT)
    said = join([the(human(n)) for n in names]) if len(names) <= 2 else english().kind_names["light"].all
    return Picked(names, said)


def _unaimed(home: Home, match: Match) -> bool:
    if any(k in match.slots for k in ("name", "area", "domain")):
        return False
    lights = home.of_kinds(LIGHT)
    lit = [n for n in lights if str(home.state(n).get("state", "")).upper() == "ON"]
    return len(lights) > 1 and not [n for n in home.last if n in lights] and not home.room and not lit


def _kept(home: Home, name: str) -> int:
    """The brightness a light that is off reports keeping (Zigbee lights come back on at it), or 0."""
    try:
        return int(home.state(name).get("brightness", 0))
    except (TypeError, ValueError):
        return 0


def step(home: Home, match: Match, step_size: int, up: bool) -> Outcome | None:
    if _unaimed(home, match):
        # a bare "brighter" with nothing acted on, no room of our own and every light off
        return Outcome(say("which_light"), acted=False)
    picked = _targets(home, match)
    if picked is None:
        return None
    if not picked.names:
        return _none_there(picked)
    commands: list[DeviceCommand] = []
    for name in picked.names:
        current = level(home, name)
        if not up and current == 0:
            continue  # dimming a light that is off leaves it off
        if up and current == 0 and name in home.switched_on:
            current = _kept(home, name)  # "turn it on and make it brighter": up from the level it kept
        new = min(BRIGHTNESS_MAX, current + step_size) if up else max(1, current - step_size)
        commands.append(light(name, state="ON", brightness=new))
    if not commands:
        said = say("already_off", [picked.said], count=len(picked.names))
        return Outcome(said, [], tuple(picked.names))
    said = say("brighter" if up else "dimming", [picked.said])
    return Outcome(said, commands, tuple(picked.names))


def color(home: Home, match: Match) -> Outcome | None:
    picked = _targets(home, match)
    if picked is None:
        return None
    if not picked.names:
        return _none_there(picked)
    names = tuple(picked.names)
    if "color" in match.slots:
        hex_value = str(match.get("color"))
        label = match.slots["color"].text or hex_value
        commands = [light(n, state="ON", color_hex=hex_value) for n in names]
        return Outcome(say("setting_to", [picked.said], value=label), commands, names)
    if "temperature" in match.slots:
        value = float(match.get("temperature"))
        mireds = round(1_000_000 / value) if value >= 1000 else round(value)  # HA gives kelvin
        label = match.slots["temperature"].text or say("kelvin", value=round(value))
        if label.isdigit():
            label = say("kelvin", value=label)  # "4000 K": the number alone was said
        white, kelvin = say("white_light", label="").strip(), say("kelvin", value="").strip()
        label = label if label.endswith(white) or kelvin in label else say("white_light", label=label)
        commands = [light(n, state="ON", color_temp=mireds) for n in names]
        return Outcome(say("setting_to", [picked.said], value=label), commands, names)
    return None


def light_set(home: Home, match: Match) -> Outcome | None:
    """HassLightSet and our LightBrightness / LightColor."""
    level_said = match.slots.get("brightness") or match.slots.get("pct")
    if level_said is not None and level_said.text.strip() in english().word_sets["not_a_level"]:
        return None  # "the bedroom one" names a light, it asks no 1 percent
    if "brightness" in match.slots or "pct" in match.slots:
        return brightness(home, match, float(match.get("brightness", match.get("pct"))))
    return color(home, match)


WARMTH_STEP = 80  # mireds a "warmer" / "cooler white" moves a light (warm 454 .. cool 250)
NEUTRAL_MIREDS = 370  # assumed when a light's white is unknown or it shows a colour


def _mireds(home: Home, name: str) -> int:
    state = home.state(name)
    if not state:
        home.unknown.add(name)
    if state.get("color_mode") == "xy" or "color_temp" not in state:
        return NEUTRAL_MIREDS
    try:
        return int(state["color_temp"])
    except (TypeError, ValueError):
        return NEUTRAL_MIREDS


def warmth(home: Home, match: Match, warmer: bool) -> Outcome | None:
    """A warmer or cooler white than the light has now, within what the bulb can do."""
    picked = _targets(home, match)
    if picked is None:
        return None
    if not picked.names:
        return _none_there(picked)
    commands: list[DeviceCommand] = []
    for name in picked.names:
        device = home.registry.get(name)
        low, high = getattr(device, "color_temp_min", 153), getattr(device, "color_temp_max", 500)
        now = _mireds(home, name)
        new = min(high, now + WARMTH_STEP) if warmer else max(low, now - WARMTH_STEP)
        if new != now or home.state(name).get("color_mode") == "xy":
            commands.append(light(name, state="ON", color_temp=new))
    if not commands:
        said = say("no_warmer" if warmer else "no_cooler", [picked.said], count=len(picked.names))
        return Outcome(said, [], tuple(picked.names))
    said = say("warmer_white" if warmer else "cooler_white", [picked.said], count=len(picked.names))
    return Outcome(said, commands, tuple(picked.names))
