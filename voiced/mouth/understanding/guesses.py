"""When a fuzzy guess may act: every word explained, its own key word said, its target named.

HA's fuzzy matcher scores word n-grams and skips words it does not know, so on its own it
turns "the kitchen light is on" into "turn off the kitchen light" and "turn on the garden
lights" into "this room's light green". A guess is taken only when each word of the utterance is
a slot it filled, a stop word, or a word its intent uses; when one of the intent's key words
was said (and none of the opposite); and, for lights, when a name or a room (or "here", "all")
was said rather than taken from context.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from voiced.language import english
from voiced.mouth.understanding.home import Slot

SCOPE = frozenset(["here", "all", "every", "each", "everything", "everywhere", "house", "home", "room"])
LIGHT = frozenset(["light", "lights", "lamp", "lamps", "lighting"])


@dataclass(frozen=True)
class Policy:
    keys: frozenset[str] | None  # one must be said (None: the slots say enough)
    words: frozenset[str] = frozenset()  # more words the intent may use
    target: bool = False  # a name or a room must be said
    forbid: frozenset[str] = frozenset()  # words of the opposite request
    needs: tuple[str, ...] = ()  # slots that must have been said
    also: frozenset[str] | None = None  # and one of these too


def _p(keys: str | None, words: str = "", **kwargs: object) -> Policy:
    key_set = frozenset(keys.split()) if keys is not None else None
    return Policy(key_set, frozenset(words.split()) | (key_set or frozenset()), **kwargs)  # type: ignore[arg-type]


EVERY = frozenset(["everything", "all"])
ON, OFF = "on activate illuminate start enable", "off out deactivate kill disable shut"
POLICIES: dict[str, Policy] = {
    "HassTurnOn": _p(ON, "up " + " ".join(LIGHT), target=True, forbid=frozenset(OFF.split())),
    "HassTurnOff": _p(OFF, "down " + " ".join(LIGHT), target=True, forbid=frozenset(["on"])),
    "HassLightSet": _p(
        None,
        "brightness bright percent color colour level max maximum min minimum highest lowest temperature "
        "kelvin white dim up down " + " ".join(LIGHT),
        target=True,
    ),
    "HassSetVolume": _p("volume sound", "percent up down increase decrease raise lower level music speaker"),
    "HassSetVolumeRelative": _p(
        "volume sound louder quieter", "percent up down increase decrease raise lower by music speaker"
    ),
    "HassMediaPause": _p("pause hold freeze", "music song track playback media player"),
    "HassMediaUnpause": _p("resume unpause continue", "music playing playback song track media player"),
    "HassMediaNext": _p("next skip forward", "song track one music"),
    "HassMediaPrevious": _p("previous back rewind", "song track one last again go music"),
    "LightStepUp": _p(
        "brighter brighten lighter dark", "up more bit little too its it's is " + " ".join(LIGHT)
    ),
    "LightStepDown": _p(
        "dimmer darker dim bright lower", "down less bit little too its it's is " + " ".join(LIGHT)
    ),
    "LightColor": _p(None, "color colour warm cool white warmer cooler " + " ".join(LIGHT), target=True),
    "DiffuserStateOn": _p("on start run", "diffuser scent minutes minute", needs=("diffuser",)),
    "DiffuserStateOff": _p("off stop", "diffuser scent", needs=("diffuser",)),
    "DiffuserScent": _p(None, "diffuser scent smell aroma fragrance on use like want", needs=("scent",)),
    "DiffuserIntensity": _p("diffuser scent intensity", "percent strength", needs=("pct",)),
    "EverythingOn": _p("on", "everything all devices things stuff", forbid=frozenset(["off"]), also=EVERY),
    "EverythingOff": _p("off", "everything all devices things stuff", forbid=frozenset(["on"]), also=EVERY),
}


def acceptable(intent: str, slots: dict[str, Slot], text: str, stop_words: Collection[str]) -> bool:
    """Whether a fuzzy guess (`intent` as the fuzzy matcher names it) may be acted on."""
    policy = POLICIES.get(intent)
    if policy is None:
        return False  # questions, time, scenes: never guessed
    words = text.split()
    said = {w for slot in slots.values() for w in slot.text.lower().split()}
    if any(
        w not in said
        and w not in stop_words
        and w not in english().guess_generic
        and w not in SCOPE
        and w not in policy.words
        for w in words
    ):
        return False
    if policy.keys is not None and not policy.keys & set(words):
        return False
    if policy.also is not None and not policy.also & set(words):
        return False
    if policy.forbid & set(words):
        return False
    if any(not (k in slots and slots[k].text) for k in policy.needs):
        return False
    if policy.target:
        if "that room" in text:
            return False  # a room not named and not this one ("change that room lamp": Whisper's "bedroom")
        named = any(slots[k].text for k in ("name", "area") if k in slots)
        return named or bool(SCOPE & set(words))
    return True
