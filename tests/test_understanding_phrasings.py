"""Phrasings a new-user probe found missed: corrections, values per device, several lights one
colour, warmer and cooler whites, the scent stronger or weaker, a device spoken to, a bare "stop",
indirect asks, questions about colour and what is on, and a one-word title the ear's readings agree
on (pure: no broker, the real grammar)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from voiced.devices.model import DiffuserSet, LightSet, MusicSet
from voiced.devices.registry import DeviceRegistry
from voiced.mouth.intents import LocalIntentAgent

REGISTRY = DeviceRegistry.load(Path(__file__).parent.parent / "devices")
STATES: dict[str, dict[str, Any]] = {
    "kitchen_light": {"state": "ON", "brightness": 127, "color_temp": 300, "color_mode": "color_temp"},
    "bedroom_light": {"state": "OFF", "brightness": 200},
    "living_room_light": {
        "state": "ON",
        "brightness": 240,
        "color": {"x": 0.136, "y": 0.04},
        "color_mode": "xy",
    },
    "diffuser": {"state": "ON", "scent": "citrus", "intensity": 50},
    "music": {"state": "playing", "genre": "jazz", "volume": 40},
}


def agent(states: dict[str, dict[str, Any]] | None = None, room: str | None = None) -> LocalIntentAgent:
    known = STATES if states is None else states
    return LocalIntentAgent(
        REGISTRY, known.get, room=room, scent_limit=80, now=lambda: datetime(2026, 11, 25, 12, 0)
    )


AGENT = agent()


# -- corrections right after a turn ------------------------------------------------------------


def test_no_the_bedroom_one_redoes_the_request_there_and_puts_the_first_back() -> None:
    local = agent({**STATES, "kitchen_light": {"state": "OFF", "brightness": 127}})
    assert local.understand("turn on the kitchen light").commands == (
        LightSet(device="kitchen_light", state="ON"),
    )
    reply = local.understand("no, the bedroom one")
    assert reply.commands == (
        LightSet(device="kitchen_light", state="OFF"),  # as it was before the first request
        LightSet(device="bedroom_light", state="ON"),
    )
    assert "bedroom" in reply.text and "put the kitchen light back" in reply.text


def test_actually_the_kitchen_moves_a_brightness_to_the_kitchen() -> None:
    local = agent()
    local.understand("set the bedroom light to 30%")
    reply = local.understand("actually the kitchen")
    assert reply.commands[-1] == LightSet(device="kitchen_light", state="ON", brightness=76)
    assert reply.commands[0].device == "bedroom_light"  # put back as it was


def test_not_blue_green_changes_the_colour_of_the_same_light() -> None:
    local = agent()
    local.understand("turn the kitchen light blue")
    reply = local.understand("not blue, green")
    assert reply.commands == (LightSet(device="kitchen_light", state="ON", color_hex="#00FF00"),)
    assert "green" in reply.text and "undo" not in reply.text


def test_a_correction_needs_a_request_before_it_and_an_opening() -> None:
    assert agent().understand("no, the bedroom one").commands == ()  # nothing to correct
    local = agent()
    local.understand("turn on the kitchen light")
    assert local.understand("no more music").commands == (MusicSet(device="music", action="stop"),)
    local.understand("turn on the kitchen light")
    assert local.understand("the bedroom one").commands == ()  # no "no", "actually": not a correction


def test_a_correction_whose_target_the_request_did_not_name_is_asked_not_guessed() -> None:
    local = agent()
    local.understand("turn on the lights")  # every light: which one was wrong is not known
    reply = local.understand("no, the bedroom one")
    assert reply.commands == () and "whole request" in reply.text


# -- several values and targets in one breath -----------------------------------------------


def test_kitchen_at_40_and_lounge_at_70_sets_each_light() -> None:
    for text in (
        "kitchen at 40 and lounge at 70",
        "set the kitchen light to 40 and the living room light to 70",
    ):
        assert AGENT.understand(text).commands == (
            LightSet(device="kitchen_light", state="ON", brightness=102),
            LightSet(device="living_room_light", state="ON", brightness=178),
        ), text


def test_at_a_brightness_is_no_time_of_day_but_at_an_hour_still_is() -> None:
    assert AGENT.understand("turn on the kitchen light at 7").commands == ()


def test_two_lights_one_colour() -> None:
    assert AGENT.understand("make the bedroom and kitchen lights purple").commands == (
        LightSet(device="bedroom_light", state="ON", color_hex="#A020F0"),
        LightSet(device="kitchen_light", state="ON", color_hex="#A020F0"),
    )


def test_dim_every_light_to_15_percent() -> None:
    reply = AGENT.understand("dim every light to 15 percent")
    assert {c.device for c in reply.commands} == {"bedroom_light", "kitchen_light", "living_room_light"}
    assert all(isinstance(c, LightSet) and c.brightness == 38 for c in reply.commands)


# -- whites --------------------------------------------------------------------------------------


def test_kelvin_said_as_k() -> None:
    reply = AGENT.understand("set the kitchen light to 4000 K")
    assert reply.commands == (LightSet(device="kitchen_light", state="ON", color_temp=250),)
    assert "4000 kelvin" in reply.text


def test_a_colder_and_a_warmer_white_move_from_the_lights_own_white() -> None:
    local = agent()
    local.understand("turn on the kitchen light")
    assert local.understand("a colder white").commands == (
        LightSet(device="kitchen_light", state="ON", color_temp=220),
    )
    assert local.understand("warmer white").commands == (
        LightSet(device="kitchen_light", state="ON", color_temp=380),
    )
    # "make it warmer" alone may mean the heating: no light is changed
    assert agent().understand("make it warmer").commands == ()


def test_what_colour_is_the_light_answers_from_its_report() -> None:
    said = AGENT.understand("what colour is the kitchen light").text
    assert said == "The kitchen light is a neutral white."  # 300 mireds, 3333 K: between warm and cool
    assert AGENT.understand("what color is the living room light?").text == "The living room light is blue."
    assert AGENT.understand("what colour is the bedroom light").text == "The bedroom light is off."


def test_whats_on_right_now_names_what_is_on() -> None:
    reply = AGENT.understand("what's on right now?")
    assert reply.commands == ()
    for name in ("kitchen light", "living room light", "diffuser", "music"):
        assert name in reply.text
    assert "bedroom" not in reply.text


# -- the scent and the music ------------------------------------------------------------------


def test_stronger_and_less_scent_step_the_diffusers_intensity_within_the_limit() -> None:
    local = agent()
    local.understand("set the diffuser to lavender")
    assert local.understand("make it stronger").commands == (
        DiffuserSet(device="diffuser", state="ON", intensity=70),
    )
    assert AGENT.understand("less scent").commands == (
        DiffuserSet(device="diffuser", state="ON", intensity=30),
    )
    strong = agent({**STATES, "diffuser": {"state": "ON", "intensity": 80}})
    reply = strong.understand("more scent")
    assert reply.commands == () and "limit" in reply.text


def test_make_it_stronger_after_a_light_asks_which() -> None:
    local = agent()
    local.understand("turn on the kitchen light")
    reply = local.understand("make it stronger")
    assert reply.commands == () and "which one" in reply.text


def test_a_device_spoken_to_by_name() -> None:
    assert AGENT.understand("music player, play pop").commands == (
        MusicSet(device="music", action="play", genre="pop"),
    )


def test_bare_stop_stops_music_that_plays_and_nothing_else() -> None:
    assert AGENT.understand("stop").commands == (MusicSet(device="music", action="stop"),)
    quiet = agent({**STATES, "music": {"state": "paused"}})
    reply = quiet.understand("stop")
    assert reply.commands == () and "Nothing is playing" in reply.text


def test_put_on_some_artist_searches_for_it() -> None:
    assert AGENT.understand("put on some Norah Jones").commands == (
        MusicSet(device="music", action="play", query="norah jones"),
    )
    assert AGENT.understand("put on some lavender").commands == (
        DiffuserSet(device="diffuser", state="ON", scent="lavender"),
    )


# -- indirect asks -------------------------------------------------------------------------------


def test_indirect_asks_are_the_requests_they_stand_for() -> None:
    assert AGENT.understand("would you mind lighting up the kitchen").commands == (
        LightSet(device="kitchen_light", state="ON"),
    )
    assert AGENT.understand("could you possibly turn off the bedroom light").commands == (
        LightSet(device="bedroom_light", state="OFF"),
    )


def test_about_sixty_percent_after_a_light_sets_that_light() -> None:
    local = agent()
    local.understand("turn on the bedroom light")
    assert local.understand("about sixty percent").commands == (
        LightSet(device="bedroom_light", state="ON", brightness=152),
    )
    reply = agent().understand("about sixty percent")  # nothing before: which one?
    assert reply.commands == () and "which one" in reply.text


# -- a title the ear doubted -------------------------------------------------------------------

QUEEN = MusicSet(device="music", action="play", query="queen")


def test_a_doubted_one_word_title_plays_when_the_ears_other_readings_all_have_it() -> None:
    agreeing = [
        "Play the Queen album.",
        "play the queen album",
        "Play the Queen album!",
        "Play the Queen Album.",
    ]
    assert agent().understand("Play the Queen album.", {"queen"}, agreeing).commands == (QUEEN,)
    # too few readings, or one that heard otherwise: read back as before
    assert agent().understand("Play the Queen album.", {"queen"}, agreeing[:1]).commands == ()
    assert (
        agent()
        .understand("Play the Queen album.", {"queen"}, [*agreeing[:3], "Play the Green album."])
        .commands
        == ()
    )
    assert agent().understand("Play the Queen album.", {"queen"}).commands == ()
    # a title of several words with a doubted one is read back even when the readings agree
    claire = ["Play the song Claire to learn."] * 4
    asked = agent().understand("Play the song Claire to learn.", {"claire"}, claire)
    assert asked.commands == () and '"claire to learn"' in asked.text


# -- a fresh probe's misses ------------------------------------------------------------------


def test_thats_too_bright_dims_the_light_just_turned_on() -> None:
    local = agent()
    local.understand("turn on the kitchen light")
    assert local.understand("that's too bright").commands == (
        LightSet(device="kitchen_light", state="ON", brightness=63),
    )


def test_i_cant_see_anything_in_here_brightens_this_rooms_light() -> None:
    assert agent(room="bedroom").understand("i can't see anything in here").commands == (
        LightSet(device="bedroom_light", state="ON", brightness=64),
    )


def test_put_at_half_and_put_on_by_name() -> None:
    assert AGENT.understand("put the living room lights at half").commands == (
        LightSet(device="living_room_light", state="ON", brightness=127),
    )
    assert AGENT.understand("put the kitchen light on").commands == (
        LightSet(device="kitchen_light", state="ON"),
    )
    assert AGENT.understand("put the lounge on").commands == (
        LightSet(device="living_room_light", state="ON"),
    )


def test_asking_for_music_in_other_words() -> None:
    assert AGENT.understand("can I get some music").commands == (MusicSet(device="music", action="play"),)
    assert AGENT.understand("put some jazz on").commands == (
        MusicSet(device="music", action="play", genre="jazz"),
    )


def test_a_greeting_is_answered_and_moves_nothing() -> None:
    reply = AGENT.understand("hi there")
    assert reply.commands == () and reply.text.startswith("Hello")
    assert not reply.understood and not reply.missed  # with an LLM, the model answers a greeting


def test_a_thing_of_ours_said_in_words_not_taken_is_not_called_missing() -> None:
    reply = AGENT.understand("lock the kitchen light")
    assert reply.commands == () and reply.text == "Sorry, I didn't catch what to do with the kitchen light."
    assert AGENT.understand("turn on the garage light").text.startswith("There's no garage light here.")


def test_are_all_the_lights_off_says_which_are_on() -> None:
    reply = AGENT.understand("are all the lights off")
    assert reply.text == "No, the kitchen light and the living room light are on. The bedroom light is off."


def test_lower_and_higher_move_what_was_just_acted_on_or_ask_which() -> None:
    local = agent()
    reply = local.understand("a bit lower please")
    assert reply.commands == () and "which one" in reply.text
    local.understand("turn on the kitchen light")
    assert local.understand("a bit lower please").commands == (
        LightSet(device="kitchen_light", state="ON", brightness=63),
    )
    local.understand("play some jazz")
    assert local.understand("lower").commands == (MusicSet(device="music", volume=30),)
    local.understand("set the diffuser to lavender")
    assert local.understand("a little higher").commands == (
        DiffuserSet(device="diffuser", state="ON", intensity=70),
    )


def test_a_request_taken_back_in_the_same_breath_is_done_as_corrected_only() -> None:
    assert AGENT.understand("turn off the kitchen light, no, the bedroom light").commands == (
        LightSet(device="bedroom_light", state="OFF"),
    )
    assert AGENT.understand("turn the lounge red, no, blue").commands == (
        LightSet(device="living_room_light", state="ON", color_hex="#0000FF"),
    )
    assert AGENT.understand("sorry, turn off the lounge").text == "Turning off the living room light."


def test_a_correction_of_a_question_asks_it_again() -> None:
    local = agent()
    local.understand("is the kitchen light on?")
    assert local.understand("no, the bedroom one").text == "No, the bedroom light is off."


def test_every_light_but_the_one_named() -> None:
    assert AGENT.understand("lights off except the bedroom").commands == (
        LightSet(device="kitchen_light", state="OFF"),
        LightSet(device="living_room_light", state="OFF"),
    )
    assert AGENT.understand("turn off all lights except the bathroom").commands == ()  # no such light


def test_a_word_only_one_device_is_called_by_names_that_device(tmp_path: Path) -> None:
    """ "the lamp" in a home with a desk lamp beside room lights is the desk lamp, whatever room we
    are in; "the lamps" are still all of them, and "kitchen lamp" still the kitchen light."""
    devices = tmp_path / "devices"
    devices.mkdir()
    for source in (Path(__file__).parent.parent / "devices").glob("*.yaml"):
        (devices / source.name).write_text(source.read_text())
    (devices / "desk_lamp.yaml").write_text(
        "kind: light\nname: desk_lamp\nroom: office\ncommand_topic: z/desk/set\nstate_topic: z/desk\n"
    )
    registry = DeviceRegistry.load(devices)
    lights = ["bedroom_light", "desk_lamp", "kitchen_light", "living_room_light"]
    for room in (None, "kitchen"):
        home = LocalIntentAgent(registry, {}.get, room=room)

        def targets(text: str) -> list[str]:
            return [command.device for command in home.understand(text).commands]  # noqa: B023

        assert targets("turn on the lamp") == ["desk_lamp"], room
        assert targets("dim the lamp") == ["desk_lamp"], room
        assert targets("make the lamp red") == ["desk_lamp"], room
        assert targets("turn on the desk") == ["desk_lamp"], room
        assert targets("turn on the kitchen lamp") == ["kitchen_light"], room
        assert targets("turn off the lamps") == (lights if room is None else ["kitchen_light"]), room
        assert targets("turn off all the lamps except the desk lamp") == [
            n for n in lights if "desk" not in n
        ]
        assert home.understand("turn on the lamp").text == "Turning on the desk lamp."


def test_a_rough_number_after_a_step_says_how_far_it_goes() -> None:
    light = agent().understand("kitchen light, just dim, like 20")
    assert [(c.device, c.brightness) for c in light.commands if isinstance(c, LightSet)][-1] == (
        "kitchen_light",
        51,
    )
    music = agent().understand("the music louder, about seventy")
    assert [(c.device, c.volume) for c in music.commands] == [("music", 70)]


def test_someone_elses_words_in_the_plain_form_do_not_act() -> None:
    for text in (
        "my wife she say you must turn off the kitchen light",
        "mum tell me to switch off the music",
    ):
        reply = agent().understand(text)
        assert not reply.commands, text
    assert agent().understand("let's say 40 percent on the kitchen light").commands


def test_a_statement_of_how_things_are_beside_a_request_says_why_not_what() -> None:
    warm = agent().understand("warm white in the bedroom please, this blue-ish light is doing my head in")
    assert [(c.device, c.color_temp) for c in warm.commands if isinstance(c, LightSet)] == [
        ("bedroom_light", 454)
    ]
    lower = agent().understand("Lower the diffuser to 25 percent, 80 is excessive for a room this size.")
    assert [(c.device, c.intensity) for c in lower.commands if isinstance(c, DiffuserSet)] == [
        ("diffuser", 25)
    ]
    # a part that asks, though it says "is", still makes the rest a guess when not understood
    assert (
        not agent().understand("warm white in the bedroom please, the kitchen one is set to blorp").commands
    )


def test_it_after_a_statement_about_one_device_is_that_device() -> None:
    cooler = agent().understand("Bedroom light's like a chip shop. Make it cooler.")
    assert [c.device for c in cooler.commands] == ["bedroom_light"]
    # a statement about two devices says which of them "it" is no more than nothing does
    assert (
        not agent()
        .understand("The bedroom and kitchen lights are like a chip shop. Make it cooler.")
        .commands
    )
    # "let's" asks: no statement
    assert agent().understand("let's have the kitchen light blue").commands


def test_aff_is_off() -> None:
    assert [(c.device, c.state) for c in agent().understand("Get the bedroom light aff, eh").commands] == [
        ("bedroom_light", "OFF")
    ]
