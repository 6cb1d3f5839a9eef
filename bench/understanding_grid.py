"""A tuning probe for dialogue: every first request x every phrasing of a follow-up or a correction x
every target, scored like the fresh typed sets (bench/understanding/typed.py) on a private broker.

The phrasings are classes of how people carry a request over ("now the bedroom", "what about the
lounge?") or correct one ("no, I meant the bedroom"), written from the kinds of follow-up the fresh
sets' tuning halves hold, never from the held-out half. Like the tuning half, it is material for
rules, not a figure to report: the held-out half says whether a rule generalizes.

Run: .venv/bin/python bench/understanding_grid.py [--family follow|correct] [--show N]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import logging
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.understanding import score, typed  # noqa: E402
from tests.conftest import Broker  # noqa: E402
from voiced.devices.registry import DeviceRegistry  # noqa: E402

FIRSTS: dict[str, dict[str, Any]] = {
    "turn on the kitchen light": {"power": "on"},
    "set the kitchen light to 30 percent": {"power": "on", "brightness": 30},
    "make the kitchen light blue": {"power": "on", "color": "blue"},
    "turn off the kitchen light": {"power": "off"},
    "make the kitchen light warm white": {"power": "on", "white": "warm"},
}
FOLLOW = [
    "the X as well",
    "and the X",
    "the X too",
    "same for the X",
    "do the X too",
    "also the X",
    "what about the X",
    "now the X",
    "the X please",
    "same in the X",
    "and X",
    "X too",
    "the X light as well",
    "do the same in the X",
    "and in the X",
    "the X one too",
    "X as well please",
    "ditto for the X",
    "and the X one",
    "then the X",
    "how about the X?",
    "now do the X",
]
CORRECT = [
    "no, the X",
    "no, the X one",
    "not the kitchen, the X",
    "I meant the X",
    "sorry, I meant the X",
    "wrong one, the X",
    "no I said the X",
    "actually the X",
    "no no, the X light",
    "not that one, the X",
    "oops, the X",
    "no wait, the X",
    "the X, not the kitchen",
    "no, I wanted the X",
]
# After a request on one device, a change of it without its name; with what it must end up as.
FIRST_OF = {
    "kitchen_light": "turn on the kitchen light",
    "diffuser": "put the diffuser on",
    "music": "play some jazz",
}
ONWARD = {
    "kitchen_light": [
        ("make it brighter", {"brightness": "up"}),
        ("a bit brighter", {"brightness": "up"}),
        ("brighter please", {"brightness": "up"}),
        ("dim it", {"brightness": "down"}),
        ("bit dimmer", {"brightness": "down"}),
        ("now red", {"color": "red"}),
        ("make it red", {"color": "red"}),
        ("red instead", {"color": "red"}),
        ("change it to red", {"color": "red"}),
        ("and red", {"color": "red"}),
        ("make that red", {"color": "red"}),
        ("turn it off again", {"power": "off"}),
        ("off again", {"power": "off"}),
        ("switch it off", {"power": "off"}),
        ("now off", {"power": "off"}),
        ("50 percent", {"brightness": 50}),
        ("make it 50", {"brightness": 50}),
        ("half", {"brightness": 50}),
        ("to 50 please", {"brightness": 50}),
        ("warmer", {"white": "warmer"}),
        ("a bit warmer please", {"white": "warmer"}),
        ("make it warm white", {"white": "warm"}),
        ("too bright", {"brightness": "down"}),
        ("bit much, dim it", {"brightness": "down"}),
        ("up a bit", {"brightness": "up"}),
    ],
    "diffuser": [
        ("make it citrus", {"scent": "citrus"}),
        ("citrus instead", {"scent": "citrus"}),
        ("switch it to citrus", {"scent": "citrus"}),
        ("now citrus", {"scent": "citrus"}),
        ("stronger", {"intensity": "up"}),
        ("a bit stronger", {"intensity": "up"}),
        ("turn it up", {"intensity": "up"}),
        ("weaker please", {"intensity": "down"}),
        ("turn it down a bit", {"intensity": "down"}),
        ("too strong", {"intensity": "down"}),
        ("60 percent", {"intensity": 60}),
        ("make it 60", {"intensity": 60}),
        ("turn it off", {"power": "off"}),
        ("for 20 minutes", {"minutes": 20}),
        ("and run it for 20 minutes", {"minutes": 20}),
    ],
    "music": [
        ("louder", {"volume": "up"}),
        ("a bit louder please", {"volume": "up"}),
        ("turn it up", {"volume": "up"}),
        ("turn it down", {"volume": "down"}),
        ("quieter", {"volume": "down"}),
        ("too loud", {"volume": "down"}),
        ("volume 70", {"volume": 70}),
        ("make it 70", {"volume": 70}),
        ("turn it up to 70", {"volume": 70}),
        ("louder, like 70", {"volume": 70}),
        ("pause it", {"play": "pause"}),
        ("stop it", {"play": "stop"}),
        ("skip this one", {"play": "next"}),
        ("next song", {"play": "next"}),
        ("rock instead", {"genre": "rock"}),
        ("change it to rock", {"genre": "rock"}),
        ("something else, rock", {"genre": "rock"}),
    ],
}


def onward() -> list[typed.Conversation]:
    """A request on one device, then a change of it said without its name."""
    out: list[typed.Conversation] = []
    for device, changes in ONWARD.items():
        first_effect = {"power": "on"} if device != "music" else {"play": "on", "genre": "jazz"}
        start = {device: {"power": "on", "brightness": 20} if device == "kitchen_light" else {}}
        for said, effect in changes:
            wanted = {**effect}
            if device != "music" and "power" not in wanted:
                wanted["power"] = "on"
            if device == "music" and "genre" in wanted:
                wanted["play"] = "on"
            turns = (
                typed.Turn(
                    say=FIRST_OF[device], expect={device: first_effect} if device != "kitchen_light" else {}
                ),
                typed.Turn(say=said, expect={device: wanted}),
            )
            out.append(typed.Conversation(ident=f"grid:{len(out)}", kind="context", turns=turns, start=start))
    return out


# Requests that must change nothing: each way of not asking, around each request.
GUARDED = [
    "my wife said to {r}",
    "she told me to {r}",
    "he keeps asking me to {r}",
    "don't {r}",
    "please don't {r}",
    "no need to {r}",
    "you don't have to {r}",
    "did you {r}?",
    "can you {r} in ten minutes?",
    "{r} in an hour",
    "{r} tomorrow morning",
    "{r} at 11 pm",
    "if it gets dark, {r}",
    "when I leave, {r}",
    "I already told you to {r}",
    "yesterday you didn't {r}",
    "I {r}ed earlier",
    "remind me to {r}",
    "should I {r}?",
    "why did you {r}?",
    '"{r}!" he shouted on the telly',
    "never {r}",
    "I was going to {r} but never mind",
    "last night I asked you to {r}",
]
GUARDED_REQUESTS = [
    "turn off the kitchen light",
    "turn on the bedroom light",
    "play some jazz",
    "make the lounge light red",
    "turn on the diffuser",
]


# Remarks about the home that ask for nothing.
TALK = [
    "I love this song",
    "the kitchen light is nice",
    "this jazz is great",
    "that lavender smells amazing",
    "my bedroom light is broken",
    "the lounge looks lovely in blue",
    "is it me or is the music loud?",
    "thanks for turning on the light",
    "I'll turn the lights off later",
    "I'm going to turn off the lights myself",
    "we should get a new lamp",
    "the diffuser is running low on oil",
    "the kids love the purple light",
    "I left the kitchen light on again",
    "she likes it when the music is loud",
    "red is my favourite colour",
    "jazz was my dad's favourite",
    "the bedroom is a mess",
    "can't believe how bright the sun is today",
    "I'll play some rock at the party tomorrow",
]


def guarded() -> list[typed.Conversation]:
    out: list[typed.Conversation] = []
    for template in GUARDED:
        for request in GUARDED_REQUESTS:
            said = template.format(r=request)
            if "{r}ed" in template:
                said = template.replace(
                    "{r}ed",
                    request.replace("turn", "turned").replace("play", "played").replace("make", "made"),
                )
            turn = typed.Turn(say=said, expect={})
            out.append(typed.Conversation(ident=f"grid:{len(out)}", kind="must_not_act", turns=(turn,)))
    for said in TALK:
        start = {"kitchen_light": {"power": "on"}, "music": {"play": "on"}}
        turn = typed.Turn(say=said, expect={})
        out.append(
            typed.Conversation(ident=f"grid:{len(out)}", kind="must_not_act", turns=(turn,), start=start)
        )
    return out


# Two devices with their own values in one breath, or all of a kind but one.
ALL_ON = {d: {"power": "on"} for d in ("kitchen_light", "bedroom_light", "living_room_light")}
TWO: list[tuple[str, dict[str, dict[str, Any]]]] = [
    (
        "kitchen light to 20 and bedroom light to 80",
        {
            "kitchen_light": {"power": "on", "brightness": 20},
            "bedroom_light": {"power": "on", "brightness": 80},
        },
    ),
    (
        "set the kitchen to 20 percent and the bedroom to 80",
        {
            "kitchen_light": {"power": "on", "brightness": 20},
            "bedroom_light": {"power": "on", "brightness": 80},
        },
    ),
    (
        "kitchen 20, bedroom 80",
        {
            "kitchen_light": {"power": "on", "brightness": 20},
            "bedroom_light": {"power": "on", "brightness": 80},
        },
    ),
    (
        "make the kitchen light red and the bedroom light blue",
        {"kitchen_light": {"power": "on", "color": "red"}, "bedroom_light": {"power": "on", "color": "blue"}},
    ),
    (
        "kitchen red, lounge green",
        {
            "kitchen_light": {"power": "on", "color": "red"},
            "living_room_light": {"power": "on", "color": "green"},
        },
    ),
    (
        "turn on the kitchen light and turn off the bedroom light",
        {"kitchen_light": {"power": "on"}, "bedroom_light": {"power": "off"}},
    ),
    ("kitchen on, bedroom off", {"kitchen_light": {"power": "on"}, "bedroom_light": {"power": "off"}}),
    (
        "scent to citrus and put on some jazz",
        {"diffuser": {"power": "on", "scent": "citrus"}, "music": {"play": "on", "genre": "jazz"}},
    ),
    (
        "citrus in the diffuser and some jazz please",
        {"diffuser": {"power": "on", "scent": "citrus"}, "music": {"play": "on", "genre": "jazz"}},
    ),
    (
        "play rock and make the lounge light purple",
        {"music": {"play": "on", "genre": "rock"}, "living_room_light": {"power": "on", "color": "purple"}},
    ),
    (
        "dim the bedroom light and turn the music down",
        {"bedroom_light": {"power": "on", "brightness": "down"}, "music": {"volume": "down"}},
    ),
    (
        "lavender at 30 percent and the bedroom light at 10",
        {
            "diffuser": {"power": "on", "scent": "lavender", "intensity": 30},
            "bedroom_light": {"power": "on", "brightness": 10},
        },
    ),
]
BUT = [
    "every light off but the bedroom",
    "all the lights off except the bedroom",
    "turn off all lights apart from the bedroom",
    "switch off every light except the bedroom one",
    "lights off, not the bedroom",
    "all lights off except in the bedroom",
    "turn everything off but the bedroom light",
    "kill all the lights but leave the bedroom on",
]


def two() -> list[typed.Conversation]:
    out: list[typed.Conversation] = []
    start = {"bedroom_light": {"power": "on"}, "music": {"play": "on", "genre": "pop", "volume": 50}}
    for said, expect in TWO:
        out.append(
            typed.Conversation(
                ident=f"grid:{len(out)}",
                kind="two_devices",
                turns=(typed.Turn(say=said, expect=expect),),
                start=dict(start),
            )
        )
    for said in BUT:
        expect = {"kitchen_light": {"power": "off"}, "living_room_light": {"power": "off"}}
        out.append(
            typed.Conversation(
                ident=f"grid:{len(out)}",
                kind="two_devices",
                turns=(typed.Turn(say=said, expect=expect),),
                start=dict(ALL_ON),
            )
        )
    return out


# A mood for the whole home in everyday words (scene names as in FORMAT.md).
MOODS: list[tuple[str, str]] = [
    ("date night", "dinner"),
    ("we're having a romantic dinner", "dinner"),
    ("dinner time", "dinner"),
    ("friends are coming over for dinner", "dinner"),
    ("set the mood for dinner", "dinner"),
    ("party time!", "party"),
    ("let's get this party started", "party"),
    ("it's my birthday, let's celebrate", "party"),
    ("we're having people over tonight", "party"),
    ("time to focus", "focus"),
    ("I need to concentrate", "focus"),
    ("I'm working from home today", "focus"),
    ("study time", "focus"),
    ("homework time for the kids", "focus"),
    ("reading time", "reading"),
    ("I'm going to read for a bit", "reading"),
    ("let me curl up with a book", "reading"),
    ("movie night", "movie"),
    ("let's watch a film", "movie"),
    ("we're about to watch a movie", "movie"),
    ("make it cozy in here", "cozy"),
    ("let's get cosy", "cozy"),
    ("it's a rainy afternoon", "cozy"),
    ("time for bed", "bedtime"),
    ("good night", "bedtime"),
    ("I'm off to bed", "bedtime"),
    ("I'm going to sleep", "bedtime"),
    ("good morning", "wake_up"),
    ("rise and shine", "wake_up"),
    ("time to get up", "wake_up"),
    ("cleaning time", "cleaning"),
    ("let's tidy up the house", "cleaning"),
    ("time to do the chores", "cleaning"),
    ("I need to relax", "relax"),
    ("help me unwind", "relax"),
    ("long day, I just want to chill", "relax"),
    ("spa evening", "relax"),
    ("set a romantic mood", "dinner"),
    ("something romantic please", "dinner"),
    ("make it feel like a cinema", "movie"),
]


def moods() -> list[typed.Conversation]:
    out: list[typed.Conversation] = []
    for said, mood in MOODS:
        turn = typed.Turn(say=said, expect={"scene": {"mood": mood}})
        out.append(typed.Conversation(ident=f"grid:{len(out)}", kind="mood", turns=(turn,)))
    return out


# One request: a way of asking, with {light} / {n} / {colour} / {scent} / {genre} in place.
PLAIN = {
    "{verb} the {light} to {n} percent": {"power": "on", "brightness": "{n}"},
    "{verb} the {light} up to {n}%": {"power": "on", "brightness": "{n}"},
    "{verb} the {light} down to {n}": {"power": "on", "brightness": "{n}"},
    "{light} to {n} please": {"power": "on", "brightness": "{n}"},
    "{light} on at {n}": {"power": "on", "brightness": "{n}"},
    "{light} at {n} percent": {"power": "on", "brightness": "{n}"},
    "can I have the {light} at {n} percent": {"power": "on", "brightness": "{n}"},
    "can I have the {light} in {colour}": {"power": "on", "color": "{colour}"},
    "{verb} the {light} {colour}": {"power": "on", "color": "{colour}"},
    "I'd like the {light} {colour}": {"power": "on", "color": "{colour}"},
    "{colour} {light} please": {"power": "on", "color": "{colour}"},
    "{light} {colour}": {"power": "on", "color": "{colour}"},
}
VERBS = [
    "set",
    "put",
    "drop",
    "crank",
    "bump",
    "lower",
    "raise",
    "turn",
    "dial",
    "bring",
    "take",
    "make",
    "get",
]
LIGHTS = {
    "kitchen light": "kitchen_light",
    "bedroom lamp": "bedroom_light",
    "lounge light": "living_room_light",
}
OTHERS = [
    ("{scent} at {n} percent", {"diffuser": {"power": "on", "scent": "{scent}", "intensity": "{n}"}}),
    ("I'd love some {scent}", {"diffuser": {"power": "on", "scent": "{scent}"}}),
    ("can we have some {scent}", {"diffuser": {"power": "on", "scent": "{scent}"}}),
    ("{scent} in the diffuser please", {"diffuser": {"power": "on", "scent": "{scent}"}}),
    ("diffuser on with {scent}", {"diffuser": {"power": "on", "scent": "{scent}"}}),
    ("get the {scent} going", {"diffuser": {"power": "on", "scent": "{scent}"}}),
    ("I'm in the mood for some {genre}", {"music": {"play": "on", "genre": "{genre}"}}),
    ("stick some {genre} on", {"music": {"play": "on", "genre": "{genre}"}}),
    ("let's have some {genre}", {"music": {"play": "on", "genre": "{genre}"}}),
    ("{genre} please", {"music": {"play": "on", "genre": "{genre}"}}),
    ("can you put on {genre}", {"music": {"play": "on", "genre": "{genre}"}}),
    ("music up to {n}", {"music": {"volume": "{n}"}}),
    ("volume {n}", {"music": {"volume": "{n}"}}),
    ("{verb} the volume to {n}", {"music": {"volume": "{n}"}}),
    ("{verb} the music to {n} percent", {"music": {"volume": "{n}"}}),
    ("{verb} the diffuser to {n}", {"diffuser": {"power": "on", "intensity": "{n}"}}),
]
FILL = {
    "n": ["15", "60", "90"],
    "colour": ["red", "yellow", "purple"],
    "scent": ["citrus", "lavender"],
    "genre": ["rock", "jazz"],
}
TARGETS = {"bedroom": "bedroom_light", "lounge": "living_room_light", "living room": "living_room_light"}
UNDONE: dict[str, Any] = {
    "power": "off"
}  # what the kitchen light is put back to after a correction (it started off)


def _filled(value: Any, slots: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {k: _filled(v, slots) for k, v in value.items()}
    if isinstance(value, str) and value.startswith("{"):
        said = slots[value.strip("{}")]
        return int(said) if said.isdigit() else said
    return value


def plain() -> list[typed.Conversation]:
    """Each request said with each verb, light and value: one turn, the lights off to start."""
    asked = [(t, {"{light}": e}) for t, e in PLAIN.items()] + OTHERS
    out: list[typed.Conversation] = []
    for template, effect in asked:
        for verb in VERBS if "{verb}" in template else [""]:
            for light in LIGHTS if "{light}" in template else [""]:
                for i in range(3):
                    slots = {k: v[i % len(v)] for k, v in FILL.items()} | {"verb": verb, "light": light}
                    said = template.format(**slots)
                    expect = {
                        (LIGHTS[light] if k == "{light}" else k): _filled(v, slots) for k, v in effect.items()
                    }
                    turn = typed.Turn(say=said, expect=expect)
                    out.append(typed.Conversation(ident=f"grid:{len(out)}", kind="plain", turns=(turn,)))
    return out


def conversations(family: str) -> list[typed.Conversation]:
    if family == "plain":
        return plain()
    if family == "onward":
        return onward()
    if family == "guarded":
        return guarded()
    if family == "two":
        return two()
    if family == "mood":
        return moods()
    out: list[typed.Conversation] = []
    phrasings = FOLLOW if family == "follow" else CORRECT
    for (first, effect), said, (target, device) in itertools.product(
        FIRSTS.items(), phrasings, TARGETS.items()
    ):
        off_first = effect == {"power": "off"}
        start = {"kitchen_light": {"power": "on"}, device: {"power": "on"}} if off_first else {}
        second: dict[str, dict[str, Any]] = {device: effect}
        if family == "correct":
            second["kitchen_light"] = {"power": "on"} if off_first else UNDONE
        turns = (
            typed.Turn(say=first, expect={"kitchen_light": effect}),
            typed.Turn(say=said.replace("X", target), expect=second),
        )
        out.append(typed.Conversation(ident=f"grid:{len(out)}", kind="context", turns=turns, start=start))
    return out


def _shape(said: str) -> str:
    """The phrasing with its target and values taken out, to count misses by phrasing."""
    for word in [*TARGETS, *LIGHTS, *(v for vs in FILL.values() for v in vs)]:
        said = said.replace(word, "X")
    return said


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--family",
        choices=("follow", "correct", "plain", "onward", "guarded", "two", "mood"),
        default="follow",
    )
    parser.add_argument("--show", type=int, default=20, help="list this many turns not exact")
    args = parser.parse_args()
    logging.basicConfig(level=logging.CRITICAL)
    registry = DeviceRegistry.load(score.DEVICES)
    convs = conversations(args.family)
    with tempfile.TemporaryDirectory(prefix="bench-grid-") as tmp:
        broker = Broker(Path(tmp))
        broker.start()
        try:
            results = asyncio.run(typed.run(convs, broker.port, registry))
        finally:
            broker.stop()
    second = [r for r in results if r.index == len(r.conversation.turns) - 1]
    bad = [r for r in second if r.outcome != "exact"]
    print(f"{args.family}: {len(second) - len(bad)} of {len(second)} last turns exact")
    by_phrasing = Counter((_shape(r.conversation.turns[-1].say), r.outcome) for r in bad)
    for (phrasing, outcome), n in by_phrasing.most_common():
        print(f"  {n:3} {outcome:5} {phrasing!r}")
    for r in bad[: args.show]:
        said = " -> ".join(repr(t.say) for t in r.conversation.turns)
        print(f"  {r.outcome.upper():5} {said}: {r.said!r} {score._commands(r.published)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
