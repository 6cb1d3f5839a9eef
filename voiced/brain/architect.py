"""The architect (seed 000 §3.3): when the interview is complete, the user's scenes as a presets file.

The file is written next to the state, checked exactly like a user's own presets (every step
against the declared devices) before it replaces the last one, and the vibe agent then uses it.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import yaml

from voiced.brain.state import ConversationState, LightHabit
from voiced.devices.registry import DeviceRegistry
from voiced.language.replies import join, say
from voiced.vibe.presets import PresetPlanner

_LOGGER = logging.getLogger(__name__)
_DEFAULTS = {
    "morning": LightHabit(brightness_pct=80, warmth="cool"),
    "evening": LightHabit(brightness_pct=40, warmth="warm"),
}


def _light_step(device: str, habit: LightHabit) -> dict[str, Any]:
    step: dict[str, Any] = {"tool": "set_light", "device": device, "state": "on"}
    if habit.brightness_pct is not None:
        step["brightness_pct"] = habit.brightness_pct
    if habit.color:
        step["color"] = habit.color
    elif habit.warmth:
        step["color_temp"] = habit.warmth
    return step


def _habit(said: LightHabit, set_so: LightHabit | None) -> LightHabit:
    """How one light is liked: what was set on it, over what was said of the lights in general."""
    if set_so is None:
        return said
    return said.model_copy(update=set_so.model_dump(exclude_none=True))


class Architect:
    def __init__(self, registry: DeviceRegistry, folder: Path) -> None:
        self._registry = registry
        self.path = folder / "scenes.yaml"

    def _lights(self, state: ConversationState) -> list[str]:
        lights = self._registry.by_kind("light")
        rooms = set(state.user_profile.rooms)
        chosen = [d.name for d in lights if d.room in rooms]
        return chosen or [d.name for d in lights]

    def design(self, state: ConversationState) -> dict[str, Any]:
        prefs = state.preferences
        scent = next((s for s in prefs.scents if s not in prefs.disliked_scents), None)
        genre = next((g for g in prefs.genres if g not in prefs.disliked_genres), None)
        lights = self._lights(state)
        scenes: dict[str, Any] = {}
        for name, keywords, intensity, volume in (
            ("morning", ["morning", "wake", "start", "breakfast"], 30, 25),
            ("evening", ["evening", "dinner", "cozy", "cosy"], 35, 30),
        ):
            said = prefs.lights.get(name) or _DEFAULTS[name]
            # each light as the user set it at that time of day, the rest as they like the lights
            steps = [
                _light_step(light, _habit(said, prefs.device_lights.get(light, {}).get(name)))
                for light in lights
            ]
            if scent and self._registry.by_kind("diffuser"):
                steps.append({"tool": "set_scent", "state": "on", "scent": scent, "intensity": intensity})
            if genre and self._registry.by_kind("music"):
                steps.append({"tool": "play_music", "action": "play", "genre": genre, "volume": volume})
            scenes[name] = {"keywords": keywords, "reply": say("scene_coming_up", name=name), "steps": steps}
        relax = [dict(step) for step in scenes["evening"]["steps"]]
        for step in relax:
            if step["tool"] == "set_light":
                step["brightness_pct"] = min(int(step.get("brightness_pct", 40)), 30)
        relax.append({"tool": "narrate", "text": say("scene_relax_narration")})
        scenes["relax"] = {
            "keywords": ["relax", "calm", "unwind", "chill"],
            "reply": say("scene_relax_reply"),
            "steps": relax,
        }
        off: list[dict[str, Any]] = [{"tool": "set_light", "device": "*", "state": "off"}]
        if self._registry.by_kind("music"):
            off.append({"tool": "play_music", "action": "stop"})
        if self._registry.by_kind("diffuser"):
            off.append({"tool": "set_scent", "state": "off"})
        scenes["good_night"] = {
            "keywords": ["sleep", "night", "bed"],
            "reply": say("scene_good_night_reply"),
            "steps": off,
        }
        return scenes

    def write(self, state: ConversationState) -> tuple[PresetPlanner, str]:
        """Write and check the scenes; returns the presets and a spoken summary. Raises ConfigError."""
        scenes = self.design(state)
        draft = self.path.with_suffix(".draft.yaml")
        header = f"# Written by voiced's architect for session {state.session_id}; edit freely.\n"
        draft.write_text(header + yaml.safe_dump(scenes, sort_keys=False), encoding="utf-8")
        presets = PresetPlanner(draft, self._registry, "relax")  # checked before it replaces anything
        os.replace(draft, self.path)
        presets = PresetPlanner(self.path, self._registry, "relax")
        _LOGGER.info("architect: wrote %s (%s)", self.path, ", ".join(scenes))
        return presets, self.summary(state, scenes)

    @staticmethod
    def summary(state: ConversationState, scenes: dict[str, Any]) -> str:
        prefs = state.preferences
        likes = [item for item in (prefs.scents[:1] + prefs.genres[:1]) if item]
        names = [name.replace("_", " ") for name in scenes]
        key = "scenes_set_up_with" if likes else "scenes_set_up"
        return say(key, names, likes=join(likes))
