"""The ear's other readings: Whisper's beam search keeps them, and when the best one means nothing
here, the understanding tries those that cannot turn a mishearing into a wrong effect.

The pairs below are what tiny.en really heard on the spoken bench (best reading, next readings)."""

from __future__ import annotations

import functools
from datetime import datetime
from pathlib import Path

import pytest

from tests.speech_fixtures import spoken
from voiced.audio.pcm import EAR_RATE
from voiced.config import AsrConfig
from voiced.devices.model import DiffuserSet, LightSet
from voiced.devices.registry import DeviceRegistry
from voiced.devices.vocabulary import HomeVocabulary
from voiced.ear.whisper import WhisperTranscriber, vocabulary_hotwords, vocabulary_prompt
from voiced.mouth.intents import LocalIntentAgent
from voiced.mouth.understanding.readings import name_words, safe_readings

REGISTRY = DeviceRegistry.load(Path(__file__).parent.parent / "devices")
NAMES = name_words(HomeVocabulary.of(REGISTRY))


def agent() -> LocalIntentAgent:
    return LocalIntentAgent(REGISTRY, {}.get, room="living room", now=lambda: datetime(2026, 11, 24, 9, 0))


@pytest.mark.parametrize(
    ("heard", "reading"),
    [
        ("Set the room to 50%.", "Set the bedroom to 50%."),
        ("Sandalwood diffuser to 40%.", "Set the diffuser to 40%."),
        ("Make them every night warm.", "Make the bedroom light warm."),
        ("Turn the living room light, blues.", "Turn the living room light blue."),
        ("Turn the lights and gear on.", "Turn the lights in here on."),
        ("Set the kitchen light to cool right.", "Set the kitchen light to cool light."),
    ],
)
def test_a_reading_that_only_mends_what_was_misheard_may_be_tried(heard: str, reading: str) -> None:
    assert safe_readings(heard, [reading], NAMES) == [reading]


@pytest.mark.parametrize(
    ("heard", "reading", "why"),
    [
        ("Turn on the living room light blue.", "Turn on the living room light.", "drops a colour"),
        ("And set the memory light to 50%.", "And set them every night to 50%.", "widens to every"),
        ("Change bedroom up to 50%.", "Change every lump to 50%.", "widens to every"),
        ("Turn that room on bread.", "Turn that room up, red.", "swaps on for up"),
        ("Set the bedroom like 50%.", "Set the bathroom like 50%.", "swaps one room for another"),
        ("Turn every bump red.", "Turn on the bedroom.", "swaps red for bedroom"),
        ("Turn every bump red.", "Turn the lamp red.", "loses every for this room's lamp"),
        ("Play the song, glad to loom.", "Play the song.", "drops what to play"),
        ("Set the kitchen light to 50%.", "Set the kitchen light to 15%.", "swaps a number"),
        ("Sandalwood diffuser intensity to 70%.", "Sandalwood diffuser, intensity to 70%.", "the same words"),
        ("Sandalwood, fuser, intensity.", "Sandalwood diffuser.", "drops the setting the value was for"),
    ],
)
def test_a_reading_that_could_change_what_is_done_is_never_tried(heard: str, reading: str, why: str) -> None:
    assert safe_readings(heard, [reading], NAMES) == [], why


def test_a_miss_is_understood_from_the_first_safe_reading() -> None:
    reply = agent().understand(
        "Turn on the kitchen light. And set the memory light to 50%.",
        alternatives=(
            "Turn on the kitchen light. And set them every night to 50%.",  # widens: never tried
            "Turn on the kitchen light. And set the bedroom light to 50%.",
        ),
    )
    assert reply.understood and not reply.missed
    assert {(c.device, c.state, c.brightness) for c in reply.commands if isinstance(c, LightSet)} == {
        ("kitchen_light", "ON", None),
        ("bedroom_light", "ON", 127),
    }


def test_a_thing_named_like_ours_is_tried_again_but_a_real_refusal_stands() -> None:
    mended = agent().understand(
        "Set the bedroom brightest to the max.", alternatives=("Set the bedroom brightness to the max.",)
    )
    assert [(c.device, c.brightness) for c in mended.commands if isinstance(c, LightSet)] == [
        ("bedroom_light", 254)
    ]
    oven = agent().understand("Turn on the oven.", alternatives=("Turn on the light.",))
    assert oven.commands == () and oven.text.startswith("I can't turn on the oven")


def test_a_partly_understood_or_searching_reading_is_not_taken() -> None:
    local = agent()
    partial = local.understand(
        "Set the color of the bedroom then to read.",
        alternatives=("Set the color of the memory then to read.",),  # red, but for which light?
    )
    assert partial.commands == () and partial.missed
    search = local.understand(
        "Play the song, clatter, blues.", alternatives=("Play the song clatter, zoom.",)
    )
    assert search.commands == ()  # a title guessed from a second reading would be a guess sent


def test_a_good_first_reading_never_looks_at_the_others() -> None:
    reply = agent().understand("Set the diffuser to 40%.", alternatives=("Turn off everything.",))
    assert [type(c) for c in reply.commands] == [DiffuserSet]


@functools.cache
def transcribers() -> tuple[WhisperTranscriber, WhisperTranscriber]:
    vocabulary = HomeVocabulary.of(REGISTRY)
    hints = {"prompt": vocabulary_prompt(vocabulary), "hotwords": vocabulary_hotwords(vocabulary)}
    # over Whisper's own 30 s window, as faster-whisper's transcribe reads (the daemon's 10 s differ)
    beams = WhisperTranscriber(AsrConfig(short_window_s=30), Path("models"), **hints)
    # short_utterance_s 0: every utterance goes through faster-whisper's own transcribe
    plain = WhisperTranscriber(AsrConfig(short_utterance_s=0, beam_size=5), Path("models"), **hints)
    return beams, plain


def test_the_best_reading_is_what_faster_whisper_itself_hears_and_the_others_come_with_it() -> None:
    beams, plain = transcribers()
    others = []
    for text in [
        "Set the bedroom light to 40 percent.",
        "Play some jazz.",
        "Turn the living room light blue.",
    ]:
        audio = spoken(text)
        heard, reference = beams.transcribe_scored(audio), plain.transcribe_scored(audio)
        assert heard.text == reference.text
        assert heard.confidence == pytest.approx(reference.confidence, rel=1e-3)
        assert heard.text not in heard.alternatives
        assert reference.alternatives == ()  # long speech: one reading, as before
        others += heard.alternatives
    assert others  # beam search nearly always keeps another reading of a command


def test_every_heard_where_another_reading_names_a_light_is_asked_and_the_answer_acts() -> None:
    local = agent()
    asked = local.understand(
        "Change the brightness of every lamp to the highest.",
        alternatives=("Change the brightness of bedroom lamp to the highest.",),
    )
    assert asked.commands == () and asked.text == "Sorry, did you mean bedroom lamp or every lamp?"
    answered = local.understand("the bedroom one")
    assert [(c.device, c.brightness) for c in answered.commands if isinstance(c, LightSet)] == [
        ("bedroom_light", 254)
    ]
    clear = local.understand(
        "Turn off all the lights.", alternatives=("Turn off all the lights!", "Turn off all lights.")
    )
    assert len(clear.commands) == 3  # no other reading named a light in place of "all"


def test_a_name_only_another_reading_heard_is_asked_about_and_the_answer_acts() -> None:
    local = agent()
    heard, other = "Turn on the living room light.", "Turn on the living room. Light blue."
    asked = local.understand(heard, alternatives=(other,))
    assert asked.commands == () and asked.text == "Sorry, did you mean light or light blue?"
    blue = local.understand("blue")
    assert [(c.device, c.color_hex) for c in blue.commands if isinstance(c, LightSet)] == [
        ("living_room_light", "#0000FF")
    ]
    local.understand(heard, alternatives=(other,))
    assert local.understand("no").commands == ()


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("Stop.", "stop"),
        ("Please turn on the kitchen light.", "speech"),
        ("Okay.", "backchannel"),
    ],
)
def test_a_glance_at_a_burst_tells_its_kind_as_the_full_transcript_does(text: str, verdict: str) -> None:
    from voiced.ear.bargein import Evidence, Verdict, weigh

    beams, _plain = transcribers()
    audio = spoken(text)
    quick, full = beams.glance(audio).text, beams.transcribe_scored(audio).text
    short = len(audio) < 1.2 * EAR_RATE
    kinds = [weigh(Evidence(heard, "", 0.0, short), "", echo_db=-10.0) for heard in (quick, full)]
    assert kinds == [Verdict(verdict)] * 2, (quick, full)
