"""Remarks said around a request (`voiced/mouth/understanding/remarks.py`): plain asserts."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from voiced.devices.model import LightSet, MusicSet
from voiced.devices.registry import DeviceRegistry
from voiced.devices.vocabulary import HomeVocabulary
from voiced.language import english, phrase
from voiced.mouth.intents import LocalIntentAgent
from voiced.mouth.understanding.remarks import Remarks

REGISTRY = DeviceRegistry.load(Path(__file__).parent.parent / "devices")
REMARKS = Remarks.of(HomeVocabulary.of(REGISTRY), english(), moods=[phrase("romantic")])
STATES = {"music": {"state": "paused", "volume": 50}, "kitchen_light": {"state": "OFF"}}


def agent() -> LocalIntentAgent:
    return LocalIntentAgent(REGISTRY, STATES.get, room="living room", now=lambda: datetime(2026, 11, 28, 15))


def test_talk_around_a_request_is_dropped() -> None:
    assert REMARKS.without("okay I'm back, resume the music") == "resume the music"
    assert REMARKS.without("Right, he's gone. You can carry on now.") == "Right, You can carry on now."
    assert REMARKS.without("Lights off everywhere, I'm going to bed") == "Lights off everywhere"


def test_a_time_with_a_verb_of_its_own_is_talk_but_a_bare_time_is_when() -> None:
    said = "It's our anniversary tonight. Something romantic."
    assert REMARKS.without(said) == "Something romantic."
    assert (
        REMARKS.without("In an hour, turn off the bedroom light") == "In an hour, turn off the bedroom light"
    )


def test_nothing_that_carries_meaning_is_dropped() -> None:
    for kept in (
        "he said, turn off the lights",  # reported speech
        "my brother, turn off all the lights",  # who is speaking
        "don't bother, turn on the kitchen light",  # a negation
        "if it gets dark, turn on the lights",  # a condition
        "is it raining, turn on the kitchen light",  # a question
        "play the song, glad to loom",  # after "play": maybe the title
        "perfect, leave it like that for an hour",  # how long
        "what a day, honestly",  # all talk: nothing to keep apart
    ):
        assert REMARKS.without(kept) == kept, kept


def test_the_request_beside_the_talk_acts() -> None:
    reply = agent().understand("okay I'm back, resume the music")
    assert [type(c) for c in reply.commands] == [MusicSet] and reply.commands[0].action == "play"
    reply = agent().understand("I have finals tomorrow, turn on the kitchen light")
    assert reply.commands == (LightSet(device="kitchen_light", state="ON"),)


def test_the_guards_still_hold_beside_talk() -> None:
    assert agent().understand("okay I'm back, in ten minutes turn on the kitchen light").commands == ()
    assert agent().understand("he's gone, she said turn on the kitchen light").commands == ()
    assert agent().understand("turn on the kitchen fan, it's so hot").commands == ()  # a kind the home lacks


def test_words_heard_from_audio_keep_their_talk() -> None:
    """A clause of no known word in a transcript may be a name misheard: it still stops the rest."""
    typed = agent().understand("okay I'm back, resume the music")
    heard = agent().understand("okay I'm back, resume the music", heard=True)
    assert typed.commands and not heard.commands


def test_rooms_sharing_one_plural_noun_are_one_group() -> None:
    from voiced.mouth.understanding.text import split_utterance

    said = "set the bedroom and the living room lights to twenty five percent"
    assert split_utterance(said) == [said]
    assert split_utterance("turn on the kitchen and play jazz") == ["turn on the kitchen", "play jazz"]
    commands = agent().understand("make both the kitchen and bedroom lights warm white").commands
    assert sorted(c.device for c in commands) == ["bedroom_light", "kitchen_light"]


def test_a_statement_beside_a_request_is_talk_even_with_words_the_home_knows() -> None:
    assert REMARKS.without("the peppermint is giving me a headache, shut the diffuser off") == (
        "shut the diffuser off"
    )
    assert REMARKS.without("ok she hung up, you can unpause") == "you can unpause"
    assert REMARKS.without("Make it romantic, she's coming over in ten") == "Make it romantic"


def test_a_statement_is_kept_when_it_names_a_place_feels_or_wishes() -> None:
    for kept in (
        "the kitchen light is giving me a headache, switch it off",  # what "it" is
        "we're sitting in the dark, make it brighter",  # how the room feels is the request
        "I want some jazz, and turn on the kitchen light",  # a wish is a request
        "she said, turn off the lights",  # reported speech
    ):
        assert REMARKS.without(kept) == kept


def test_a_statement_carrying_the_mood_stays_without_its_time_when_the_request_points_back() -> None:
    said = "we're having a romantic dinner in ten minutes, set it up"
    assert REMARKS.without(said) == "we're having a romantic dinner, set it up"
    assert REMARKS.without("we're having a romantic dinner, set it up") == (
        "we're having a romantic dinner, set it up"
    )


def test_the_talk_names_the_mood_a_request_asks_for_in_words_of_its_own() -> None:
    moods = {"dinner": ("dinner", "romantic"), "movie": ("movie",)}
    talked = LocalIntentAgent(REGISTRY, STATES.get, moods=moods, now=lambda: datetime(2026, 11, 28, 15))
    reply = talked.understand(
        "we've got guests over for dinner in ten minutes, can you set the mood for a nice meal"
    )
    assert reply.scene == "dinner" and not reply.commands
    alone = LocalIntentAgent(REGISTRY, STATES.get, moods=moods, now=lambda: datetime(2026, 11, 28, 15))
    assert alone.understand("set the mood for a nice meal").scene == "a nice meal"  # the vibe agent's words


def test_a_request_said_to_someone_else_by_name_or_title_is_theirs() -> None:
    assert REMARKS.addressed("Jake, kill the lights, they're coming up the stairs!") == "Jake"
    assert REMARKS.addressed("Lady Mary, turn off the lamp") == "Lady Mary"
    assert REMARKS.addressed("Mum, turn the music down") == "Mum"
    for ours in (
        "Alexa, turn on the kitchen light",
        "ugh, turn it off",
        "Kitchen, lights on",
        "Jake turned it off",
    ):
        assert REMARKS.addressed(ours) is None
    reply = agent().understand("Sarah, switch off the kitchen light")
    assert not reply.commands and "Sarah" in reply.text
    assert REMARKS.without("Alexa, turn on the kitchen light") == "turn on the kitchen light"
