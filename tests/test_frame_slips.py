"""Requests broken by a pause or a slip, in plain asserts on the real local agent (no broker): a verb,
a hesitation, then what it is for; a real word typed is never "corrected" into a value; a value of a
kind said by its word ("the lounge light") is that kind's, not a title to play."""

from __future__ import annotations

from tests.test_frame import REGISTRY, agent, read
from voiced.devices.vocabulary import HomeVocabulary
from voiced.language import english
from voiced.mouth.understanding.corrections import taken_back


def test_a_pause_after_the_word_to_play_leaves_the_title_to_play() -> None:
    for text in ("play, uh, Here Comes the Sun", "play, Here Comes the Sun"):
        found = agent("kitchen").understand(text)
        assert [(c.device, c.query) for c in found.commands] == [("music", "here comes the sun")], text
    both = agent("kitchen").understand("diffuser peppermint at thirty, and play, uh, Here Comes the Sun")
    assert [c.device for c in both.commands] == ["diffuser", "music"]
    request = agent("kitchen").understand("play, turn off the lights")  # a request of its own after it
    assert [(c.device, c.state) for c in request.commands] == [("kitchen_light", "OFF")]


def test_a_real_word_is_never_corrected_into_a_value() -> None:
    sun = agent("kitchen").understand("and here comes the sun")
    assert not [c for c in sun.commands if c.device == "kitchen_light"]
    slip = agent().understand("turn on the kitchne light")  # no English word: a slip of the keys
    assert [(c.device, c.state) for c in slip.commands] == [("kitchen_light", "ON")]
    spaced = agent().understand("play some lo fi")
    assert [(c.device, c.genre) for c in spaced.commands] == [("music", "lofi")]


def test_a_colour_for_a_light_said_by_its_kind_is_no_title() -> None:
    blue = agent().understand("Can you put blue colour in the lounge light?")
    assert [(c.device, c.color_hex) for c in blue.commands] == [("living_room_light", "#0000FF")]
    album = agent().understand("put on Kind of Blue in the lounge")
    assert [(c.device, c.query) for c in album.commands] == [("music", "Kind of Blue")]


def test_a_value_closed_by_actually_takes_back_the_one_before() -> None:
    for text in ("lounge light red, uh, orange actually", "lounge light red, orange instead"):
        found = agent().understand(text)
        assert [(c.device, c.color_hex) for c in found.commands] == [("living_room_light", "#FFA500")], text
    level = agent().understand("kitchen light to 40, uh, 60 percent actually")
    assert [(c.device, c.brightness) for c in level.commands] == [("kitchen_light", 152)]
    target = agent().understand("turn off the kitchen light, the bedroom light instead")
    assert [(c.device, c.state) for c in target.commands] == [("bedroom_light", "OFF")]


def test_if_after_a_verb_of_finding_out_sets_no_condition() -> None:
    found = agent("kitchen").understand("brighter in here, uh, can't see if the onions are done")
    assert [c.device for c in found.commands] == ["kitchen_light"]
    assert not agent("kitchen").understand("if it gets dark turn on the lights").commands


def test_more_before_a_plain_adjective_compares() -> None:
    softer = agent().understand("Put the diffuser more soft, the smell is too much strong")
    assert [(c.device, c.intensity) for c in softer.commands] == [("diffuser", 40)]
    quieter = agent().understand("make the music more quiet")
    assert [(c.device, c.volume) for c in quieter.commands] == [("music", 40)]


def test_barely_seeing_asks_for_more_light_here() -> None:
    found = agent("bedroom").understand("I can barely see my keyboard in here.")
    assert [(c.device, c.brightness) for c in found.commands] == [("bedroom_light", 64)]


def correction(first: str, then: str, room: str | None = None) -> list[tuple[str, str | None, str | None]]:
    talk = agent(room)
    talk.understand(first)
    return [
        (c.device, getattr(c, "state", None), getattr(c, "query", None))
        for c in talk.understand(then).commands
    ]


def test_a_correction_may_say_who_wants_it_and_name_the_wrong_one_after_not() -> None:
    assert correction("Play Beethoven", "No, not Beethoven, Chopin") == [("music", None, "chopin")]
    assert correction("Turn the lounge light on for me", "no wait, he wants the bedroom one") == [
        ("living_room_light", "OFF", None),
        ("bedroom_light", "ON", None),
    ]
    assert correction("Put the bedroom light in red", "no, no, in the kitchen I say") == [
        ("bedroom_light", "OFF", None),
        ("kitchen_light", "ON", None),
    ]
    music = correction("Turn the diffuser up", "ah no, not that, the music is what I meant")
    assert [d for d, _, _ in music] == ["diffuser", "music"]


def test_talk_beside_a_request_leaves_the_request_to_correct_or_carry_over() -> None:
    assert correction(
        "kitchen light on, im making pasta at midnight again",
        "actually no i meant the bedroom, im just gonna eat in bed",
    ) == [("kitchen_light", "OFF", None), ("bedroom_light", "ON", None)]
    assert correction("kitchen light on, im making pasta", "and the lounge") == [
        ("living_room_light", "ON", None)
    ]


def test_a_new_request_after_a_bare_no_is_done_without_its_instead() -> None:
    assert correction("play Taylor Swift", "ugh no, play Ed Sheeran instead") == [
        ("music", None, "ed sheeran")
    ]


def test_a_correction_to_the_one_in_here_names_our_room() -> None:
    assert correction("switch the lounge light on", "no not that one, the one in here", room="bedroom") == [
        ("living_room_light", "OFF", None),
        ("bedroom_light", "ON", None),
    ]
    assert correction(
        "lights on in here", "no, I meant the living room, where the kids are", room="kitchen"
    ) == [
        ("kitchen_light", "OFF", None),
        ("living_room_light", "ON", None),
    ]


def test_a_lone_off_is_for_the_last_device() -> None:
    assert correction("bedroom light 20", "actually just off, she's out cold") == [
        ("bedroom_light", "OFF", None)
    ]
    assert not agent().understand("off").commands  # nothing acted on before: off of what?


def test_my_room_is_here_where_we_know_the_room_and_else_the_bedroom() -> None:
    talk = agent()
    talk.understand("set the lounge light to 40")
    assert [(c.device, c.brightness) for c in talk.understand("same in my room").commands] == [
        ("bedroom_light", 102)
    ]
    here = agent("living room").understand("turn off all the lights in my room")
    assert [(c.device, c.state) for c in here.commands] == [("living_room_light", "OFF")]


def test_a_genre_at_a_level_is_played_and_never_lands_on_the_last_device() -> None:
    talk = agent()
    talk.understand("diffuser on")
    found = talk.understand("lofi at 25")
    assert [(c.device, c.genre, c.volume) for c in found.commands] == [("music", "lofi", 25)]


def test_a_device_named_first_is_the_it_of_the_request_after_it() -> None:
    found = agent().understand("Diffuser make it 30 and lounge light dim to 25")
    assert [c.device for c in found.commands] == ["diffuser", "living_room_light"]
    assert found.commands[0].intensity == 30
    talk = agent()
    talk.understand("kitchen light on")
    blue = talk.understand("bedroom light, make it blue")
    assert [(c.device, c.color_hex) for c in blue.commands] == [("bedroom_light", "#0000FF")]


def test_the_last_request_for_another_room_with_a_new_value() -> None:
    talk = agent()
    talk.understand("Bring the kitchen up to eighty.")
    warm = talk.understand("Thank you. The bedroom as well, but in a warm white.")
    assert [(c.device, c.brightness, c.color_temp) for c in warm.commands] == [
        ("bedroom_light", 203, None),
        ("bedroom_light", None, 454),
    ]
    talk = agent()
    talk.understand("kitchen light red")
    assert [(c.device, c.color_hex) for c in talk.understand("the bedroom too, but blue").commands] == [
        ("bedroom_light", "#0000FF")
    ]


def test_a_title_or_genre_alone_beside_talk_is_played() -> None:
    song = agent().understand("Bohemian Rhapsody, please, I fancy a sing-song")
    assert [(c.device, c.query) for c in song.commands] == [("music", "bohemian rhapsody")]
    genre = agent().understand("Let's have something mellow on. Jazz, maybe.")
    assert [(c.device, c.genre) for c in genre.commands] == [("music", "jazz")]


def test_like_that_and_identical_carry_the_last_request_over() -> None:
    talk = agent()
    talk.understand("Make the kitchen light warm white")
    assert [(c.device, c.color_temp) for c in talk.understand("do the bedroom like that").commands] == [
        ("bedroom_light", 454)
    ]


def test_talk_with_its_own_subject_after_a_request_leaves_the_request() -> None:
    talk = agent()
    talk.understand("play jazz")
    assert [(c.device, c.action) for c in talk.understand("pause it my mom is calling me").commands] == [
        ("music", "pause")
    ]
    kept = agent().understand(
        "turn off the kitchen light my husband is in the bedroom"
    )  # names a room: no talk
    assert not kept.commands


def test_review_cases_that_must_not_act_wrongly() -> None:
    two = agent().understand("lounge light red and kitchen light blue actually")
    assert [(c.device, c.color_hex) for c in two.commands] == [
        ("living_room_light", "#FF0000"),
        ("kitchen_light", "#0000FF"),
    ]
    levels = agent().understand("set the diffuser to 30 and the lounge light to 50 actually")
    assert [c.device for c in levels.commands] == ["diffuser", "living_room_light"]
    assert levels.commands[0].intensity == 30
    talk = agent()
    talk.understand("turn on the kitchen light")
    assert not talk.understand("no, what is the bedroom light").commands  # a question, no correction
    assert not agent().understand("Jazz? no thanks").commands
    assert not agent().understand("the kitchen light keeps starting to flicker").commands
    assert [c.query for c in agent().understand("play I'd Rather").commands] == ["i'd rather"]
    assert not agent().understand("jazz at the kitchen").commands
    same = agent()
    same.understand("kitchen light red")
    assert not same.understand("the bedroom light looks identical").commands
    heard = agent()
    heard.understand("turn on the kitchen light")
    assert not heard.understand("off", heard=True).commands  # heard alone, it may be noise


def test_a_part_left_unfinished_is_finished_after_the_pause() -> None:
    up = agent().understand("bring the kitchen light up to, er, seventy percent")
    assert [(c.device, c.brightness) for c in up.commands] == [("kitchen_light", 178)]
    # "down some" is finished: what follows is talk beside it, not its level
    down = agent().understand("Turn that music down some, honey, I can't hear myself think")
    assert [(c.device, c.volume) for c in down.commands] == [("music", 40)]


def test_a_verb_that_only_asks_for_a_value_keeps_the_light_last_acted_on() -> None:
    talk = agent()
    talk.understand("turn on the kitchen light")
    found = talk.understand("set the light to 70 percent")
    assert [(c.device, c.brightness) for c in found.commands] == [("kitchen_light", 178)]
    room = agent().understand("It's so gloomy in the kitchen, could you bring the light up to 70 percent?")
    assert [(c.device, c.brightness) for c in room.commands] == [("kitchen_light", 178)]


def test_pausing_what_plays_starts_nothing_new() -> None:
    for text in ("yo pause the music rq", "pause the rock music", "stop the jazz music"):
        found = agent().understand(text)
        assert [(c.device, c.action, c.genre) for c in found.commands] in (
            [("music", "pause", None)],
            [("music", "stop", None)],
        ), text


def test_a_tie_between_moods_goes_to_the_part_that_asks() -> None:
    assert agent().understand("my girlfriend's coming over, make it romantic").scene == "dinner"


def test_a_number_alone_after_a_request_is_its_level() -> None:
    pop = agent().understand("put some pop on, not too loud, thirty maybe")
    assert [(c.device, c.genre, c.volume) for c in pop.commands] == [
        ("music", "pop", None),
        ("music", None, 30),
    ]
    counted = agent().understand("turn on the kitchen light, one")  # a count, not 1 percent
    assert [(c.device, c.brightness) for c in counted.commands] == [("kitchen_light", None)]
    titled = agent().understand("play some Adele, 25")  # perhaps of the title: never a level
    assert not [c for c in titled.commands if c.volume is not None]
    assert [c.action for c in agent().understand("hit play").commands] == ["play"]


def test_a_verb_s_own_out_switches_nothing_off() -> None:
    talk = agent()
    talk.understand("turn on the kitchen light")
    assert not talk.understand("can you sort that out").commands
    out = agent().understand("put the kitchen light out")
    assert [(c.device, c.state) for c in out.commands] == [("kitchen_light", "OFF")]


def test_idioms_of_too_much_and_too_little() -> None:
    loud = agent().understand("the music's a bit much, I can't hear myself think")
    assert [(c.device, c.volume) for c in loud.commands] == [("music", 40)]
    dark = agent().understand("it's pitch black in the lounge")
    assert [(c.device, c.brightness) for c in dark.commands] == [("living_room_light", 64)]


def test_a_title_corrects_a_genre_and_a_dislike_opens_the_correction() -> None:
    talk = agent()
    talk.understand("play some jazz")
    found = talk.understand("nah not feeling it, pink floyd instead")
    assert [(c.device, c.query) for c in found.commands] == [("music", "pink floyd")]


def test_a_joining_but_and_an_asking_have_keep_the_request() -> None:
    talk = agent()
    talk.understand("play some jazz")
    found = talk.understand("Oh, it's lovely, but could you maybe have it a bit quieter, like thirty or so?")
    assert [(c.device, c.volume) for c in found.commands] == [("music", 30)]
    excepting = agent().understand("turn off all the lights, but the bedroom")
    assert [c.device for c in excepting.commands] == ["kitchen_light", "living_room_light"]
    assert not agent().understand("have you turned off the lights?").commands


def test_goodnight_beside_thanks_or_a_request_is_a_farewell() -> None:
    thanks = agent().understand("Thank you, night night")
    assert thanks.scene is None and not thanks.commands and thanks.text == "Good night."
    beside = agent("bedroom").understand("I'm off to sleep now, lights out in here please. Goodnight!")
    assert beside.scene is None
    assert [(c.device, c.state) for c in beside.commands] == [("bedroom_light", "OFF")]
    assert agent().understand("goodnight").scene == "good_night"  # alone: the bedtime scene


def test_a_name_then_you_is_said_to_someone_else() -> None:
    for text in (
        "Priya, could you stick the diffuser on? The lavender's fine",
        "Jonah! Turn your music down",
    ):
        assert not agent().understand(text).commands, text
    assert (
        agent().understand("Naw, that's bowfin. Lavender.").text
        != "That sounded like it was for Naw, so I didn't change anything."
    )
    assert agent().understand("Oops! turn on the kitchen light").commands


def test_a_value_for_another_kind_never_moves_to_the_named_device_s_room() -> None:
    assert not agent().understand("turn on the diffuser with the orange smell").commands
    sandalwood = agent().understand("sandalwood in the lounge")  # the lounge: a place, not its light
    assert [(c.device, c.scent) for c in sandalwood.commands] == [("diffuser", "sandalwood")]


def test_a_parting_is_no_time_for_later_and_darker_is_dimmer() -> None:
    found = agent().understand("turn off the kitchen light, see you later")
    assert [(c.device, c.state) for c in found.commands] == [("kitchen_light", "OFF")]
    assert not agent().understand("turn off the lights tomorrow").commands
    darker = read("can you make the bedroom light a tiny bit darker")
    assert darker is not None and (darker.targets, darker.direction) == (("bedroom_light",), "down")


def test_review_cases_of_this_session_that_must_not_act() -> None:
    for text in ("have fun", "have a good night", "have some dinner"):  # wishes, no moods asked for
        found = agent().understand(text)
        assert found.scene is None and not found.commands, text
    for first, then in (("turn on the kitchen light", "get off"), ("play some jazz", "get off me")):
        talk = agent()
        talk.understand(first)
        assert not talk.understand(then).commands, then
    for text in (
        "turn on the kitchen light. How old are you? Ten.",
        "turn off the music, fifteen",
        "pause the music, twenty",
    ):
        assert not [
            c
            for c in agent().understand(text).commands
            if getattr(c, "volume", None) or getattr(c, "brightness", None)
        ], text
    diffuser = agent().understand("start the diffuser, 30")
    assert [(c.device, c.duration_min, c.intensity) for c in diffuser.commands] == [("diffuser", 30, None)]
    assert agent().understand("Hiya! Could you turn the lights on").commands


def test_lights_and_screens_of_a_gamer_s_own_are_not_ours() -> None:
    for text in ("set my rgb to purple", "turn the led strip blue", "turn on my monitor"):
        assert not agent("kitchen").understand(text).commands, text


def test_how_long_said_as_a_phrase_is_minutes_without_for_but_not_a_time() -> None:
    given = agent().understand("Give us half an hour of sandalwood from the diffuser")
    assert [(c.device, c.scent, c.duration_min, c.intensity) for c in given.commands] == [
        ("diffuser", "sandalwood", 30, None)
    ]
    bounded = agent().understand("run the diffuser for no more than half an hour")
    assert [(c.device, c.duration_min) for c in bounded.commands] == [("diffuser", 30)]
    assert not agent().understand("I turned the diffuser on half an hour ago").commands
    later = agent().understand("in half an hour turn off the diffuser")
    assert not later.commands  # a time, for later: not now, and no 30 minutes
    assert agent().understand("set the kitchen light to half").commands[0].brightness is not None


def test_a_verb_s_own_out_stops_nothing() -> None:
    heard = agent().understand("I can barely make out the tune at all")
    assert not [c for c in heard.commands if getattr(c, "action", None) == "stop"]


def test_what_follows_not_that_is_the_wrong_one() -> None:
    vocabulary = HomeVocabulary.of(REGISTRY)
    said = "and a warm white if you can not that cold hospital colour"
    assert taken_back(said, vocabulary, english()) is None  # was "and a cold if you can hospital colour"
    fixed = taken_back("kitchen light to 75 sorry 65 warm white", vocabulary, english())
    assert fixed is not None and "65" in fixed and "75" not in fixed  # a correcting word alone: the next


def test_a_letter_held_in_typing_is_the_word_it_stretches() -> None:
    talk = agent()
    talk.understand("play some jazz")
    louder = talk.understand("LOUDERRR")
    assert [(c.device, c.volume is not None) for c in louder.commands] == [("music", True)]
    cool = agent().understand("coool white in the kitchen pleaseee")  # twice where that is the word
    assert [(c.device, c.color_temp is not None) for c in cool.commands] == [("kitchen_light", True)]


def test_as_bright_as_it_will_go_is_full() -> None:
    full = agent().understand("make the kitchen light as bright as it will go")
    assert [(c.device, c.brightness) for c in full.commands] == [("kitchen_light", 254)]  # its full


def test_what_a_review_found_the_rules_above_must_not_do() -> None:
    off = agent().understand("turn the diffuser off in about a minute")
    assert [(c.device, c.state, c.duration_min) for c in off.commands] == [("diffuser", "OFF", None)]
    assert [c.query for c in agent().understand("play wait a minute").commands] == ["wait a minute"]
    assert [c.query for c in agent().understand("play xxxtentacion").commands] == ["xxxtentacion"]
    gone = agent().understand("make bedroom go out")
    assert [(c.device, c.state) for c in gone.commands] == [("bedroom_light", "OFF")]
    blue = agent().understand("kitchen light red, not that, blue, and play jazz")
    assert [
        (c.device, getattr(c, "color_hex", None) or getattr(c, "genre", None)) for c in blue.commands
    ] == [
        ("kitchen_light", "#0000FF"),
        ("music", "jazz"),
    ]
    assert agent().understand("lavender for 20 minutes, give me a minute").commands[0].duration_min == 20
