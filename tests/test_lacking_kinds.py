"""A home that is not the demo's (issue 28): a lights-only home is told what it has, and a request for
a kind our software knows but this home lacks is refused by name, heard fine (pure: no broker)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from voiced.devices.registry import DeviceRegistry
from voiced.language import english, words
from voiced.mouth.intents import LocalIntentAgent
from voiced.mouth.understanding.lacking import controlled, lacking

DEMO = DeviceRegistry.load(Path(__file__).parent.parent / "devices")


def home_of(*kinds: str) -> LocalIntentAgent:
    registry = DeviceRegistry([d for d in DEMO if d.kind in kinds])
    return LocalIntentAgent(
        registry, {}.get, room=None, scent_limit=80, now=lambda: datetime(2026, 11, 28, 12)
    )


LIGHTS_ONLY = home_of("light")


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("play some jazz", "music player"),
        ("turn up the music", "music player"),
        ("pause the music", "music player"),
        ("next song", "music player"),
        ("turn the music off", "music player"),
        ("set the diffuser to lavender", "diffuser"),
        ("turn on the diffuser", "diffuser"),
        ("make it smell like lavender", "diffuser"),
        ("set the scent to citrus", "diffuser"),
    ],
)
def test_a_kind_the_home_lacks_is_refused_by_name(text: str, kind: str) -> None:
    reply = LIGHTS_ONLY.understand(text)
    assert reply.commands == ()
    assert reply.text == f"There's no {kind} here, so I didn't change anything."
    assert reply.understood and not reply.missed  # typed and heard fine: nothing was misheard


def test_what_we_cannot_do_names_only_what_this_home_has() -> None:
    assert LIGHTS_ONLY.understand("open the windows").text == (
        "I can't open the windows: I can only control the lights."
    )
    assert home_of("light", "music").understand("turn on the oven").text == (
        "I can't turn on the oven: I can only control the lights and the music."
    )
    assert home_of("light", "diffuser", "music").understand("open the windows").text == (
        "I can't open the windows: I can only control the lights, the diffuser and the music."
    )


def test_a_home_with_the_kind_still_gets_it_done() -> None:
    assert [c.device for c in home_of("light", "music").understand("play some jazz").commands] == ["music"]
    assert [c.device for c in LIGHTS_ONLY.understand("turn on the kitchen light").commands] == [
        "kitchen_light"
    ]
    # "the music room" is a room here, not a music player asked for
    tokens = words("turn on the music room light")
    assert lacking(tokens, {"light"}, english(), taken={3, 4}) is None
    assert lacking(tokens, {"light"}, english()) == "music player"


def test_the_kinds_are_said_in_the_language_datas_order() -> None:
    assert controlled({"music", "light"}, english()) == ["the lights", "the music"]
    assert controlled(set(), english()) == []


def test_who_are_you_and_a_joke_name_only_what_the_home_has() -> None:
    for text in ("who are you?", "tell me a joke"):
        said = LIGHTS_ONLY.understand(text).text
        assert "I can set the lights" in said and "music" not in said and "scent" not in said, said
    assert "the lights and the music" in home_of("light", "music").understand("who are you?").text
