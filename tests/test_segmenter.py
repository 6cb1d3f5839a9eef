"""Pure tests of the clock-free VAD segmenter: frames and verdicts in, utterances out."""

from voiced.ear.segmenter import (
    Segmenter,
    SegmenterSettings,
    UtteranceDiscarded,
    UtteranceEnded,
    UtterancePaused,
    UtteranceStarted,
)

SETTINGS = SegmenterSettings(
    frame_ms=30, pre_roll_ms=90, onset_ms=60, hangover_ms=150, min_speech_ms=90, max_utterance_ms=900
)


def feed(segmenter: Segmenter, pattern: str) -> list[tuple[int, object]]:
    """'s' = speech frame, '.' = silence; each frame's bytes carry its index."""
    events = []
    for index, mark in enumerate(pattern):
        frame = index.to_bytes(2, "big")
        for event in segmenter.process(frame, mark == "s"):
            events.append((index, event))
    return events


def frames_of(event: UtteranceEnded | UtteranceDiscarded) -> list[int]:
    return [int.from_bytes(event.audio[i : i + 2], "big") for i in range(0, len(event.audio), 2)]


def test_silence_opens_nothing() -> None:
    assert feed(Segmenter(SETTINGS), "." * 50) == []


def test_onset_needs_consecutive_speech() -> None:
    events = feed(Segmenter(SETTINGS), ".s.s.s.ss")
    assert [(i, type(e)) for i, e in events] == [(8, UtteranceStarted)]


def test_hangover_closes_after_enough_silence() -> None:
    segmenter = Segmenter(SETTINGS)
    events = feed(segmenter, "..ssssss....." + "....")
    kinds = [(i, type(e)) for i, e in events]
    # speech onset at frame 3 (two speech frames), end after 5 silent frames (150 ms) -> frame 12
    assert kinds == [(3, UtteranceStarted), (12, UtteranceEnded)]
    ended = events[1][1]
    assert isinstance(ended, UtteranceEnded)
    assert ended.reason == "silence"
    assert ended.speech_ms == 6 * 30
    assert ended.trailing_silence_ms == 150
    assert not segmenter.in_speech


def test_short_pause_does_not_split_an_utterance() -> None:
    events = feed(Segmenter(SETTINGS), "ssss...ssss" + "." * 5)
    assert [type(e) for _, e in events] == [UtteranceStarted, UtteranceEnded]


def test_pre_roll_keeps_audio_from_before_onset() -> None:
    events = feed(Segmenter(SETTINGS), "......ssss.....")
    ended = events[-1][1]
    assert isinstance(ended, UtteranceEnded)
    # pre-roll 90 ms = 3 frames before the 2 onset frames: frames 3..7 open the utterance
    assert frames_of(ended)[:5] == [3, 4, 5, 6, 7]
    assert frames_of(ended)[-1] == 14


def test_max_length_cuts_a_long_utterance() -> None:
    events = feed(Segmenter(SETTINGS), "s" * 40)
    ended = [e for _, e in events if isinstance(e, UtteranceEnded)]
    assert ended and ended[0].reason == "max_length"
    assert len(frames_of(ended[0])) == 30  # 900 ms of 30 ms frames
    # speech keeps going, so a new utterance opens right after the cut
    assert sum(isinstance(e, UtteranceStarted) for _, e in events) == 2


def test_too_little_speech_is_discarded() -> None:
    events = feed(Segmenter(SETTINGS), "..ss......")
    assert [type(e) for _, e in events] == [UtteranceStarted, UtteranceDiscarded]


def test_a_discarded_burst_still_hands_over_its_audio_and_trailing_silence() -> None:
    # Over our reply, a "stop" can be this short: the caller checks its words all the same.
    events = feed(Segmenter(SETTINGS), "..ss......")
    (index, discarded) = events[1]
    assert isinstance(discarded, UtteranceDiscarded)
    assert discarded.speech_ms == 60 and discarded.trailing_silence_ms == 150
    assert frames_of(discarded) == list(range(index + 1))  # pre-roll, the burst, its hangover


def test_flush_closes_an_utterance_in_progress() -> None:
    segmenter = Segmenter(SETTINGS)
    feed(segmenter, "sssss")
    (event,) = segmenter.flush()
    assert isinstance(event, UtteranceEnded) and event.reason == "input_ended"
    assert segmenter.flush() == []


def test_reset_drops_what_was_in_progress() -> None:
    segmenter = Segmenter(SETTINGS)
    feed(segmenter, "sssss")
    segmenter.reset()
    assert not segmenter.in_speech
    assert segmenter.flush() == []


PAUSING = SegmenterSettings(
    frame_ms=30,
    pre_roll_ms=0,
    onset_ms=60,
    hangover_ms=300,
    min_speech_ms=90,
    max_utterance_ms=9000,
    pause_ms=90,
)


def test_a_pause_is_announced_before_the_end_with_the_audio_so_far() -> None:
    events = feed(Segmenter(PAUSING), "ssss" + "." * 10)
    kinds = [(i, type(e).__name__) for i, e in events]
    assert kinds == [(1, "UtteranceStarted"), (6, "UtterancePaused"), (13, "UtteranceEnded")]
    paused = events[1][1]
    assert isinstance(paused, UtterancePaused)
    assert [int.from_bytes(paused.audio[i : i + 2], "big") for i in range(0, len(paused.audio), 2)] == list(
        range(7)
    )


def test_speech_after_a_pause_announces_a_new_pause() -> None:
    events = feed(Segmenter(PAUSING), "ssss...ssss" + "." * 10)
    names = [type(e).__name__ for _, e in events]
    assert names == ["UtteranceStarted", "UtterancePaused", "UtterancePaused", "UtteranceEnded"]


def test_a_longer_pause_for_one_utterance_only() -> None:
    segmenter = Segmenter(PAUSING)
    assert [type(e).__name__ for _, e in feed(segmenter, "ss")] == ["UtteranceStarted"]
    segmenter.pause_after(180)  # speech over our reply: a 90 ms gap in a word is no pause
    events = feed(segmenter, "ss...ss......" + "." * 6)
    assert [(i, type(e).__name__) for i, e in events] == [(12, "UtterancePaused"), (16, "UtteranceEnded")]
    again = feed(segmenter, "ssss" + "." * 10)  # the next utterance has the usual pause
    assert [type(e).__name__ for _, e in again] == ["UtteranceStarted", "UtterancePaused", "UtteranceEnded"]
    assert again[1][0] == 6


def test_no_pause_for_too_little_speech_or_when_disabled() -> None:
    assert [type(e).__name__ for _, e in feed(Segmenter(PAUSING), "ss" + "." * 10)] == [
        "UtteranceStarted",
        "UtteranceDiscarded",
    ]
    assert "UtterancePaused" not in [type(e).__name__ for _, e in feed(Segmenter(SETTINGS), "ssss......")]


COMPLETING = SegmenterSettings(
    frame_ms=30,
    pre_roll_ms=0,
    onset_ms=60,
    hangover_ms=600,
    min_speech_ms=90,
    max_utterance_ms=9000,
    pause_ms=90,
    complete_ms=180,
)


def test_a_request_judged_whole_at_a_pause_ends_after_the_shorter_silence() -> None:
    segmenter = Segmenter(COMPLETING)
    assert [type(e).__name__ for _, e in feed(segmenter, "ssss...")] == [
        "UtteranceStarted",
        "UtterancePaused",
    ]
    assert segmenter.commit() == []  # 3 frames of silence: not yet the 6 it needs
    ended = [e for _, e in feed(segmenter, "...")]
    assert len(ended) == 1 and isinstance(ended[0], UtteranceEnded)
    assert ended[0].reason == "complete" and ended[0].trailing_silence_ms == 180


def test_the_caller_may_name_the_silence_a_judged_request_needs() -> None:
    segmenter = Segmenter(COMPLETING)
    feed(segmenter, "ssss...")
    assert segmenter.commit(300) == []  # 10 frames this time, not complete_ms's 6
    assert [type(e).__name__ for _, e in feed(segmenter, "......")] == []
    ended = [e for _, e in feed(segmenter, ".")]
    assert isinstance(ended[0], UtteranceEnded) and ended[0].trailing_silence_ms == 300


def test_a_judgement_that_comes_late_ends_the_utterance_at_once() -> None:
    segmenter = Segmenter(COMPLETING)
    feed(segmenter, "ssss" + "." * 8)  # the transcript took longer than complete_ms
    (ended,) = segmenter.commit()
    assert isinstance(ended, UtteranceEnded) and ended.reason == "complete"
    assert not segmenter.in_speech


def test_speech_after_the_judgement_withdraws_it_and_the_full_hangover_applies() -> None:
    segmenter = Segmenter(COMPLETING)
    feed(segmenter, "ssss...")
    segmenter.commit()
    events = feed(segmenter, "ss" + "." * 19)
    assert [type(e).__name__ for _, e in events] == ["UtterancePaused"]  # no early end
    ended = feed(segmenter, ".")
    assert isinstance(ended[0][1], UtteranceEnded) and ended[0][1].reason == "silence"


def test_no_judgement_outside_a_pause_or_when_disabled() -> None:
    segmenter = Segmenter(COMPLETING)
    feed(segmenter, "ssss")
    assert segmenter.commit() == []  # still speaking: nothing is judged, nothing remembered
    assert [type(e).__name__ for _, e in feed(segmenter, "." * 19)] == ["UtterancePaused"]
    plain = Segmenter(PAUSING)  # complete_ms = 0
    feed(plain, "ssss" + "." * 8)
    assert plain.commit() == [] and plain.in_speech


def test_over_our_reply_a_burst_too_short_for_a_turn_still_pauses_so_its_words_come_sooner() -> None:
    segmenter = Segmenter(PAUSING)
    assert [type(e).__name__ for _, e in feed(segmenter, "ss")] == ["UtteranceStarted"]
    segmenter.pause_after(60, short_too=True)  # "uh-huh" over our reply: decided at its pause
    events = feed(segmenter, "." * 10)
    assert [(i, type(e).__name__) for i, e in events] == [(1, "UtterancePaused"), (9, "UtteranceDiscarded")]
    again = feed(segmenter, "ss" + "." * 10)  # the next utterance: too short to pause, as ever
    assert [type(e).__name__ for _, e in again] == ["UtteranceStarted", "UtteranceDiscarded"]
