"""Moods heard in a request that names no device (`moods.mood`): plain asserts."""

from __future__ import annotations

from pathlib import Path

from voiced.devices.registry import DeviceRegistry
from voiced.language import english, phrase, words
from voiced.mouth.understanding.home_words import Words
from voiced.mouth.understanding.moods import mood
from voiced.vibe.presets import preset_moods

REGISTRY = DeviceRegistry.load(Path(__file__).parent.parent / "devices")
MOODS = {name: tuple(map(phrase, said)) for name, said in preset_moods().items()}


def heard(text: str) -> str | None:
    return mood([words(text)], MOODS, Words.of(REGISTRY), english())


def test_a_time_of_day_is_weaker_than_a_mood_word() -> None:
    assert heard("cosy evening vibes please") == "cozy"
    assert heard("what a lovely afternoon it has turned out to be") is None  # a time alone is no mood


def test_an_exclamation_is_no_question() -> None:
    assert heard("what a day, I just want to unwind") == "relax"
    assert heard("what is a good film to unwind with") is None  # a question


def test_a_word_said_whole_before_the_same_word_plural() -> None:
    assert heard("time to hit the books") == "focus"  # "books" (focus), not "book" + s (reading)


def test_a_possessive_s_is_the_word() -> None:
    assert heard("we're about to eat, dinner's on the table") == "dinner"
