"""Pure tests of the barge-in decisions: echo gate, guard, and what was said over the reply."""

from voiced.ear.bargein import (
    Action,
    BargeInGuard,
    EchoGate,
    Evidence,
    GuardSettings,
    Verdict,
    classify,
    judge,
    weigh,
)


def test_echo_gate_learns_the_leak_and_passes_only_louder_speech() -> None:
    gate = EchoGate(margin_db=10, initial_leak_db=0)
    # Our own reply: after cancellation the residual sits ~16 dB under the reference.
    for _ in range(50):
        assert not gate.is_user(vad_speech=True, residual_db=-36, reference_db=-20)
    assert gate.leak_db == -16
    # The user talks over it: the residual is close to the reference level.
    assert gate.is_user(vad_speech=True, residual_db=-21, reference_db=-20)
    # Loud but not speech: not the user.
    assert not gate.is_user(vad_speech=False, residual_db=-10, reference_db=-20)


def test_echo_gate_ignores_non_speech_frames_when_learning() -> None:
    gate = EchoGate(margin_db=10, initial_leak_db=-16)
    for _ in range(100):  # silence in our reply: residual vanishes, but this is not the leak
        gate.is_user(vad_speech=False, residual_db=-120, reference_db=-20)
    assert gate.leak_db == -16


def test_echo_gate_is_plain_vad_while_nothing_plays() -> None:
    gate = EchoGate()
    assert gate.is_user(vad_speech=True, residual_db=-40, reference_db=-90)
    assert not gate.is_user(vad_speech=False, residual_db=-40, reference_db=-90)


def test_echo_gate_does_not_learn_from_the_user() -> None:
    gate = EchoGate(margin_db=10, history=20, initial_leak_db=-16)
    for _ in range(100):
        gate.is_user(vad_speech=True, residual_db=-20, reference_db=-20)
    assert gate.leak_db == -16


def test_guard_follows_speech_over_the_reply_then_checks_early_on_long_speech() -> None:
    guard = BargeInGuard(GuardSettings(frame_ms=30, confirm_ms=300))
    assert guard.started(playing=True) is Action.OVER_REPLY
    actions = [guard.frame(user_speech=True) for _ in range(10)]
    assert actions[:9] == [Action.NONE] * 9 and actions[9] is Action.CHECK_EARLY
    assert guard.frame(user_speech=True) is Action.NONE  # only once
    assert guard.ended() is Action.CHECK  # the whole utterance is judged again


def test_guard_asks_for_a_transcript_when_a_short_burst_ends() -> None:
    guard = BargeInGuard(GuardSettings(frame_ms=30, confirm_ms=300))
    guard.started(playing=True)
    for _ in range(6):
        assert guard.frame(user_speech=True) is Action.NONE
    assert guard.ended() is Action.CHECK


def test_guard_counts_the_voice_not_the_silence_that_closes_it() -> None:
    guard = BargeInGuard(GuardSettings(frame_ms=30, confirm_ms=300))
    guard.started(playing=True)
    # A 90 ms "stop" and then the hangover: ten frames and more, but no early check ...
    actions = [guard.frame(user_speech=s) for s in [True] * 3 + [False] * 20]
    assert actions == [Action.NONE] * 23
    assert guard.short  # ... and still a short burst when it closes,
    assert guard.ended() is Action.CHECK  # whose words decide, however short it was.


def test_guard_checks_early_on_the_first_voiced_frame_past_confirm() -> None:
    guard = BargeInGuard(GuardSettings(frame_ms=30, confirm_ms=300))
    guard.started(playing=True)
    assert [guard.frame(user_speech=s) for s in [True] * 9 + [False] * 4] == [Action.NONE] * 13
    assert guard.short
    assert guard.frame(user_speech=True) is Action.CHECK_EARLY  # the voice went on past 300 ms
    assert not guard.short
    assert guard.frame(user_speech=True) is Action.NONE
    # A new utterance starts counting afresh.
    guard.started(playing=True)
    assert guard.short and guard.frames_heard == 0


def test_a_dropped_utterance_is_not_checked_when_it_closes() -> None:
    guard = BargeInGuard(GuardSettings(frame_ms=30, confirm_ms=300))
    guard.started(playing=True)
    guard.frame(user_speech=True)
    guard.dropped()  # our own echo
    assert not guard.active
    assert guard.frame(user_speech=True) is Action.NONE
    assert guard.ended() is Action.NONE


def test_guard_stays_out_of_utterances_that_start_in_silence() -> None:
    guard = BargeInGuard(GuardSettings())
    assert guard.started(playing=False) is Action.NONE
    assert all(guard.frame(user_speech=True) is Action.NONE for _ in range(100))
    assert guard.ended() is Action.NONE


def test_classify_stop_words_backchannels_echo_and_speech() -> None:
    spoken = "The forecast says rain this afternoon, so take an umbrella when you go out."
    assert classify("Stop.", spoken) is Verdict.STOP
    assert classify("Wait, wait.", spoken) is Verdict.STOP
    assert classify("Be quiet!", spoken) is Verdict.STOP
    assert classify("Uh-huh.", spoken) is Verdict.BACKCHANNEL
    assert classify("Mm.", spoken) is Verdict.BACKCHANNEL
    assert classify("", spoken) is Verdict.BACKCHANNEL
    assert classify("rain this afternoon so take", spoken) is Verdict.ECHO
    assert classify("Umbrella.", spoken) is Verdict.ECHO
    assert classify("Wait.", "Wait a moment, I am checking.") is Verdict.ECHO
    assert classify("Turn on the kitchen light.", spoken) is Verdict.SPEECH
    assert classify("Please stop talking about the weather and play jazz", spoken) is Verdict.SPEECH


def test_judge_uses_the_raw_transcript_to_recognise_leaked_echo() -> None:
    spoken = "By noon the clouds break up and the sun comes out for a few hours."
    # The canceller left a mangled residual that Whisper turned into words; the raw mic says it all.
    assert judge("Let's break up.", "By noon the clouds break up and the sun", spoken) is Verdict.ECHO
    assert judge("Good day.", "the sun comes out for a few hours", spoken) is Verdict.ECHO
    # A stop word on the cleaned audio wins even when our echo dominates the raw microphone.
    assert judge("Stop.", "Stop. By noon the clouds break up", spoken) is Verdict.STOP
    # Someone else asking for something: a new turn.
    request = "Actually, turn on the kitchen light instead."
    assert judge(request, "Actually turn on the kitchen light instead the sun", spoken) is Verdict.SPEECH
    # Either way the reply goes on.
    assert judge("Uh-huh.", "Uh-huh. The sun comes out", spoken) in (Verdict.ECHO, Verdict.BACKCHANNEL)
    assert judge("Mm.", "Mm-hmm.", spoken) is Verdict.BACKCHANNEL


def test_echo_fragments_cut_at_the_edges_and_near_misses_count_as_ours() -> None:
    spoken = "Here is the forecast for today. The morning starts cool. Tomorrow looks drier."
    assert classify("Day, the more.", spoken) is Verdict.ECHO
    assert classify("Tomorrow looks dryer", spoken) is Verdict.ECHO
    assert classify("Turn on the kitchen light, please.", spoken) is Verdict.SPEECH


def test_weigh_trusts_the_acoustics_when_the_echo_path_is_known() -> None:
    ours = "Turning on the kitchen light. The morning starts cool."
    assert weigh(Evidence("", "", -40.0), ours, echo_db=-10) is Verdict.ECHO
    # Not our echo by the acoustics: resembling our words does not make it echo.
    assert weigh(Evidence("Turn on the kitchen.", "", -2.8), ours, echo_db=-10) is Verdict.SPEECH
    assert weigh(Evidence("Uh-huh.", "", -3.0), ours, echo_db=-10) is Verdict.BACKCHANNEL
    # Whisper spells a short "uh-huh" as anything: a short burst that is not a stop word is one.
    assert weigh(Evidence("Worked at that.", "", -2.0, short=True), ours, echo_db=-10) is Verdict.BACKCHANNEL
    assert weigh(Evidence("Stop.", "", -2.0, short=True), ours, echo_db=-10) is Verdict.STOP
    assert weigh(Evidence("Worked at that.", "", -2.0, short=False), ours, echo_db=-10) is Verdict.SPEECH
    assert weigh(Evidence("Up.", "", -1.3, short=False), ours, echo_db=-10) is Verdict.BACKCHANNEL
    assert weigh(Evidence("Stop.", "", -1.0), ours, echo_db=-10) is Verdict.STOP
    # Unknown echo path: fall back to both transcripts.
    assert weigh(Evidence("Good day.", "the morning starts", None), ours, echo_db=-10) is Verdict.ECHO
