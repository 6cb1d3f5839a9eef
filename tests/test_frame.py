"""The entity frame and the dialogue around it, in plain asserts on the real local agent (no broker):
any verb and any order, values deciding the action, a kind the home lacks refused by name, the
guards, follow-ups, corrections that put the wrong device back, "except", two values, moods."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from voiced.devices.model import DiffuserSet, LightSet, MusicSet
from voiced.devices.registry import DeviceRegistry
from voiced.language import english, words
from voiced.mouth.intents import LocalIntentAgent
from voiced.mouth.understanding import frame
from voiced.mouth.understanding.home_words import Words
from voiced.vibe.presets import preset_moods

REGISTRY = DeviceRegistry.load(Path(__file__).parent.parent / "devices")
OFF: dict[str, dict[str, Any]] = {
    "kitchen_light": {"state": "OFF", "brightness": 127, "color_temp": 300},
    "bedroom_light": {"state": "OFF", "brightness": 127, "color_temp": 300},
    "living_room_light": {"state": "OFF", "brightness": 127, "color_temp": 300},
    "diffuser": {"state": "OFF", "scent": "lavender", "intensity": 50},
    "music": {"state": "stopped", "volume": 50},
}


def agent(room: str | None = None) -> LocalIntentAgent:
    return LocalIntentAgent(
        REGISTRY, OFF.get, room=room, now=lambda: datetime(2026, 11, 27, 12, 0), moods=preset_moods()
    )


def read(text: str, last: tuple[str, ...] = ()) -> frame.Frame | None:
    return frame.read(words(text), Words.of(REGISTRY), english(), room=None, last=last)


def test_a_verb_the_templates_lack_with_a_light_and_a_percentage_sets_its_brightness() -> None:
    found = read("crank the bedroom light up to 90 percent")
    assert found is not None and found.targets == ("bedroom_light",) and found.percent == 90
    drop = agent().understand("drop the kitchen light to fifteen percent")
    assert drop.commands == (LightSet(device="kitchen_light", state="ON", brightness=38),)


def test_the_values_decide_the_device() -> None:
    citrus = read("citrus at 30 percent")
    assert citrus is not None and citrus.targets == ("diffuser",)
    assert (citrus.scent, citrus.percent) == ("citrus", 30)
    rock = read("stick on some rock")
    assert rock is not None and rock.targets == ("music",) and rock.genre == "rock"
    yellow = agent().understand("can I have the kitchen in yellow?")
    assert yellow.commands == (LightSet(device="kitchen_light", state="ON", color_hex="#FFFF00"),)


def test_a_kind_the_home_lacks_is_refused_by_name_and_lands_nowhere() -> None:
    for text, thing in (
        ("turn off the living room fan", "fan"),
        ("living room fans off", "fan"),
        ("deactivate living room fans", "fan"),
        ("put the telly on", "telly"),
        ("turn up the heat in the kitchen", "heating"),
    ):
        reply = agent().understand(text)
        assert reply.commands == () and thing in reply.text, text
    bathroom = agent().understand("bathroom light on please")
    assert bathroom.commands == () and "bathroom" in bathroom.text


def test_questions_statements_and_the_past_do_not_act() -> None:
    for text in (
        "is the diffuser on",
        "the kitchen light is on",
        "I turned the lights off earlier",
        "what colour is the bedroom light",
    ):
        assert agent().understand(text).commands == (), text


def test_all_but_one_and_two_values_in_one_breath() -> None:
    but = agent().understand("every light on except the bedroom")
    assert {c.device for c in but.commands} == {"kitchen_light", "living_room_light"}
    two = agent().understand("kitchen on full brightness and the bedroom on half")
    assert set(two.commands) == {
        LightSet(device="kitchen_light", state="ON", brightness=254),
        LightSet(device="bedroom_light", state="ON", brightness=127),
    }
    assert read("kitchen at 40 percent and lounge at 70 percent") is None  # two values: not one frame


def test_the_kitchen_as_well_redoes_the_last_request_there() -> None:
    local = agent()
    local.understand("set the bedroom light to 20 percent")
    assert local.understand("the kitchen as well").commands == (
        LightSet(device="kitchen_light", state="ON", brightness=51),
    )
    assert local.understand("and the lounge").commands == (
        LightSet(device="living_room_light", state="ON", brightness=51),
    )


def test_a_correction_puts_the_wrong_device_back_and_acts_on_the_right_one() -> None:
    local = agent()
    local.understand("turn on the kitchen light")
    reply = local.understand("not that one, the living room")
    assert reply.commands == (
        LightSet(device="kitchen_light", state="OFF"),
        LightSet(device="living_room_light", state="ON"),
    )


def test_a_mood_names_a_scene_but_a_word_naming_a_device_is_no_mood() -> None:
    assert agent().understand("movie night!").scene == "movie"
    assert agent().understand("I need to concentrate on my homework").scene == "focus"
    assert agent().understand("friends are coming over for a party").scene == "party"
    assert agent().understand("lovely weather today").scene is None


def test_scents_and_minutes_in_any_order() -> None:
    reply = agent().understand("turn the aroma diffuser on for 45 minutes with peppermint")
    assert reply.commands == (
        DiffuserSet(device="diffuser", state="ON", scent="peppermint", duration_min=45),
    )
    louder = agent().understand("the music is too loud")
    assert louder.commands == (MusicSet(device="music", volume=40),)


def test_a_genre_the_ear_doubted_is_asked_about_not_played() -> None:
    local = agent()
    asked = local.understand("play some blues", doubtful=("blues",), alternatives=("play some news",))
    assert asked.commands == () and "blues" in asked.text
    assert local.understand("yes").commands == (MusicSet(device="music", action="play", genre="blues"),)
    sure = agent().understand("play some blues", doubtful=())
    assert sure.commands == (MusicSet(device="music", action="play", genre="blues"),)


def test_a_heard_reading_acts_only_on_what_it_understands_word_for_word() -> None:
    # typed, an unknown word is a verb; read from audio it may be the request, misheard
    assert agent(room="living room").understand("madam red").commands != ()
    assert agent(room="living room").understand("Madam red.", heard=True).commands == ()
    assert agent().understand("Mad room to maximum brightness.", heard=True).commands == ()
    assert agent().understand("switch none of eucalyptus", heard=True).commands == ()


def test_known_confusions_at_the_opening_are_read_as_said() -> None:
    assert agent().understand("Our all lights off.", heard=True).commands == ()  # "are all lights off?"
    set_the = agent().understand("Sandalwood diffuser to 40%.", heard=True)
    assert set_the.commands == (DiffuserSet(device="diffuser", state="ON", intensity=40),)
    scent = agent().understand("Sandalwood at eighty percent, please")
    assert scent.commands == (DiffuserSet(device="diffuser", state="ON", scent="sandalwood", intensity=80),)


def test_paused_music_back_on_plays_again_but_stopped_music_on_chooses_nothing() -> None:
    paused = {**OFF, "music": {"state": "paused", "volume": 50}}
    back = LocalIntentAgent(REGISTRY, paused.get, now=lambda: datetime(2026, 11, 27, 12, 0))
    assert back.understand("ok, music back on").commands == (MusicSet(device="music", action="play"),)
    assert not agent().understand("the music back on").commands


def test_a_refusal_never_says_we_cannot_do_a_thing_this_home_has() -> None:
    for said in ("set the volume to — what — thirty, thirty's fine", "cool, turn it up to 70"):
        reply = agent().understand(said)
        assert not reply.commands and not reply.text.startswith("I can't"), reply.text
    assert agent().understand("open the windows").text.startswith("I can't open the windows")
    assert agent().understand("cleaning mode").scene == "cleaning"  # not "clean" + "ing mode"


def test_as_far_as_it_goes_is_the_top_or_the_bottom_and_it_goes_reports_nobody() -> None:
    assert agent().understand("bedroom light as bright as it'll go, please").commands == (
        LightSet(device="bedroom_light", state="ON", brightness=254),
    )
    assert agent().understand("music as loud as it goes").commands == (MusicSet(device="music", volume=100),)
    assert not agent().understand("he goes, turn off the lights").commands  # reported speech


def test_everything_in_a_room_is_every_device_there_whatever_its_kind() -> None:
    lounge = agent().understand("switch off everything in the lounge")
    assert {c.device for c in lounge.commands} == {"living_room_light", "diffuser", "music"}
    kitchen = agent().understand("turn everything off in the kitchen")
    assert [c.device for c in kitchen.commands] == ["kitchen_light"]
    but = agent().understand("turn everything off except the living room light")
    assert {c.device for c in but.commands} == {"kitchen_light", "bedroom_light", "diffuser", "music"}
    room_kept = agent().understand("everything off except the lounge")
    assert {c.device for c in room_kept.commands} == {"kitchen_light", "bedroom_light"}


def test_rooms_listed_after_a_request_each_take_it() -> None:
    both = agent().understand("turn on the lights in the kitchen and the bedroom")
    assert [c.device for c in both.commands] == ["kitchen_light", "bedroom_light"]
    three = agent().understand("turn on the lights in the kitchen, the bedroom and the lounge")
    assert [c.device for c in three.commands] == ["kitchen_light", "bedroom_light", "living_room_light"]
    # after "except" the rooms listed are the ones kept: never switched (nothing, and said so)
    kept = agent().understand("turn off the lights except in the kitchen and the bedroom")
    assert kept.commands == () and kept.missed


def test_what_someone_did_or_a_device_did_is_no_request() -> None:
    for text in (
        "I just turned on the kitchen light",
        "I've switched the lounge light off already",
        "she played some jazz",
        "the diffuser ran out of lavender",
    ):
        reply = agent().understand(text)
        assert reply.commands == (), text
    # a participle after the device still asks; "put" and "set" read the same now as then
    asked = agent().understand("I want the kitchen light turned off")
    assert asked.commands == (LightSet(device="kitchen_light", state="OFF"),)
    put = agent().understand("could you put the kitchen light on")
    assert put.commands == (LightSet(device="kitchen_light", state="ON"),)


def test_for_a_number_said_last_is_how_long_never_a_level() -> None:
    scent = agent().understand("lavender for 15")
    assert scent.commands == (DiffuserSet(device="diffuser", state="ON", scent="lavender", duration_min=15),)
    jazz = agent().understand("play jazz for 20")
    assert jazz.commands == (MusicSet(device="music", action="play", genre="jazz"),)


def test_here_asks_which_room_only_of_a_kind_in_several_rooms() -> None:
    scent = agent().understand("can we get the citrus going in the diffuser, it still smells of fish in here")
    assert scent.commands == (DiffuserSet(device="diffuser", state="ON", scent="citrus"),)
    lights = agent().understand("turn the lights on in here")
    assert lights.commands == () and "Which room" in lights.text


def test_a_thing_the_home_lacks_said_as_where_or_why_is_not_what_is_asked() -> None:
    louder = agent().understand("louder please I can't hear it over the kettle")
    assert louder.commands == (MusicSet(device="music", volume=60),)
    assert agent().understand("turn the heating up in the kitchen").commands == ()
    # what the home lacks, said as where, names the room it stands in
    over_the_oven = agent().understand("turn on the light over the oven").commands
    assert over_the_oven == (LightSet(device="kitchen_light", state="ON"),)


def test_more_or_less_of_how_it_feels_goes_that_way() -> None:
    on = {**OFF, "kitchen_light": {"state": "ON", "brightness": 200, "color_temp": 300}}
    darker = LocalIntentAgent(REGISTRY, on.get, room=None, moods=preset_moods())
    (command,) = darker.understand("make the kitchen light a little bit more dark").commands
    assert isinstance(command, LightSet) and command.brightness is not None and command.brightness < 200
    found = read("music a bit less loud")
    assert found is not None and found.direction == "down" and not found.felt


def test_a_level_from_one_number_to_another_is_the_second() -> None:
    quieter = agent().understand("reduce the music volume from 72 to exactly 48")
    assert quieter.commands == (MusicSet(device="music", volume=48),)
    blues = agent().understand("play genre blues, volume 25 percent")
    assert MusicSet(device="music", action="play", genre="blues") in blues.commands


def test_a_value_said_after_a_request_in_the_same_breath_is_for_its_device() -> None:
    yellow = agent().understand("Set the bedroom light to 45 percent, colour yellow.")
    assert {(c.device, c.brightness, c.color_hex) for c in yellow.commands if isinstance(c, LightSet)} >= {
        ("bedroom_light", None, "#FFFF00")
    }
    timed = agent().understand("Start the diffuser with peppermint at an intensity of 60, duration 20 min.")
    assert DiffuserSet(device="diffuser", state="ON", scent="peppermint", intensity=60) in timed.commands
    assert any(isinstance(c, DiffuserSet) and c.duration_min == 20 for c in timed.commands)
    # talk beside a request names no level of it
    baby = agent().understand("Turn the bedroom light off, the baby's finally down")
    assert baby.commands == (LightSet(device="bedroom_light", state="OFF"),)


def test_a_device_named_first_by_its_noun_and_room_takes_the_request_after() -> None:
    brighter = agent().understand("the lamp in the lounge, 40 percent")
    assert brighter.commands == (LightSet(device="living_room_light", state="ON", brightness=102),)


def test_a_device_switched_in_a_description_is_no_mood_and_a_hesitation_no_part() -> None:
    sleep = agent().understand("Could you put the light on in the room where I sleep, dear?")
    assert sleep.scene is None and sleep.commands == (LightSet(device="bedroom_light", state="ON"),)
    lounge = agent().understand("lounge light, uh... thirty percent")
    assert lounge.commands == (LightSet(device="living_room_light", state="ON", brightness=76),)


def test_a_number_opening_a_request_before_on_is_its_level_and_bar_takes_one_out() -> None:
    eighty = agent().understand("80 on the living room light")
    assert eighty.commands == (LightSet(device="living_room_light", state="ON", brightness=203),)
    bar = agent().understand("turn all the lights off bar the one in the lounge")
    assert {c.device for c in bar.commands} == {"kitchen_light", "bedroom_light"}


def test_a_filler_that_opens_a_value_is_the_value() -> None:
    """ "Cool" alone is a filler ("cool, thanks"); "cool white" is a white, not the colour white."""
    reply = agent().understand("cool white in the kitchen please")
    assert reply.commands == (LightSet(device="kitchen_light", state="ON", color_temp=250),)


def test_off_with_a_small_step_is_less_and_off_with_a_level_is_nothing() -> None:
    eased = read("ease the diffuser off a bit")
    assert eased is not None and (eased.power, eased.direction) == (None, "down")
    assert read("turn the diffuser off for a bit") is not None  # a while: still off
    assert read("turn off the kitchen light at 20") is None  # no level is off; it may be a time


def test_someone_else_reckoning_is_reported_speech() -> None:
    reply = agent().understand("Dave reckons we should turn the music right up")
    assert reply.commands == ()


def test_another_name_of_a_room_is_the_room_and_its_follow_ups() -> None:
    talk = agent()
    first = talk.understand("dim the front room light down to twenty")
    assert [c.device for c in first.commands] == ["living_room_light"]
    again = talk.understand("and the kitchen too")
    assert [c.device for c in again.commands] == ["kitchen_light"]


def test_a_device_named_for_its_room_before_another_kind_is_the_room() -> None:
    reply = agent().understand("set the lounge speaker to twenty-five percent volume")
    assert reply.commands == (MusicSet(device="music", volume=25),)


def test_a_genre_or_title_alone_is_asked_for_but_not_beside_another_request() -> None:
    assert agent().understand("lofi pls").commands == (MusicSet(device="music", action="play", genre="lofi"),)
    title = agent().understand("Bohemian Rhapsody, please").commands
    assert [(c.action, c.query) for c in title if isinstance(c, MusicSet)] == [("play", "bohemian rhapsody")]
    beside = agent().understand("Turn on the living room light, blues.")
    assert beside.commands == ()  # "blues" may have been the light's colour


def test_a_colour_said_of_how_a_light_looks_is_not_asked() -> None:
    found = read("it's pitch black in here, switch on the bedroom light")
    assert found is not None and found.colour is None and found.power == "ON"
    looks = read("the lounge light's looking awful yellow, make it a touch cooler")
    assert looks is not None and (looks.colour, looks.white) == (None, "cooler")


def test_an_action_may_hold_the_players_name() -> None:
    reply = agent().understand("hold the music a minute, there's someone at the door")
    assert reply.commands == (MusicSet(device="music", action="pause"),)


def test_a_bare_number_past_twelve_after_at_is_a_level_not_an_hour() -> None:
    from voiced.mouth.understanding.reported import is_for_later

    assert not is_for_later("my light at 20 and play some lofi")
    assert is_for_later("turn off the light at 7") and is_for_later("turn off the light at 20:30")


def test_the_longest_phrase_of_any_class_wins_cut_on_is_on() -> None:
    on = agent().understand("could you cut on the kitchen light for me?")
    assert on.commands == (LightSet(device="kitchen_light", state="ON"),)
    off = agent().understand("cut off the kitchen light")
    assert off.commands == (LightSet(device="kitchen_light", state="OFF"),)


def test_a_filler_alone_before_a_comma_is_no_one_spoken_to() -> None:
    talk = agent()
    talk.understand("play some jazz")
    down = talk.understand("Lord, that's loud. Bring it down to twenty-five")
    assert down.commands == (MusicSet(device="music", volume=25),)


def test_typed_slips_of_the_keys_are_corrected_but_real_words_are_not() -> None:
    slip = agent().understand("peppermnt in the diffusor for 15 mins + kitchen light warm white 70%")
    assert DiffuserSet(device="diffuser", state="ON", scent="peppermint", duration_min=15) in slip.commands
    assert [c.device for c in slip.commands] == ["diffuser", "kitchen_light"]
    assert agent().understand("turn the kitchen radio on").commands == ()  # "radio" is no slip of "red"


def test_questions_and_passed_on_advice_and_a_number_in_a_leftover_do_not_act() -> None:
    for text in (
        "Would sandalwood be too heavy for the evening, do you think?",
        "My sister keeps telling me I should try peppermint in the diffuser.",
        "The lounge needs more light. Seventy-five should do it.",
    ):
        assert agent().understand(text).commands == (), text
    polite = agent().understand("would it be possible to turn on the kitchen light")
    assert polite.commands == (LightSet(device="kitchen_light", state="ON"),)


def test_the_light_with_a_room_of_our_own_is_this_rooms_and_all_of_them_are_all() -> None:
    here = agent(room="living room")
    assert here.understand("Put the light on for me, would you?").commands == (
        LightSet(device="living_room_light", state="ON"),
    )
    assert len(agent(room="living room").understand("all the lights on").commands) == 3
    named = agent(room="living room").understand("put on the kitchen light")
    assert named.commands == (LightSet(device="kitchen_light", state="ON"),)


def test_a_level_said_after_a_genre_with_the_settings_name_is_kept() -> None:
    reply = agent().understand("could you put on some classical at about 25 percent volume")
    assert reply.commands == (MusicSet(device="music", action="play", genre="classical", volume=25),)


def test_a_devices_noun_with_a_number_is_no_mood() -> None:
    reply = agent().understand("Now, the light beside my bed. I should like it very low, about ten.")
    assert reply.scene is None


def test_as_well_after_a_request_naming_no_device_redoes_what_was_done_there() -> None:
    local = agent(room="kitchen")
    local.understand("could you make this room blue?")
    blue = LightSet(device="bedroom_light", state="ON", color_hex="#0000FF")
    assert local.understand("the bedroom as well").commands == (blue,)
    assert local.understand("and the lounge").commands == (
        LightSet(device="living_room_light", state="ON", color_hex="#0000FF"),
    )
    local = agent(room="living room")
    local.understand("off the light in here")
    assert local.understand("kitchen also").commands == (LightSet(device="kitchen_light", state="OFF"),)
    assert local.understand("the music too").commands == (MusicSet(device="music", action="stop"),)


def test_a_courtesy_that_holds_a_negation_negates_nothing() -> None:
    local = agent()
    local.understand("set the lounge light to 60 percent")
    assert local.understand("same in the bedroom, if you don't mind").commands == (
        LightSet(device="bedroom_light", state="ON", brightness=152),
    )
    assert agent().understand("don't turn on the kitchen light, if you don't mind").commands == ()


def test_a_colour_of_a_light_named_is_no_title_to_play() -> None:
    found = read("put the kitchen light on blue")
    assert found is not None and found.targets == ("kitchen_light",) and found.colour == "blue"
    assert found.title is None
    played = read("put blue on")
    assert played is not None and played.title == "Blue"


def test_a_white_said_alone_after_a_light_is_that_lights() -> None:
    local = agent(room="living room")
    assert local.understand("put the light on, warm").commands == (
        LightSet(device="living_room_light", state="ON"),
        LightSet(device="living_room_light", state="ON", color_temp=454),
    )
    assert agent().understand("warm").commands == ()  # no light said before: nothing to warm


def test_one_genre_among_words_that_name_no_title_plays_the_genre() -> None:
    def played(text: str) -> tuple[MusicSet, ...]:
        return tuple(c for c in agent().understand(text).commands if isinstance(c, MusicSet))

    jazz = (MusicSet(device="music", action="play", genre="jazz"),)
    assert played("play some relaxing jazz") == jazz
    assert played("play a bit of jazz while I cook") == jazz
    # a title of the library, or a level not read, keeps it a search or a miss
    assert played("play some jazz by miles davis")[0].query == "jazz by miles davis"
    assert played("put on some classical music real soft, 'bout twenty on the volume") == ()


def test_as_well_after_a_template_request_that_names_no_device_redoes_it_there() -> None:
    local = agent(room="living room")
    local.understand("make the light purple")
    assert local.understand("now the bedroom too").commands == (
        LightSet(device="bedroom_light", state="ON", color_hex="#A020F0"),
    )


def test_a_small_number_right_after_a_device_is_its_level_not_a_time() -> None:
    assert agent().understand("bedroom light at 10 and the music at 20").commands == (
        LightSet(device="bedroom_light", state="ON", brightness=25),
        MusicSet(device="music", volume=20),
    )
    for later in ("turn off the kitchen light at 10", "kitchen light at 10 pm", "kitchen light on at 7"):
        assert agent().understand(later).commands == (), later


def test_a_number_in_words_closing_a_short_request_is_a_level() -> None:
    local = agent()
    local.understand("set the kitchen light to 70")
    assert local.understand("actually make that seventy five").commands == (
        LightSet(device="kitchen_light", state="ON", brightness=190),
    )
    assert local.understand("make that one").commands == ()  # a pointer, not one percent


def test_a_room_said_by_what_is_in_it() -> None:
    def on(text: str) -> tuple[str, ...]:
        return tuple(c.device for c in agent().understand(text).commands)

    assert on("would you kindly switch on the light by my bed?") == ("bedroom_light",)
    assert on("could you put the light on in the room where I sleep, dear?") == ("bedroom_light",)
    assert on("make the sofa lamp yellow for me") == ("living_room_light",)
    assert on("turn on the oven") == ()  # a thing the home lacks, said alone, is still refused


def test_a_name_alone_after_a_separator_takes_the_request_before_it() -> None:
    both = agent().understand("lights off kitchen and lounge")
    assert [(c.device, c.state) for c in both.commands] == [
        ("kitchen_light", "OFF"),
        ("living_room_light", "OFF"),
    ]
    # a segment that says more than a name is not carried over
    assert (
        not agent().understand("warm white in the bedroom please, the kitchen one is set to blorp").commands
    )


def test_requests_said_one_after_the_other_with_nothing_between_are_each_taken() -> None:
    run_on = agent().understand("bedroom light off kitchen light on")
    assert [(c.device, c.state) for c in run_on.commands] == [
        ("bedroom_light", "OFF"),
        ("kitchen_light", "ON"),
    ]
    levels = agent().understand("kitchen 40 bedroom 70")
    assert [(c.device, c.brightness) for c in levels.commands] == [
        ("kitchen_light", 102),
        ("bedroom_light", 178),
    ]


def test_a_number_alone_after_minutes_changes_the_minutes() -> None:
    talk = agent()
    talk.understand("diffuser thirty minutes")
    again = talk.understand("make that forty five")
    assert [(c.device, c.duration_min, c.intensity) for c in again.commands] == [("diffuser", 45, None)]
    level = agent()
    level.understand("run the diffuser for 20 minutes")
    assert [(c.device, c.intensity) for c in level.understand("make it 50 percent").commands] == [
        ("diffuser", 50)
    ]


def test_a_complaint_before_a_number_is_the_reason_not_a_second_value() -> None:
    talk = agent()
    talk.understand("put on some folk music")
    lower = talk.understand("Oh, that's a little too loud for me. Would you lower it to about thirty?")
    assert [(c.device, c.volume) for c in lower.commands] == [("music", 30)]


def test_a_thing_we_lack_said_as_what_someone_does_leaves_the_mood_heard() -> None:
    assert agent().understand("I gotta study for finals, can you do focus mode").scene == "focus"
    assert agent().understand("right, time to tidy up and hoover the whole house").scene == "cleaning"
    # the thing itself asked for is still refused by name, and lands nowhere
    for text in ("turn on the hoover", "heat the kitchen"):
        refused = agent().understand(text)
        assert (refused.commands, refused.scene) == ((), None), text


def test_a_sentence_reporting_words_that_ask_nothing_leaves_the_request_beside_it() -> None:
    blue = agent().understand("Make the bedroom light blue. My grandson tells me it's very restful.")
    assert [c.device for c in blue.commands] == ["bedroom_light"]
    # a reported sentence that names something, or tells us to act, may hold the request
    for text in (
        "My wife says turn off the lights. Please.",
        "Turn off the kitchen light. She said the bedroom light too.",
        "Play jazz. They said it on the radio.",
    ):
        assert not agent().understand(text).commands, text


def test_tonight_alone_is_now_but_later_tonight_is_later() -> None:
    assert agent().understand("the bedroom light ought to be blue tonight").commands
    assert not agent().understand("i might want some jazz later tonight").commands


def test_courtesy_after_too_leaves_it_a_follow_up() -> None:
    talk = agent()
    talk.understand("turn on the kitchen light")
    too = talk.understand("Oh, and the living room one too, if you would be so kind.")
    assert [(c.device, c.state) for c in too.commands] == [("living_room_light", "ON")]


def test_words_quoted_with_more_said_around_them_are_someone_elses() -> None:
    for text in ('"Turn the music up!" ha, Sam loves this bit', "he goes \u201cturn it off\u201d every time"):
        assert not agent().understand(text).commands, text
    assert agent().understand('"turn on the kitchen light"').commands  # typed in quotes, nothing else
    # a value or a title in quotes is no one's words
    quoted_value = agent().understand('set the kitchen light to "warm white"').commands
    assert quoted_value == agent().understand("set the kitchen light to warm white").commands != ()
    assert agent().understand('play "Here Comes the Sun" please').commands
    coffee = agent().understand("Make me a coffee, I go to work in ten minutes")
    assert (coffee.commands, coffee.scene) == ((), None)


def test_a_correction_with_talk_after_it_and_here_named_as_the_room() -> None:
    talk = agent("kitchen")
    talk.understand("lights on in here")
    fixed = talk.understand("no, I meant the living room, where the kids are")
    assert [(c.device, c.state) for c in fixed.commands] == [
        ("kitchen_light", "OFF"),
        ("living_room_light", "ON"),
    ]
    # talk after it that names something of this home is no talk to leave out
    other = agent()
    other.understand("turn on the kitchen light")
    assert not other.understand("no, I meant the bedroom, the diffuser is too strong").commands


def test_something_of_a_genre_or_in_the_background_asks_for_it() -> None:
    for text, genre in (
        ("Something ambient in the background, please", "ambient"),
        ("something folky", "folk"),
    ):
        played = agent().understand(text)
        assert [(c.device, c.genre) for c in played.commands] == [("music", genre)], text


def test_more_words_for_the_music_and_its_actions() -> None:
    for text, action in (("Resume playback", "play"), ("Pass to the following piece.", "next")):
        assert [(c.device, c.action) for c in agent().understand(text).commands] == [("music", action)], text
    sonata = agent().understand("Launch the Moonlight Sonata.")
    assert [(c.device, c.action, c.query) for c in sonata.commands] == [("music", "play", "Moonlight Sonata")]


def test_steps_and_whites_said_plainly_and_texted() -> None:
    assert [(c.device, c.volume) for c in agent().understand("bump the music").commands] == [("music", 60)]
    back = agent().understand("dial the scent diffuser back a notch")
    assert [(c.device, c.intensity) for c in back.commands] == [("diffuser", 40)]
    cool = agent().understand("kitchen lite more cool pls")  # "more cool" is cooler, not brighter
    assert [(c.device, c.brightness, c.color_temp) for c in cool.commands] == [("kitchen_light", None, 250)]
    texted = agent().understand("bedroom lite 2 100")
    assert [(c.device, c.brightness) for c in texted.commands] == [("bedroom_light", 254)]


def test_a_device_named_in_here_then_what_to_do() -> None:
    off = agent("living room").understand("the big light in here, off please")
    assert [(c.device, c.state) for c in off.commands] == [("living_room_light", "OFF")]
    assert not agent().understand("the light in here, off please").commands  # no room known: asked


def test_stop_after_a_time_said_of_the_diffuser_is_its_timer() -> None:
    talk = agent()
    talk.understand("set the diffuser to sandalwood")
    timer = talk.understand("and have it stop after twenty minutes")
    assert [(c.device, c.duration_min) for c in timer.commands] == [("diffuser", 20)]
    light = agent()
    light.understand("turn on the kitchen light")
    assert not light.understand("make it stop after 30 min").commands  # a light has no timer: later


def test_a_device_name_that_is_also_a_room_said_after_in_is_where() -> None:
    scent = agent().understand("Sandalwood in the lounge for forty minutes or so, please.")
    assert [(c.device, c.scent, c.duration_min) for c in scent.commands] == [("diffuser", "sandalwood", 40)]
    light = agent().understand("turn on the light in the lounge")
    assert [c.device for c in light.commands] == ["living_room_light"]
    thingy = agent().understand("sandalwood in the lounge thingy please")
    assert [(c.device, c.scent) for c in thingy.commands] == [("diffuser", "sandalwood")]


def test_a_genre_switched_on_is_played() -> None:
    for text, genre in (("jazz on", "jazz"), ("lofi on please", "lofi")):
        assert [(c.device, c.genre) for c in agent().understand(text).commands] == [("music", genre)], text
    pop = agent().understand("pop on the kitchen light")  # "pop on" is a verb here
    assert [(c.device, c.state) for c in pop.commands] == [("kitchen_light", "ON")]


def test_keep_going_is_the_last_step_again() -> None:
    talk = agent()
    talk.understand("turn the music up")
    assert [(c.device, c.volume) for c in talk.understand("keep going").commands] == [("music", 60)]
