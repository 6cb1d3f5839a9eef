"""A frame's commands and its reply: the values decide what each target device is told."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from voiced.devices.colours import COLOR_TEMPS, COLORS
from voiced.devices.model import DeviceCommand
from voiced.language.replies import chain, say, the
from voiced.mouth.agent import AgentReply
from voiced.mouth.understanding.frame import Frame
from voiced.mouth.understanding.grammar import human
from voiced.mouth.understanding.home import (
    BRIGHTNESS_MAX,
    Home,
    Outcome,
    diffuser,
    light,
    music,
    pct_to_brightness,
)

VALUE_STEP = 10  # volume and intensity, in percent, as the templates' own steps
WHITE_STEP = 50  # mireds: "warmer", "cooler"


def _number(state: dict[str, object], key: str, default: int) -> int:
    value = state.get(key, default)
    return int(value) if isinstance(value, int | float) else default


def _light(frame: Frame, home: Home, name: str, step: int) -> tuple[DeviceCommand | None, str]:
    state = home.state(name)
    fields: dict[str, object] = {}
    said: list[str] = []
    if frame.percent is not None:
        if frame.percent <= 0:
            return light(name, state="OFF"), "off"
        fields.update(state="ON", brightness=pct_to_brightness(min(frame.percent, 100)))
        said.append(say("framed_to_percent", percent=min(frame.percent, 100)))
    elif frame.direction is not None:
        step = pct_to_brightness(frame.by) if frame.by else step
        on = state.get("state") == "ON"
        current = _number(state, "brightness", 0) if on else 0
        if frame.direction == "down" and not on:
            return None, "already off"
        new = min(BRIGHTNESS_MAX, current + step) if frame.direction == "up" else max(1, current - step)
        fields.update(state="ON", brightness=new)
        said.append(say("framed_brighter" if frame.direction == "up" else "framed_dimmer"))
    if frame.colour is not None:
        fields.update(state="ON", color_hex=COLORS[frame.colour])
        said.append(frame.colour)
    if frame.white is not None:
        current = _number(state, "color_temp", COLOR_TEMPS["neutral"])
        temp = {"warmer": current + WHITE_STEP, "cooler": current - WHITE_STEP}.get(
            frame.white, COLOR_TEMPS.get(frame.white, current)
        )
        fields.update(state="ON", color_temp=max(153, min(500, temp)))
        said.append(
            say("framed_white", white=frame.white) if frame.white in ("warm", "cool") else frame.white
        )
    if not fields and frame.power is not None:
        fields["state"] = frame.power
        said.append(frame.power.lower())
    if not fields:
        return None, ""
    return light(name, **fields), chain(said)


def _diffuser(frame: Frame, home: Home, name: str) -> tuple[DeviceCommand | None, str]:
    state = home.state(name)
    fields: dict[str, object] = {}
    said: list[str] = []
    if frame.scent is not None:
        fields.update(state="ON", scent=frame.scent)
        said.append(say("framed_on_scent", scent=frame.scent))
    if frame.percent is not None:
        fields.update(state="ON", intensity=max(0, min(100, frame.percent)))
        said.append(say("framed_at_percent", percent=min(frame.percent, 100)))
    elif frame.direction is not None:
        change = (frame.by or VALUE_STEP) * (1 if frame.direction == "up" else -1)
        fields["intensity"] = max(0, min(100, _number(state, "intensity", 50) + change))
        said.append(say("framed_stronger" if change > 0 else "framed_softer"))
    if frame.minutes is not None:
        fields.update(state="ON", duration_min=max(1, min(1440, frame.minutes)))
        said.append(say("framed_for", count=frame.minutes))
    if frame.action in ("stop", "pause") and not fields:
        fields["state"] = "OFF"
    if not fields and frame.power is not None:
        fields["state"] = frame.power
    if not fields:
        return None, ""
    said = said or [str(fields.get("state", "")).lower()]
    return diffuser(name, **fields), " ".join(said)


def _music(frame: Frame, home: Home, name: str) -> tuple[DeviceCommand | None, str]:
    state = home.state(name)
    fields: dict[str, object] = {}
    said: list[str] = []
    if frame.title is not None:
        fields.update(action="play", query=frame.title)
        said.append(say("framed_playing", what=frame.title))
    elif frame.genre is not None:
        fields.update(action="play", genre=frame.genre)
        said.append(say("framed_playing", what=frame.genre))
    elif frame.action is not None:
        fields["action"] = frame.action
        done = {"play": "framed_playing", "pause": "framed_paused", "stop": "framed_stopped"}.get(
            frame.action
        )
        said.append(say(done, what="").strip() if done else frame.action)
    elif frame.power == "OFF" and frame.percent is None and frame.direction is None:
        fields["action"] = "stop"  # "kill the music"
        said.append(say("framed_stopped"))
    elif frame.power == "ON" and frame.percent is None and frame.direction is None and _paused(state):
        fields["action"] = "play"  # "the music back on": what was paused; nothing new of our choosing
        said.append(say("framed_playing", what="").strip())
    if frame.percent is not None:
        fields["volume"] = max(0, min(100, frame.percent))
        said.append(say("framed_volume", volume=fields["volume"]))
    elif frame.direction is not None:
        change = (frame.by or VALUE_STEP) * (1 if frame.direction == "up" else -1)
        fields["volume"] = max(0, min(100, _number(state, "volume", 50) + change))
        said.append(say("framed_louder" if change > 0 else "framed_quieter"))
    if not fields:
        return None, ""
    return music(name, **fields), chain(said)


def outcome(frame: Frame, home: Home, step: int) -> Outcome | None:
    """The commands and the reply for `frame`, or None when it asks nothing of any target."""
    if frame.refusal is not None:
        return Outcome(frame.refusal, acted=False)
    commands: list[DeviceCommand] = []
    parts: dict[str, list[str]] = {}
    for name in frame.targets:
        kind = home.kind_of(name) if frame.kind == "mixed" else frame.kind
        if kind == "light":
            command, said = _light(frame, home, name, step)
        elif kind == "diffuser":
            command, said = _diffuser(frame, home, name)
        else:
            command, said = _music(frame, home, name)
        if command is not None:
            commands.append(command)
            parts.setdefault(said, []).append(the(human(name)))
    if not commands:
        return None
    reply = " ".join(say("framed_done", names, said=said) for said, names in parts.items())
    return Outcome(reply, commands, tuple(frame.targets), felt=frame.felt)


def restore(name: str, kind: str, state: dict[str, object]) -> DeviceCommand | None:
    """The command that puts a light or the diffuser back into `state` (None for other kinds, or an
    unknown state)."""
    power = state.get("state")
    if power not in ("ON", "OFF"):
        return None
    if kind == "light":
        if power == "OFF":
            return light(name, state="OFF")
        fields = {k: state[k] for k in ("brightness", "color_temp") if isinstance(state.get(k), int)}
        return light(name, state="ON", **fields)
    if kind == "diffuser":
        if power == "OFF":
            return diffuser(name, state="OFF")
        kept = {k: state[k] for k in ("scent", "intensity") if state.get(k) is not None}
        return diffuser(name, state="ON", **kept)
    return None


def restore_all(
    names: list[str], *, was: dict[str, dict[str, object]], kind_of: Callable[[str], str]
) -> list[DeviceCommand]:
    """Put back the devices a corrected request changed wrongly, as they were before it (`was`)."""
    back = (restore(n, kind_of(n), was[n]) for n in names if n in was)
    return [c for c in back if c is not None]


def put_back(
    names: list[str], *, was: dict[str, dict[str, Any]], kind_of: Callable[[str], str]
) -> AgentReply | None:
    """The reply that puts `names` back as they were before the request they were wrongly in."""
    back = restore_all(names, was=was, kind_of=kind_of)
    if not back:
        return None
    said = say("put_back", [the(human(c.device)) for c in back])
    return AgentReply(text=said, commands=tuple(back), understood=True)


def _paused(state: dict[str, Any] | None) -> bool:
    return state is not None and str(state.get("state", "")).lower() == "paused"
