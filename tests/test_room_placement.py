"""The barge-in trials' 'no words lost' check, on the long reply's own audio: a pause at the
quiet end of a sentence is placed, and a resume that skipped words is caught."""

from __future__ import annotations

import numpy as np

from tests.probe import RATE
from tests.room import EchoRoom


def _room() -> EchoRoom:
    room = EchoRoom.__new__(EchoRoom)  # no daemon, no pulse: only the reply's audio is needed
    room._reply = None
    return room


def _paused(reply: np.ndarray, at_s: float, resume_s: float) -> tuple[np.ndarray, int, int]:
    """The reply as a speaker would play it, silent for 1.5 s at `at_s`, resuming from `resume_s`."""
    at, back = int(at_s * RATE), int(resume_s * RATE)
    gap = np.zeros(int(1.5 * RATE), dtype=np.int16)
    return np.concatenate([reply[:at], gap, reply[back:]]), at, at + len(gap)


def test_a_reply_resumed_where_it_paused_is_placed_and_kept_even_at_a_quiet_sentence_end() -> None:
    room = _room()
    reply = room.reply_audio()
    levels = [
        float(np.sqrt(np.mean(reply[i : i + RATE // 10].astype(np.float64) ** 2)))
        for i in range(0, len(reply), RATE // 10)
    ]
    quiet = next(i for i in range(10, len(levels)) if levels[i] < 30) / 10  # the first sentence's tail
    for at_s in (quiet, quiet + 0.05, 4.0, 9.3):
        recording, start, end = _paused(reply, at_s, at_s)
        assert room._kept(recording, start, end) is True, at_s
        recording, start, end = _paused(reply, at_s, at_s - 0.5)  # said again: nothing lost
        assert room._kept(recording, start, end) is True, at_s


def test_a_reply_that_resumed_past_words_is_caught() -> None:
    room = _room()
    reply = room.reply_audio()
    for at_s in (4.0, 9.3):
        recording, start, end = _paused(reply, at_s, at_s + 1.0)
        assert room._kept(recording, start, end) is False, at_s
