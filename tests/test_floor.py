"""The floor policy, pure: events in, actions out, plain asserts (no clock, no audio)."""

from voiced.ear.bargein import Verdict
from voiced.ear.floor import (
    Acoustics,
    Cancel,
    Drop,
    FloorPolicy,
    FloorSettings,
    Pause,
    ReplyEnded,
    ReplyStarted,
    Resume,
    Take,
    VoiceOver,
    Words,
)

REQUEST = "Please turn on the kitchen light."


def over_a_reply(utterance: int = 5, reply: int = 1) -> FloorPolicy:
    policy = FloorPolicy(FloorSettings(echo_db=-10, drop_extra_db=8, pause_db=-6, repause_db=-3))
    assert policy.feed(ReplyStarted(reply)) == []
    assert policy.feed(VoiceOver(utterance, reply)) == []  # no acoustics yet: nothing done
    return policy


def test_a_voice_that_is_not_our_echo_pauses_at_once_and_a_request_cancels_and_is_the_turn() -> None:
    policy = over_a_reply()
    assert policy.feed(Acoustics(5, -3.0)) == [Pause(1, 5, -3.0)]
    assert policy.paused(1)
    assert policy.feed(Acoustics(5, -2.0)) == []  # already paused: once
    assert policy.feed(Words(5, Verdict.SPEECH, REQUEST, "early")) == [Cancel(1, 5, REQUEST, Verdict.SPEECH)]
    # The whole utterance, heard later, makes it the next turn; the request once heard stands.
    assert policy.feed(Words(5, Verdict.BACKCHANNEL, "Please.", "final")) == [Take(5)]
    assert policy.feed(Words(5, Verdict.SPEECH, REQUEST, "final")) == []  # settled


def test_uh_huh_holds_the_pause_through_its_own_gap_and_resumes_when_it_ends() -> None:
    policy = over_a_reply()
    assert policy.feed(Acoustics(5, -4.0)) == [Pause(1, 5, -4.0)]
    # "Uh-" has paused: the reply stays paused (resuming here made it stutter when "-huh" came)
    assert policy.feed(Words(5, Verdict.BACKCHANNEL, "Uh.", "paused")) == []
    assert policy.paused(1)
    assert policy.feed(Acoustics(5, -2.0, goes_on=True)) == []
    assert policy.feed(Words(5, Verdict.BACKCHANNEL, "Uh-huh.", "final")) == [
        Resume(1, 5),
        Drop(5, "Uh-huh.", Verdict.BACKCHANNEL),
    ]
    assert not policy.paused(1)


def test_a_voice_that_goes_on_after_a_backchannel_is_a_request_at_its_end() -> None:
    policy = over_a_reply()
    policy.feed(Acoustics(5, -4.0))
    assert policy.feed(Words(5, Verdict.BACKCHANNEL, "Okay.", "paused")) == []
    assert policy.feed(Acoustics(5, -2.5)) == []  # still paused
    assert policy.feed(Words(5, Verdict.SPEECH, REQUEST, "final")) == [
        Cancel(1, 5, REQUEST, Verdict.SPEECH),
        Take(5),
    ]


def test_stop_cancels_and_is_no_turn() -> None:
    policy = over_a_reply()
    policy.feed(Acoustics(5, -1.0))
    assert policy.feed(Words(5, Verdict.STOP, "Stop.", "paused")) == [Cancel(1, 5, "Stop.", Verdict.STOP)]
    assert policy.feed(Words(5, Verdict.STOP, "Stop.", "final")) == []


def test_an_early_guess_of_few_words_keeps_the_pause_and_the_end_decides() -> None:
    """Under load the first look at a request may hold only "Please": not a backchannel yet."""
    policy = over_a_reply()
    policy.feed(Acoustics(5, -3.0))
    assert policy.feed(Words(5, Verdict.BACKCHANNEL, "Please.", "early")) == []
    assert policy.paused(1)
    assert policy.feed(Words(5, Verdict.SPEECH, REQUEST, "final")) == [
        Cancel(1, 5, REQUEST, Verdict.SPEECH),
        Take(5),
    ]


def test_our_own_echo_is_dropped_on_acoustics_alone_and_never_pauses() -> None:
    policy = over_a_reply()
    assert policy.feed(Acoustics(5, -25.0)) == [Drop(5, "", Verdict.ECHO)]
    assert not policy.paused(1)
    assert policy.feed(Words(5, Verdict.SPEECH, "the clouds break up", "final")) == []  # forgotten


def test_an_unsure_voice_waits_for_its_words_without_pausing() -> None:
    policy = over_a_reply()
    assert policy.feed(Acoustics(5, -14.0)) == []  # between echo and voice
    assert policy.feed(Acoustics(5, -8.0)) == []
    assert policy.feed(Acoustics(5, None)) == []  # no echo path yet
    assert not policy.paused(1)
    assert policy.feed(Words(5, Verdict.ECHO, "clouds break up", "early")) == [
        Drop(5, "clouds break up", Verdict.ECHO)
    ]


def test_echo_found_after_a_pause_resumes_the_reply_and_raises_the_bar_for_it() -> None:
    policy = over_a_reply()
    policy.feed(Acoustics(5, -5.0))
    assert policy.feed(Words(5, Verdict.ECHO, "", "early")) == [Resume(1, 5), Drop(5, "", Verdict.ECHO)]
    # The replay after the resume sounds the same: it must not pause the reply again and again.
    policy.feed(VoiceOver(6, 1))
    assert policy.feed(Acoustics(6, -5.0)) == []
    assert policy.feed(Acoustics(6, -1.0)) == [Pause(1, 6, -1.0)]  # a real voice still does
    # A new reply starts with the usual bar.
    policy.feed(ReplyStarted(2))
    policy.feed(VoiceOver(7, 2))
    assert policy.feed(Acoustics(7, -5.0)) == [Pause(2, 7, -5.0)]


def test_no_words_at_all_gives_the_floor_back() -> None:
    policy = over_a_reply()
    policy.feed(Acoustics(5, -5.0))
    assert policy.feed(Words(5, None, "", "final")) == [Resume(1, 5), Drop(5, "", Verdict.BACKCHANNEL)]


def test_a_verdict_stops_only_the_reply_it_was_spoken_over() -> None:
    policy = over_a_reply()
    policy.feed(ReplyEnded(1))
    policy.feed(ReplyStarted(2))  # a reply queued before the voice has begun since
    assert policy.feed(Acoustics(5, -2.0)) == []  # its reply is gone: nothing to pause
    assert policy.feed(Words(5, Verdict.STOP, "Stop.", "final")) == []
    policy.feed(VoiceOver(6, 1))
    assert policy.feed(Words(6, Verdict.SPEECH, REQUEST, "final")) == [Take(6)]  # still a turn
    assert not policy.paused(2)


def test_two_voices_hold_the_pause_until_both_are_done() -> None:
    policy = over_a_reply()
    policy.feed(VoiceOver(6, 1))
    assert policy.feed(Acoustics(5, -3.0)) == [Pause(1, 5, -3.0)]
    assert policy.feed(Acoustics(6, -3.0)) == []
    assert policy.feed(Words(5, Verdict.BACKCHANNEL, "Mm.", "final")) == [Drop(5, "Mm.", Verdict.BACKCHANNEL)]
    assert policy.paused(1)
    assert policy.feed(Words(6, Verdict.BACKCHANNEL, "Right.", "final")) == [
        Resume(1, 6),
        Drop(6, "Right.", Verdict.BACKCHANNEL),
    ]


def test_news_about_an_utterance_never_seen_changes_nothing() -> None:
    policy = over_a_reply()
    assert policy.feed(Acoustics(9, -1.0)) == []
    assert policy.feed(Words(9, Verdict.STOP, "Stop.", "final")) == []
    assert not policy.paused(1)


def test_a_stop_whose_onset_our_echo_half_hides_pauses_as_the_voice_goes_on_and_is_never_dropped_so() -> None:
    policy = over_a_reply()
    assert policy.feed(Acoustics(5, -6.5)) == []  # the "s" of "stop" under our echo: not sure
    assert policy.feed(Acoustics(5, -30.0, goes_on=True)) == []  # echo between words: no drop
    assert policy.feed(Acoustics(5, -0.4, goes_on=True)) == [Pause(1, 5, -0.4)]  # "-to-"
    assert policy.feed(Words(5, Verdict.STOP, "Stop.", "paused")) == [Cancel(1, 5, "Stop.", Verdict.STOP)]
