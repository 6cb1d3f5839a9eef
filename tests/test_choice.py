"""A question the intents would ask back between rooms, answered by the sound (voiced/ear/choice.py):
an option is taken only when it fits nearly as well as the words heard and clearly best; never
between every device of a kind and one room's."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from voiced.config import Config
from voiced.devices.registry import DeviceRegistry
from voiced.ear.choice import ChoiceCheck, Fit, picked, readings, unknown_name
from voiced.ear.transcriber import Hearing
from voiced.engines import private_intents
from voiced.mouth.dry_run import DryRun
from voiced.mouth.rehearsal import rehearsal_agent

REGISTRY = DeviceRegistry.load(Path(__file__).parent.parent / "devices")
ROOMS = ("the room", ("the bedroom", "the living room"))
AUDIO = np.zeros(1600, np.int16)


def scripted(fits: dict[str, float]) -> Fit:
    def fit(audio: np.ndarray, sentences: Sequence[str]) -> list[float]:
        return [fits.get(s, -100.0) for s in sentences]

    return fit


def test_the_intents_ask_which_room_of_the_room_and_say_what_about() -> None:
    dry = DryRun(private_intents(Config(), REGISTRY, rehearsal_agent))
    assert dry.asked("Set the room to 50%.") == ROOMS
    assert dry.asked("Set the bedroom to 50%.") is None


def test_each_option_is_said_in_place_of_the_words_heard_with_and_without_its_the() -> None:
    assert readings("Set the room to 50%.", ROOMS) == {
        "the bedroom": ["Set the bedroom to 50%.", "Set bedroom to 50%."],
        "the living room": ["Set the living room to 50%.", "Set living room to 50%."],
    }
    assert readings("Set it to 50%.", ROOMS) == {}  # the words asked about are not there as heard
    assert readings("Turn every lamp red.", ("every lamp", ("every lamp", "bedroom lamp"))) == {}


def test_an_option_is_picked_only_when_near_the_words_heard_and_clearly_best() -> None:
    assert picked(-14.0, {"the bedroom": -19.2, "the living room": -33.6}, 10, 8) == "the bedroom"
    assert picked(-5.4, {"the bedroom": -31.7, "the living room": -35.0}, 10, 8) is None  # "the room" said
    assert picked(-14.0, {"the bedroom": -19.2, "the living room": -24.0}, 10, 8) is None  # no clear winner
    assert picked(-14.0, {"the bedroom": -19.2}, 10, 8) is None  # nothing to choose between
    # a rival (never taken) must be beaten too
    assert picked(-14.0, {"the bedroom": -19.2, "the living room": -33.6}, 10, 8, [-15.0]) is None


def test_the_sound_answers_the_question_summed_over_both_models() -> None:
    heard = Hearing("Set the room to 50%.", 0.6)
    tiny = scripted(
        {"Set the room to 50%.": -6.4, "Set bedroom to 50%.": -7.3, "Set living room to 50%.": -17.6}
    )
    base = scripted(
        {"Set the room to 50%.": -7.6, "Set bedroom to 50%.": -11.9, "Set living room to 50%.": -16.0}
    )
    asked = lambda h: ROOMS if "the room" in h.text else None  # noqa: E731
    check = ChoiceCheck([tiny, base], asked, lambda h: True)
    assert check.checked(AUDIO, heard) == Hearing("Set bedroom to 50%.", 0.6)
    # nor is an option the intents would not act on taken
    assert ChoiceCheck([tiny, base], asked, lambda h: False).checked(AUDIO, heard) is heard
    # no question, or a failing model: the words heard stand
    lights = Hearing("Turn on the kitchen light.")
    assert check.checked(AUDIO, lights) is lights

    def broken(audio: np.ndarray, sentences: Sequence[str]) -> list[float]:
        raise RuntimeError("CTranslate2 failed")

    assert ChoiceCheck([broken], asked, lambda h: True).checked(AUDIO, heard) is heard
    # what the ear doubted, and its other readings, stay with the reading taken
    doubted = Hearing("Set the room to 50%.", 0.6, ("50",), ("Set the room to 15%.",))
    assert check.checked(AUDIO, doubted) == Hearing("Set bedroom to 50%.", 0.6, ("50",), doubted.alternatives)


def test_only_which_room_the_intents_ask_is_answered_by_the_sound() -> None:
    heard = Hearing("Make the kitchen light blue.", 0.6)
    light_blue = ("light", ("light", "light blue"))
    fits = scripted({"Make the kitchen light blue.": -5.0, "Make the kitchen light blue blue.": -40.0})
    assert ChoiceCheck([fits], lambda h: light_blue, lambda h: True).checked(AUDIO, heard) is heard
    rooms = ("bedroom", ("bedroom", "bathroom"))
    said = Hearing("Turn on the bedroom light.", 0.6)
    bathroom = scripted({"Turn on the bedroom light.": -9.0, "Turn on the bathroom light.": -5.0})
    assert ChoiceCheck([bathroom], lambda h: rooms, lambda h: True).checked(AUDIO, said) is said


def test_one_model_alone_is_held_to_half_the_margins() -> None:
    heard = Hearing("Set the room to 50%.", 0.6)
    said = ("Set the room to 50%.", "Set bedroom to 50%.", "Set living room to 50%.")
    asked = lambda h: ROOMS if "the room" in h.text else None  # noqa: E731
    # 6 ahead: enough for one model (4), not for two (8)
    one = scripted(dict(zip(said, (-7.0, -9.0, -15.0), strict=True)))
    assert ChoiceCheck([one], asked, lambda h: True).checked(AUDIO, heard).text == "Set bedroom to 50%."
    assert ChoiceCheck([one, scripted({})], asked, lambda h: True).checked(AUDIO, heard) is heard


LIGHT_ROOMS = ("bedroom", "kitchen", "living room")


def test_a_word_nobody_here_knows_where_a_room_goes_is_a_question_of_its_own() -> None:
    assert unknown_name("Set the memory light of 50%.", LIGHT_ROOMS) == (
        "the memory",
        ("the bedroom", "the kitchen", "the living room"),
    )
    capital = unknown_name("The memory lamp on.", LIGHT_ROOMS)
    assert capital is not None and capital[0] == "The memory"  # as it stands in the words heard
    assert unknown_name("Set the bedroom light to 50%.", LIGHT_ROOMS) is None  # a room
    assert unknown_name("Turn on the living room light.", LIGHT_ROOMS) is None
    assert unknown_name("Turn off all the lights.", LIGHT_ROOMS) is None
    assert unknown_name("Turn on the same light.", LIGHT_ROOMS) is None
    assert unknown_name("Set the memory light to 50%.", ("bedroom",)) is None  # nothing to choose


def test_a_room_in_its_place_must_beat_every_and_all_the_which_are_never_taken() -> None:
    # measured on espeak en-us at 230 wpm, both models summed
    dim = "Dim the memory light of 15%."
    sentences = {
        dim: -37.8,
        "Dim the bedroom light of 15%.": -41.3,
        "Dim the kitchen light of 15%.": -50.0,
        "Dim the living room light of 15%.": -60.6,
        "Dim every light of 15%.": -32.7,
        "Dim all the light of 15%.": -57.3,
    }
    rooms = lambda: LIGHT_ROOMS  # noqa: E731
    nothing_asked = lambda h: None  # noqa: E731
    check = ChoiceCheck([scripted(sentences)], nothing_asked, lambda h: False, rooms)
    heard = Hearing(dim, 0.5)
    assert check.checked(AUDIO, heard) is heard  # "dim every light" said: the bedroom is not taken
    beaten = {**sentences, "Dim every light of 15%.": -60.0, "Dim the bedroom light of 15%.": -36.0}
    taken = ChoiceCheck([scripted(beaten)], nothing_asked, lambda h: h.text != dim, rooms).checked(
        AUDIO, heard
    )
    assert taken == Hearing("Dim the bedroom light of 15%.", 0.5)
    # a room that fits worse than the word heard is not taken: "the bathroom light" said is no bedroom
    worse = {**beaten, "Dim the bedroom light of 15%.": -39.0}
    kept = ChoiceCheck([scripted(worse)], nothing_asked, lambda h: h.text != dim, rooms).checked(AUDIO, heard)
    assert kept is heard
    # a reading the intents act on as it is asks nothing of the sound
    acted = ChoiceCheck([scripted(beaten)], nothing_asked, lambda h: True, rooms)
    assert acted.checked(AUDIO, heard) is heard
