"""LocalIntentAgent: understands common smart-home commands offline with hassil sentence templates.

Sentences live in intents_en.yaml; the device, room, scent and genre lists are built from the registry.
Every command is run through DeviceRegistry.prepare() before it is returned.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from hassil import Intents, recognize
from hassil.models import MatchEntity

from voiced.devices.model import DeviceCommand
from voiced.devices.registry import DeviceRegistry
from voiced.errors import DeviceError
from voiced.mouth.agent import AgentReply
from voiced.mouth.intent_scenes import (
    BRIGHTNESS_MAX,
    diffuser,
    light,
    music,
    pct_to_brightness,
    split_utterance,
)

log = logging.getLogger(__name__)

SENTENCES = Path(__file__).with_name("intents_en.yaml")
NOT_UNDERSTOOD = "Sorry, I didn't catch that."
PARTLY_UNDERSTOOD = "I didn't catch the rest."
DEFAULT_BRIGHTNESS = 127  # assumed when a light's state is unknown
DEFAULT_VOLUME = 50
VOLUME_STEP = 10
MAX_SEGMENTS = 8  # longer utterances are matched segment by segment only

Entities = dict[str, MatchEntity]
Outcome = tuple[str, list[DeviceCommand]]
RESET_SCENE = "\x00reset"  # the scene value "never mind" stands for
_SCENE_INTENTS = ("Scene", "VibeRequest", "ResetVibe")


def _human(name: str) -> str:
    return name.replace("_", " ")


def _values(entries: dict[str, set[str]]) -> dict[str, Any]:
    return {"values": [{"in": text, "out": ",".join(sorted(names))} for text, names in entries.items()]}


def build_sentences(registry: DeviceRegistry, path: Path = SENTENCES) -> dict[str, Any]:
    """The hassil intents dict: the YAML templates plus slot lists taken from the registry."""
    data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    lights: dict[str, set[str]] = {}
    for device in registry.by_kind("light"):
        bases = {device.name.removesuffix("_light").replace("_", " "), *device.aliases}
        if device.room:
            bases.add(device.room)
        for base in bases:
            for text in (base, f"{base} light", f"{base} lights", f"{base} lamp"):
                lights.setdefault(text, set()).add(device.name)
    data["lists"]["light"]["values"].extend(_values(lights)["values"])
    for kind, list_name in (("diffuser", "diffuser"), ("music", "player")):
        named: dict[str, set[str]] = {}
        for device in registry.by_kind(kind):
            for text in (_human(device.name), *device.aliases):
                named.setdefault(text, set()).add(device.name)
        data["lists"][list_name] = _values(named)
    scents = {s for d in registry.by_kind("diffuser") for s in getattr(d, "scents", [])}
    genres = {g for d in registry.by_kind("music") for g in getattr(d, "genres", [])}
    data["lists"]["scent"] = {"values": sorted(scents)}
    data["lists"]["genre"] = {"values": sorted(genres)}
    return data


class LocalIntentAgent:
    """Agent that needs no network: hassil templates in, prepared device commands out."""

    def __init__(
        self,
        registry: DeviceRegistry,
        states: Callable[[str], dict[str, Any] | None],
        brightness_step_pct: int = 25,
    ) -> None:
        self._registry = registry
        self._states = states
        self._step = max(1, pct_to_brightness(brightness_step_pct))
        self._intents = Intents.from_dict(build_sentences(registry))
        self._handlers: dict[str, Callable[[Entities], Outcome | None]] = {
            "LightState": self._light_state,
            "LightBrightness": self._light_brightness,
            "LightStep": self._light_step,
            "LightColor": self._light_color,
            "DiffuserState": self._diffuser_state,
            "DiffuserScent": self._diffuser_scent,
            "DiffuserIntensity": self._diffuser_intensity,
            "MusicAction": self._music_action,
            "MusicVolume": self._music_volume,
            "MusicVolumeStep": self._music_volume_step,
        }

    async def respond(self, text: str) -> AgentReply:
        return self.understand(text)

    def understand(self, text: str) -> AgentReply:
        segments = split_utterance(text)
        if len(segments) > MAX_SEGMENTS:
            log.info("long utterance (%d segments): matching segment by segment", len(segments))
        replies: list[str] = []
        commands: list[DeviceCommand] = []
        missed: list[str] = []
        scene: str | None = None
        start = 0
        while start < len(segments):
            longest = len(segments) if len(segments) <= MAX_SEGMENTS else start + 1
            for end in range(longest, start, -1):
                outcome = self._understand_one(" and ".join(segments[start:end]))
                if outcome is not None:
                    replies.append(outcome[0])
                    commands.extend(outcome[1])
                    scene = outcome[2] or scene
                    start = end
                    break
            else:
                missed.append(segments[start])
                start += 1
        if not replies:
            log.info("not understood: %r", text)
            return AgentReply(text=NOT_UNDERSTOOD, commands=(), understood=False)
        if missed:
            log.info("understood only part of %r; missed %s", text, missed)
            replies.append(PARTLY_UNDERSTOOD)
        return AgentReply(
            text=" ".join(reply for reply in replies if reply),
            commands=tuple(commands),
            understood=True,
            scene=None if scene == RESET_SCENE else scene,
            reset_scene=scene == RESET_SCENE,
        )

    def _understand_one(self, text: str) -> tuple[str, list[DeviceCommand], str | None] | None:
        result = recognize(text, self._intents)
        if result is None:
            return None
        log.debug("%r -> %s %s", text, result.intent.name, {k: e.value for k, e in result.entities.items()})
        if result.intent.name in _SCENE_INTENTS:
            return "", [], self._scene(result.intent.name, result.entities)
        outcome = self._handlers[result.intent.name](result.entities)
        if outcome is None:
            return None
        reply, raw = outcome
        prepared: list[DeviceCommand] = []
        for command in raw:
            try:
                prepared.append(self._registry.prepare(command)[1])
            except DeviceError as exc:
                log.warning("dropping command %s: %s", command, exc)
        if raw and not prepared:
            return None
        return reply, prepared, None

    # -- lights ---------------------------------------------------------------------------------

    def _lights(self, entities: Entities, default: list[str] | None = None) -> tuple[list[str], str]:
        """Target light names and how to say them; default (or all lights) when the utterance names none."""
        every = [d.name for d in self._registry.by_kind("light")]
        picked: list[str] = []
        for key in ("light", "light2", "light3"):
            if key in entities:
                value = str(entities[key].value)
                picked.extend(every if value == "*" else value.split(","))
        names = list(dict.fromkeys(picked or default or []))
        if not names or (set(names) == set(every) and len(every) > 1):
            return every, "all the lights"
        spoken = [f"the {_human(n)}" for n in names]
        said = spoken[0] if len(spoken) == 1 else ", ".join(spoken[:-1]) + " and " + spoken[-1]
        return names, said

    def _light_state(self, entities: Entities) -> Outcome:
        names, said = self._lights(entities)
        state = str(entities["state"].value)
        return f"Turning {state.lower()} {said}.", [light(n, state=state) for n in names]

    def _light_brightness(self, entities: Entities) -> Outcome:
        names, said = self._lights(entities)
        pct = round(float(entities["pct"].value))
        if pct <= 0:
            return f"Turning off {said}.", [light(n, state="OFF") for n in names]
        level = pct_to_brightness(pct)
        return f"Setting {said} to {pct} percent.", [light(n, state="ON", brightness=level) for n in names]

    def _light_step(self, entities: Entities) -> Outcome:
        up = entities["direction"].value == "up"
        lights = [d.name for d in self._registry.by_kind("light")]
        on = [n for n in lights if str((self._states(n) or {}).get("state", "")).upper() == "ON"]
        names, said = self._lights(entities, default=on)  # no light named: the ones that are on
        commands: list[DeviceCommand] = []
        for name in names:
            level = self._light_level(name)
            if not up and level == 0:
                continue  # dimming a light that is off leaves it off
            new = min(BRIGHTNESS_MAX, level + self._step) if up else max(1, level - self._step)
            commands.append(light(name, state="ON", brightness=new))
        if not commands:
            return f"{said[0].upper()}{said[1:]} {'is' if len(names) == 1 else 'are'} already off.", []
        return (f"Making {said} brighter." if up else f"Dimming {said}."), commands

    def _light_level(self, name: str) -> int:
        """Current brightness 0..254 (0 when off), DEFAULT_BRIGHTNESS when unknown."""
        state = self._states(name) or {}
        if str(state.get("state", "ON")).upper() == "OFF":
            return 0
        try:
            return int(state.get("brightness", DEFAULT_BRIGHTNESS))
        except (TypeError, ValueError):
            return DEFAULT_BRIGHTNESS

    def _light_color(self, entities: Entities) -> Outcome:
        names, said = self._lights(entities)
        commands: list[DeviceCommand]
        if "color" in entities:
            hex_value, label = str(entities["color"].value), entities["color"].text_clean
            commands = [light(n, state="ON", color_hex=hex_value) for n in names]
        else:
            label = entities["temperature"].text_clean
            label = label if label.endswith("light") else f"{label} light"
            mireds = int(entities["temperature"].value)
            commands = [light(n, state="ON", color_temp=mireds) for n in names]
        return f"Setting {said} to {label}.", commands

    # -- diffuser and music ---------------------------------------------------------------------

    def _device(self, entities: Entities, key: str, kind: str) -> str | None:
        if key in entities:
            return str(entities[key].value).split(",")[0]
        devices = self._registry.by_kind(kind)
        return devices[0].name if devices else None

    def _diffuser_state(self, entities: Entities) -> Outcome | None:
        name = self._device(entities, "diffuser", "diffuser")
        if name is None:
            return None
        state = str(entities["state"].value)
        return f"Turning {state.lower()} the {_human(name)}.", [diffuser(name, state=state)]

    def _diffuser_scent(self, entities: Entities) -> Outcome | None:
        name = self._device(entities, "diffuser", "diffuser")
        if name is None:
            return None
        scent = str(entities["scent"].value)
        return f"Setting the {_human(name)} to {scent}.", [diffuser(name, state="ON", scent=scent)]

    def _diffuser_intensity(self, entities: Entities) -> Outcome | None:
        name = self._device(entities, "diffuser", "diffuser")
        if name is None:
            return None
        pct = round(float(entities["pct"].value))
        if pct <= 0:
            return f"Turning off the {_human(name)}.", [diffuser(name, state="OFF")]
        return f"Setting the {_human(name)} to {pct} percent.", [diffuser(name, state="ON", intensity=pct)]

    def _music_action(self, entities: Entities) -> Outcome | None:
        name = self._device(entities, "player", "music")
        if name is None:
            return None
        action = str(entities["action"].value)
        genre = str(entities["genre"].value) if "genre" in entities else None
        if action == "play":
            reply = f"Playing some {genre}." if genre else "Playing music."
        else:
            reply = f"{'Pausing' if action == 'pause' else 'Stopping'} the music."
        return reply, [music(name, action=action, genre=genre)]

    def _music_volume(self, entities: Entities) -> Outcome | None:
        name = self._device(entities, "player", "music")
        if name is None:
            return None
        volume = round(float(entities["vol"].value))
        return f"Setting the volume to {volume}.", [music(name, volume=volume)]

    def _music_volume_step(self, entities: Entities) -> Outcome | None:
        name = self._device(entities, "player", "music")
        if name is None:
            return None
        up = entities["direction"].value == "up"
        try:
            current = int((self._states(name) or {}).get("volume", DEFAULT_VOLUME))
        except (TypeError, ValueError):
            current = DEFAULT_VOLUME
        volume = max(0, min(100, current + (VOLUME_STEP if up else -VOLUME_STEP)))
        return f"Turning the music {'up' if up else 'down'}.", [music(name, volume=volume)]

    @staticmethod
    def _scene(intent: str, entities: Entities) -> str:
        """A scene is the vibe agent's work: a preset name, the user's words, or a reset."""
        if intent == "ResetVibe":
            return RESET_SCENE
        if intent == "Scene":
            return str(entities["scene"].value)
        words = str(entities["mood"].value).split()
        while words and words[0] in (
            "like",
            "for",
            "of",
            "to",
        ):  # "set the mood for ...": a looser template won
            words.pop(0)
        return " ".join(words)
