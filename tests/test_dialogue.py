"""Follow-ups that lean on the turns before: "both", "a bit more", "not the bedroom", a verb shared by
two devices, a value said with no device. Pure: the agent reads a dict of states, nothing is sent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from voiced.devices.model import DiffuserSet, LightSet, MusicSet
from voiced.devices.registry import DeviceRegistry
from voiced.mouth.intents import LocalIntentAgent
from voiced.mouth.understanding.dialogue import Recent

REGISTRY = DeviceRegistry.load(Path(__file__).parent.parent / "devices")


def home(**states: dict[str, Any]) -> tuple[LocalIntentAgent, dict[str, dict[str, Any]]]:
    known: dict[str, dict[str, Any]] = {
        "kitchen_light": {"state": "OFF", "brightness": 127},
        "bedroom_light": {"state": "OFF", "brightness": 127},
        "living_room_light": {"state": "OFF", "brightness": 127},
        "diffuser": {"state": "ON", "scent": "citrus", "intensity": 50},
        "music": {"state": "playing", "genre": "jazz", "volume": 40},
        **states,
    }
    return LocalIntentAgent(REGISTRY, known.get), known


def carried(known: dict[str, dict[str, Any]], commands: tuple[Any, ...]) -> None:
    """What the devices would report after the commands (lights only: enough for these turns)."""
    for command in commands:
        if isinstance(command, LightSet):
            fields = command.model_dump(exclude={"device"}, exclude_none=True)
            known[command.device] = {**known[command.device], **fields}


def test_both_after_two_single_requests_means_the_two() -> None:
    agent, known = home()
    for said in ("turn on the kitchen light", "and the bedroom one too"):
        carried(known, agent.understand(said).commands)
    reply = agent.understand("actually, switch them both off again")
    assert {c.device for c in reply.commands} == {"kitchen_light", "bedroom_light"}
    assert all(isinstance(c, LightSet) and c.state == "OFF" for c in reply.commands)


def test_a_bit_more_repeats_the_last_change_the_same_way() -> None:
    agent, known = home(bedroom_light={"state": "ON", "brightness": 178})
    dimmed = agent.understand("dim the bedroom light").commands
    carried(known, dimmed)
    (first,) = dimmed
    assert isinstance(first, LightSet) and first.brightness is not None and first.brightness < 178
    (again,) = agent.understand("a bit more").commands
    assert isinstance(again, LightSet) and again.device == "bedroom_light"
    assert again.brightness is not None and again.brightness < first.brightness  # dimmer still


def test_more_with_no_change_before_is_up() -> None:
    agent, _ = home(bedroom_light={"state": "ON", "brightness": 100})
    agent.understand("turn on the bedroom light")  # no level moved: nothing to repeat
    (command,) = agent.understand("a bit more").commands
    assert isinstance(command, LightSet) and (command.brightness or 0) > 100


def test_not_the_bedroom_puts_that_one_back() -> None:
    agent, known = home()
    reply = agent.understand("turn on all the lights")
    assert len(reply.commands) == 3
    carried(known, reply.commands)
    reply = agent.understand("hmm, not the bedroom")
    assert reply.commands == (LightSet(device="bedroom_light", state="OFF"),)
    assert "bedroom light back" in reply.text


def test_not_the_one_request_asked_about_is_no_exclusion() -> None:
    agent, _ = home()
    agent.understand("turn on the bedroom light")
    reply = agent.understand("not the bedroom")
    assert not any(c.device == "bedroom_light" and getattr(c, "state", None) == "OFF" for c in reply.commands)


def test_a_verb_shared_by_two_devices() -> None:
    agent, _ = home()
    reply = agent.understand("kill the music and the diffuser")
    assert set(reply.commands) == {
        MusicSet(device="music", action="stop"),
        DiffuserSet(device="diffuser", state="OFF"),
    }


def test_a_value_with_no_device_is_for_the_light_just_set_not_every_light() -> None:
    agent, known = home()
    carried(known, agent.understand("set the bedroom light to warm white").commands)
    reply = agent.understand("and brightness to 25")
    assert [c.device for c in reply.commands] == ["bedroom_light"]
    reply = agent.understand("turn off the lights")  # the plural is every light
    assert len(reply.commands) == 3


def test_a_duration_alone_names_no_diffuser() -> None:
    agent, _ = home()
    reply = agent.understand("I need to concentrate for a couple of hours")
    assert not any(isinstance(c, DiffuserSet) for c in reply.commands)


def test_a_genre_said_vaguely_plays_the_genre() -> None:
    agent, _ = home()
    (command,) = agent.understand("play some ambient stuff").commands
    assert command == MusicSet(device="music", action="play", genre="ambient")


def test_recent_keeps_the_newest_devices_and_the_direction() -> None:
    recent = Recent().after(
        [LightSet(device="kitchen_light", brightness=50)], {"kitchen_light": {"brightness": 100}}
    )
    assert recent == Recent(("kitchen_light",), "down")
    recent = recent.after([LightSet(device="bedroom_light", state="ON")], {"bedroom_light": {"state": "OFF"}})
    assert recent.devices == ("kitchen_light", "bedroom_light") and recent.direction is None
    assert recent.pair(("bedroom_light",)) == ("kitchen_light", "bedroom_light")
    assert recent.after([], {}) is recent


def test_carry_on_resumes_the_music_just_paused() -> None:
    agent, _ = home()
    agent.understand("pause the music")
    assert agent.understand("okay, carry on").commands == (MusicSet(device="music", action="play"),)


def test_a_lone_direction_word_is_for_the_device_just_set() -> None:
    agent, _ = home()
    agent.understand("put the diffuser on citrus")
    (command,) = agent.understand("stronger").commands
    assert isinstance(command, DiffuserSet) and (command.intensity or 0) > 50


def test_more_before_a_word_for_less_says_how_much_not_which_way() -> None:
    agent, known = home(bedroom_light={"state": "ON", "brightness": 200})
    carried(known, agent.understand("dim the bedroom light").commands)
    (command,) = agent.understand("even more dim").commands
    assert (
        isinstance(command, LightSet) and (command.brightness or 255) < known["bedroom_light"]["brightness"]
    )


def test_a_duration_with_its_unit_needs_no_for() -> None:
    agent, _ = home()
    agent.understand("put the diffuser on lavender")
    (command,) = agent.understand("and only 15 min").commands
    assert isinstance(command, DiffuserSet) and command.duration_min == 15


def test_a_correction_read_word_by_word_names_the_right_one_last() -> None:
    agent, known = home()
    carried(known, agent.understand("turn on the living room light").commands)
    reply = agent.understand("wait, no, leave the lounge on, I meant the kitchen")
    assert LightSet(device="kitchen_light", state="ON") in reply.commands
    agent, _ = home()
    agent.understand("play some taylor swift")
    (command,) = agent.understand("nah, adele instead").commands
    assert isinstance(command, MusicSet) and (command.query or "").lower() == "adele"


def test_a_correction_may_point_at_the_wrong_one_or_name_the_right_one_first() -> None:
    for correction in (
        "not that light, the bedroom one",
        "wrong lamp, the bedroom",
        "the bedroom, not the kitchen",
    ):
        agent, known = home()
        carried(known, agent.understand("turn on the kitchen light").commands)
        reply = agent.understand(correction)
        assert set(reply.commands) == {
            LightSet(device="kitchen_light", state="OFF"),
            LightSet(device="bedroom_light", state="ON"),
        }, correction
    agent, known = home()
    carried(known, agent.understand("make the kitchen light blue").commands)
    assert agent.understand("green, not blue").commands == (
        LightSet(device="kitchen_light", state="ON", color_hex="#00FF00"),
    )


def test_no_then_a_request_of_its_own_is_no_correction() -> None:
    agent, _ = home()
    agent.understand("turn on the bedroom light")
    reply = agent.understand("no, turn off the kitchen light")
    assert reply.commands == (LightSet(device="kitchen_light", state="OFF"),)


def test_a_value_corrected_that_the_last_request_lacked_is_asked_of_the_same_device() -> None:
    agent, _ = home()
    agent.understand("turn on the kitchen light")
    reply = agent.understand("actually make it blue instead")
    assert [c.device for c in reply.commands] == ["kitchen_light"]
    assert isinstance(reply.commands[0], LightSet) and reply.commands[0].color_hex is not None


def test_the_language_file_refuses_a_bare_yes_or_no(tmp_path: Path) -> None:
    import pytest

    from voiced.language import HERE, Language

    text = (HERE / "en.yaml").read_text(encoding="utf-8").replace('correcting: ["no",', "correcting: [no,")
    (tmp_path / "xx.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match="correcting"):
        Language.load(tmp_path / "xx.yaml")


def test_here_with_no_room_known_asks_which_room_and_the_answer_completes_it() -> None:
    agent, _ = home()
    reply = agent.understand("turn on the lights in here")
    assert not reply.commands and reply.text.startswith("Which room are you in")
    assert agent.understand("the kitchen").commands == (LightSet(device="kitchen_light", state="ON"),)


def test_here_in_a_title_or_a_mood_asks_nothing() -> None:
    agent, _ = home()
    assert agent.understand("play here comes the sun").commands
    assert not agent.understand("make it romantic in here").text.startswith("Which room")


def test_skip_needs_no_music_said() -> None:
    agent, _ = home()
    assert agent.understand("skip this one, it's boring").commands == (
        MusicSet(device="music", action="next"),
    )


def test_a_genre_said_as_a_correction_is_not_a_plural_colour() -> None:
    agent, _ = home()
    agent.understand("play some jazz for me")
    (command,) = agent.understand("actually blues instead").commands
    assert command == MusicSet(device="music", action="play", genre="blues")


def test_them_after_a_question_is_what_the_answer_named() -> None:
    agent, _ = home(
        kitchen_light={"state": "ON", "brightness": 100},
        bedroom_light={"state": "ON", "brightness": 100},
        living_room_light={"state": "OFF", "brightness": 100},
    )
    agent.understand("which lights are on right now?")
    reply = agent.understand("ok turn them all off except the kitchen")
    assert LightSet(device="bedroom_light", state="OFF") in reply.commands  # "all": every light
    assert not any(c.device == "kitchen_light" for c in reply.commands)


def test_a_number_after_a_word_for_the_level_is_the_level() -> None:
    agent, _ = home()
    (command,) = agent.understand("make the kitchen bright like 90").commands
    assert command == LightSet(device="kitchen_light", state="ON", brightness=229)


def test_a_remark_before_a_correction_asks_nothing() -> None:
    agent, known = home()
    carried(known, agent.understand("turn on the kitchen light").commands)
    reply = agent.understand("oh, silly me, I meant the bedroom")
    assert LightSet(device="bedroom_light", state="ON") in reply.commands


def test_corrections_of_a_value_said_several_ways() -> None:
    agent, _ = home()
    agent.understand("turn the kitchen light blue")
    reply = agent.understand("sorry, pink I mean")
    assert reply.commands[-1] == LightSet(device="kitchen_light", state="ON", color_hex="#FF69B4")  # pink
    agent, _ = home()
    agent.understand("set the kitchen light to 40 percent")
    (command,) = agent.understand("no, sixty percent").commands
    assert command == LightSet(device="kitchen_light", state="ON", brightness=152)  # 60 % of 254


def test_a_value_corrected_mid_sentence_and_the_request_goes_on() -> None:
    agent, _ = home()
    (command,) = agent.understand("kitchen light to 75 — sorry, 65 — warm white").commands
    assert command == LightSet(device="kitchen_light", state="ON", brightness=165, color_temp=454)


def test_all_the_way_up_is_an_amount_not_every_light() -> None:
    agent, _ = home(kitchen_light={"state": "ON", "brightness": 100})
    assert agent.understand("kitchen light all the way up").commands == (
        LightSet(device="kitchen_light", state="ON", brightness=254),
    )


def test_should_i_and_later_ask_for_nothing_now() -> None:
    agent, _ = home()
    assert not agent.understand("Should I put the diffuser on or is that too much with the candles?").commands
    assert not agent.understand("later when dessert's out I'll probably want some jazz").commands


def test_a_transcript_that_says_the_same_words_twice_is_a_loop_and_acts_on_nothing() -> None:
    agent, _ = home()
    assert not agent.understand("Turn better, lamp, red, turn better, lamp, red.", heard=True).commands


def test_a_value_the_light_cannot_take_is_answered_with_why(tmp_path: Path) -> None:
    (tmp_path / "sofa_light.yaml").write_text(
        "kind: light\nname: sofa_light\nroom: living room\ncommand_topic: z/sofa_light/set\n"
        "state_topic: z/sofa_light\nfeatures: [brightness, color_temp]\n",
        encoding="utf-8",
    )
    agent = LocalIntentAgent(DeviceRegistry.load(tmp_path), {"sofa_light": {"state": "ON"}}.get)
    reply = agent.understand("turn the sofa light red")
    assert (
        not reply.commands
        and reply.text == "Sorry, the sofa light cannot change colour, so I didn't change anything."
    )


def test_a_correction_after_a_follow_up_that_named_no_device() -> None:
    agent, known = home(bedroom_light={"state": "OFF", "brightness": 100})
    for said in ("turn on the bedroom light and set it to 40 %", "a bit brighter"):
        carried(known, agent.understand(said).commands)
    reply = agent.understand("no, the kitchen")
    assert any(
        c.device == "kitchen_light" and isinstance(c, LightSet) and c.state == "ON" for c in reply.commands
    )
    assert LightSet(device="bedroom_light", state="ON", brightness=102) in reply.commands  # put back


def test_the_kitchen_as_well_after_a_request_made_in_here_is_the_kitchen_alone() -> None:
    known = {"kitchen_light": {"state": "OFF"}, "bedroom_light": {"state": "OFF"}}
    agent = LocalIntentAgent(REGISTRY, known.get, room="bedroom")
    assert [c.device for c in agent.understand("make it warm white in here").commands] == ["bedroom_light"]
    again = agent.understand("and do that in the kitchen as well").commands
    assert [c.device for c in again] == ["kitchen_light"] and isinstance(again[0], LightSet)
    assert again[0].color_temp is not None


def test_ditto_is_the_same_again() -> None:
    agent, _ = home()
    agent.understand("make the lounge light yellow")
    (command,) = agent.understand("ditto for the kitchen").commands
    assert isinstance(command, LightSet) and command.device == "kitchen_light" and command.color_hex


def test_put_it_back_how_it_was_takes_the_last_change_back() -> None:
    agent, known = home(living_room_light={"state": "ON", "brightness": 152})
    carried(known, agent.understand("turn off the living room light").commands)
    back = agent.understand("hmm no, put it back how it was").commands
    assert back == (LightSet(device="living_room_light", state="ON", brightness=152),)


def test_put_the_lounge_back_takes_back_that_one_alone() -> None:
    agent, known = home(living_room_light={"state": "ON", "brightness": 152}, kitchen_light={"state": "ON"})
    carried(known, agent.understand("turn off all the lights").commands)
    back = agent.understand("no, put the lounge back").commands
    assert back == (LightSet(device="living_room_light", state="ON", brightness=152),)
    assert agent.understand("undo that").commands[0].device == "living_room_light"  # the put back, taken back


def test_a_number_said_again_corrects_a_number_said_in_words() -> None:
    agent, known = home()
    carried(known, agent.understand("bedroom light to thirty").commands)
    (command,) = agent.understand("no wait, forty").commands
    assert isinstance(command, LightSet) and command.device == "bedroom_light"
    assert command.brightness == round(40 * 254 / 100)
    (diffuser,) = agent.understand("set the diffuser intensity to eighty five").commands
    assert isinstance(diffuser, DiffuserSet) and diffuser.intensity == 85
    (again,) = agent.understand("sorry, I meant sixty").commands
    assert isinstance(again, DiffuserSet) and again.intensity == 60


def test_a_number_correction_is_asked_back_when_the_last_request_held_two() -> None:
    agent, known = home()
    carried(known, agent.understand("bedroom light to thirty for ten minutes").commands)
    assert not agent.understand("no, forty").commands


def test_a_question_not_understood_leaves_it_as_it_was() -> None:
    agent, known = home()
    carried(known, agent.understand("turn on the kitchen light").commands)
    assert not agent.understand("who's that singing again?").commands
    (command,) = agent.understand("turn it off").commands
    assert isinstance(command, LightSet) and command.device == "kitchen_light" and command.state == "OFF"


def test_a_request_not_understood_leaves_no_it() -> None:
    agent, known = home()
    carried(known, agent.understand("turn on the kitchen light").commands)
    assert not agent.understand("make the thingamajig purple").commands
    assert not agent.understand("turn it off").commands  # "it" is what was missed, not the light


def test_the_last_request_carried_over_to_a_target_named_after_now_then_and_what_about() -> None:
    for said in ("now the bedroom", "what about the bedroom?", "the bedroom please", "and bedroom"):
        agent, known = home()
        carried(known, agent.understand("make the kitchen light blue").commands)
        (command,) = agent.understand(said).commands
        assert isinstance(command, LightSet) and command.device == "bedroom_light", said
        assert command.color_hex is not None, said


def test_a_target_named_alone_with_please_and_no_request_before_does_nothing() -> None:
    agent, _ = home()
    assert not agent.understand("the bedroom please").commands


def test_a_value_said_alone_after_a_request_changes_that_device() -> None:
    for said, check in (
        ("red instead", lambda c: c.color_hex is not None),
        ("warmer", lambda c: c.color_temp is not None),
        ("half", lambda c: c.brightness == 127),
    ):
        agent, known = home(kitchen_light={"state": "ON", "brightness": 50, "color_temp": 300})
        carried(known, agent.understand("turn on the kitchen light").commands)
        (command,) = agent.understand(said).commands
        assert isinstance(command, LightSet) and command.device == "kitchen_light", said
        assert check(command), (said, command)


def test_a_lone_step_with_no_request_before_does_nothing() -> None:
    agent, _ = home()
    assert not agent.understand("warmer").commands


def test_every_light_but_one_said_with_apart_from_or_other_than() -> None:
    for said in ("turn off all the lights apart from the bedroom", "all lights off other than the bedroom"):
        agent, _ = home(**{n: {"state": "ON", "brightness": 127} for n in ("kitchen_light", "bedroom_light")})
        commands = agent.understand(said).commands
        assert {c.device for c in commands} == {"kitchen_light", "living_room_light"}, said


def test_a_guess_never_drops_but_and_turns_the_request_around() -> None:
    agent, _ = home(bedroom_light={"state": "ON", "brightness": 127})
    commands = agent.understand("turn off everything but the bedroom").commands
    assert "bedroom_light" not in {c.device for c in commands}


def test_a_number_said_with_its_way_is_how_far_not_the_level() -> None:
    for said, brightness in (
        ("turn the kitchen light up by 20 percent", 178),
        ("make the kitchen light 20% dimmer", 76),
        ("turn the kitchen light up to 70", 178),
    ):
        agent, _ = home(kitchen_light={"state": "ON", "brightness": 127})
        (command,) = agent.understand(said).commands
        assert isinstance(command, LightSet) and command.brightness == brightness, (said, command)


def test_a_word_before_a_colour_says_what_the_colour_is_like() -> None:
    agent, _ = home(kitchen_light={"state": "ON", "brightness": 127})
    (orange,) = agent.understand("make the kitchen light a warm orange").commands
    assert isinstance(orange, LightSet) and orange.color_hex is not None and orange.color_temp is None
    (blue,) = agent.understand("kitchen light more blue").commands
    assert isinstance(blue, LightSet) and blue.color_hex is not None and blue.brightness is None
    assert not agent.understand("kitchen light less yellow").commands  # its opposite is no colour
    (white,) = agent.understand("make the kitchen light a cooler white").commands
    assert isinstance(white, LightSet) and white.color_temp is not None and white.color_hex is None


def test_something_to_play_with_a_level_plays_it_at_that_level() -> None:
    agent, _ = home()
    (command,) = agent.understand("play some classical at 30 percent").commands
    assert isinstance(command, MusicSet) and command.genre == "classical" and command.volume == 30
    (command,) = agent.understand("play jazz at 30 percent").commands
    assert isinstance(command, MusicSet) and command.action == "play" and command.genre == "jazz"
    assert command.volume == 30 and command.query is None


def test_a_search_with_a_level_after_it_plays_at_that_level() -> None:
    agent, _ = home()  # the music at volume 40
    (quieter,) = agent.understand("play some jazz a bit quieter").commands
    assert isinstance(quieter, MusicSet) and quieter.genre == "jazz" and quieter.volume == 30
    (title,) = agent.understand("play pretty woman at about 20 percent").commands
    assert isinstance(title, MusicSet) and title.query == "pretty woman" and title.volume == 20
    (spoken,) = agent.understand("play jazz at volume 20").commands
    assert isinstance(spoken, MusicSet) and spoken.genre == "jazz" and spoken.volume == 20
    (stepped,) = agent.understand("play jazz 20 percent louder").commands
    assert isinstance(stepped, MusicSet) and stepped.genre == "jazz" and stepped.volume == 60
    for title in ("bring me up", "turn down for what"):  # a way in a title is no level
        (played,) = agent.understand(f"play {title}").commands
        assert isinstance(played, MusicSet) and played.query == title and played.volume is None


def test_talk_about_a_device_changes_nothing() -> None:
    agent, _ = home()
    for said in (
        "that lavender smells amazing",
        "the lounge looks lovely in blue",
        "I left the kitchen light on again",
    ):
        assert not agent.understand(said).commands, said


def test_not_yet_said_beside_a_request_holds_it() -> None:
    agent, _ = home(kitchen_light={"state": "ON", "brightness": 127})
    assert not agent.understand("turn the lights off, not yet").commands


def test_a_mood_word_about_one_of_our_devices_sets_no_scene() -> None:
    agent, _ = home()
    reply = agent.understand("I need to clean the diffuser")
    assert reply.scene is None and not reply.commands
