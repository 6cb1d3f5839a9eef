"""The end-of-turn rule on feature sequences: plain asserts, no audio, no clock."""

from __future__ import annotations

from voiced.ear.end_of_turn import EndOfTurnSettings, Pace, Pause, settings_for, silence_needed, words_of

SETTINGS = settings_for(whole_ms=150, hangover_ms=600)


def heard(text: str, *, whole: bool = True, confident: bool = True) -> Pause:
    return Pause(whole=whole, confident=confident, words=words_of(text))


def test_a_whole_confident_request_closes_after_the_short_silence() -> None:
    assert silence_needed([heard("Turn on the kitchen light.")], SETTINGS) == 150
    assert silence_needed([heard("Set the bedroom light to 40%.")], SETTINGS) == 150


def test_a_request_paused_mid_way_waits_the_full_hangover() -> None:
    assert silence_needed([heard("Turn off the", whole=False)], SETTINGS) == 600
    assert silence_needed([heard("Set the kitchen light to", whole=False)], SETTINGS) == 600


def test_a_trailing_and_waits_even_if_called_whole() -> None:
    assert silence_needed([heard("Turn on the kitchen light and")], SETTINGS) == 600
    assert silence_needed([heard("Turn on the kitchen light, then")], SETTINGS) == 600


def test_a_number_still_without_its_unit_waits() -> None:
    assert silence_needed([heard("Set the lights to 40.")], SETTINGS) == 600
    assert silence_needed([heard("set the lights to forty")], SETTINGS) == 600
    assert silence_needed([heard("set the lights to forty percent")], SETTINGS) == 150


def test_unsure_words_wait_the_full_hangover() -> None:
    assert silence_needed([heard("Turn on the kitchen light.", confident=False)], SETTINGS) == 600


def test_a_speaker_who_went_on_past_a_whole_request_gets_the_full_hangover_after() -> None:
    pauses = [heard("Turn on the kitchen light."), heard("Turn on the kitchen light and the bedroom one.")]
    assert silence_needed(pauses, SETTINGS) == 600
    # a pause mid-request before that is no such sign
    pauses = [heard("Turn on the", whole=False), heard("Turn on the kitchen light.")]
    assert silence_needed(pauses, SETTINGS) == 150


def test_no_pause_heard_or_the_rule_off_means_the_hangover() -> None:
    assert silence_needed([], SETTINGS) == 600
    off = EndOfTurnSettings(whole_ms=0, hangover_ms=600)
    assert silence_needed([heard("Turn on the kitchen light.")], off) == 600


def test_the_short_silence_is_never_longer_than_the_hangover() -> None:
    odd = EndOfTurnSettings(whole_ms=900, hangover_ms=600)
    assert silence_needed([heard("Pause the music.")], odd) == 600


def test_words_keep_a_percent_sign_and_digits() -> None:
    assert words_of("Set it to 40%.") == ("set", "it", "to", "40", "%")
    assert words_of("Don\u2019t stop.") == ("don't", "stop")


def _paced(careful_turns: int = 3) -> Pace:
    return Pace(careful_turns, hangover_frames=20, onset_frames=3)  # 600 ms, 90 ms at 30 ms a frame


def test_speech_again_within_the_hangover_of_an_early_end_makes_the_speaker_careful() -> None:
    pace = _paced()
    pace.ended(early_after_frames=5)  # closed after 150 ms of silence, on its words
    for _ in range(17):  # 510 ms more: 660 ms after the voice ended, inside the hangover + onset
        pace.frame()
    assert pace.started() and pace.careful
    whole = Pause(whole=True, confident=True, words=("turn", "on", "the", "light"))
    assert silence_needed([whole], SETTINGS, careful=pace.careful) == SETTINGS.hangover_ms


def test_speech_after_the_window_or_after_a_full_hangover_end_teaches_nothing() -> None:
    late = _paced()
    late.ended(early_after_frames=5)
    for _ in range(19):  # past 15 frames of hangover left + 3 of onset
        late.frame()
    assert not late.started() and not late.careful
    patient = _paced()
    patient.ended(early_after_frames=None)  # the turn waited the full hangover
    assert not patient.started() and not patient.careful


def test_careful_lasts_the_turns_it_is_told_then_early_ends_return() -> None:
    pace = _paced(careful_turns=2)
    pace.ended(early_after_frames=5)
    assert pace.started()
    pace.ended(early_after_frames=None)  # the turn that went on
    assert pace.careful
    pace.started()
    pace.ended(early_after_frames=None)
    assert not pace.careful


def test_nothing_is_learned_with_no_careful_turns() -> None:
    pace = _paced(careful_turns=0)
    pace.ended(early_after_frames=5)
    assert not pace.started() and not pace.careful
