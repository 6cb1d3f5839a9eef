"""Pure tests of the barge-in decisions: echo gate, guard, and what was said over the reply."""

from voiced.ear.bargein import Action, BargeInGuard, EchoGate, GuardSettings, Verdict, classify


def test_echo_gate_learns_the_leak_and_passes_only_louder_speech() -> None:
    gate = EchoGate(margin_db=10, initial_leak_db=0)
    # Our own reply: after cancellation the residual sits ~16 dB under the reference.
    for _ in range(50):
        assert not gate.is_user(vad_speech=True, residual_db=-36, reference_db=-20)
    assert -17 <= gate.leak_db <= -15
    # The user talks over it: the residual is close to the reference level.
    assert gate.is_user(vad_speech=True, residual_db=-21, reference_db=-20)
    # Loud but not speech: not the user.
    assert not gate.is_user(vad_speech=False, residual_db=-10, reference_db=-20)


def test_echo_gate_is_plain_vad_while_nothing_plays() -> None:
    gate = EchoGate()
    assert gate.is_user(vad_speech=True, residual_db=-40, reference_db=-90)
    assert not gate.is_user(vad_speech=False, residual_db=-40, reference_db=-90)


def test_echo_gate_does_not_learn_from_the_user() -> None:
    gate = EchoGate(margin_db=10, history=20, initial_leak_db=-16)
    for _ in range(100):
        gate.is_user(vad_speech=True, residual_db=-20, reference_db=-20)
    assert gate.leak_db == -16


def test_guard_ducks_then_interrupts_on_long_speech() -> None:
    guard = BargeInGuard(GuardSettings(frame_ms=30, confirm_ms=300))
    assert guard.started(playing=True) is Action.DUCK
    actions = [guard.frame(user_speech=True) for _ in range(10)]
    assert actions[:9] == [Action.NONE] * 9 and actions[9] is Action.INTERRUPT
    assert guard.frame(user_speech=True) is Action.NONE  # decided once
    assert guard.ended() is Action.NONE


def test_guard_asks_for_a_transcript_when_a_short_burst_ends() -> None:
    guard = BargeInGuard(GuardSettings(frame_ms=30, confirm_ms=300))
    guard.started(playing=True)
    for _ in range(6):
        assert guard.frame(user_speech=True) is Action.NONE
    for _ in range(20):  # gaps (echo-only frames) do not count toward confirmation
        assert guard.frame(user_speech=False) is Action.NONE
    assert guard.ended() is Action.CHECK


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
    assert classify("Turn on the kitchen light.", spoken) is Verdict.SPEECH
    assert classify("Please stop talking about the weather and play jazz", spoken) is Verdict.SPEECH
