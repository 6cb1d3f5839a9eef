"""The satellite's playhead: how much of what we sent it has yet to play, from times given in."""

from __future__ import annotations

from voiced.satellites.audio import Playhead


def test_a_reply_is_sent_a_lead_ahead_of_what_the_satellite_plays() -> None:
    playhead = Playhead()
    assert playhead.wait_s(10.0, 0.04, lead_s=0.2) == 0.0  # nothing sent yet: at once
    assert playhead.sent(0.04, now=10.0)  # the stream's first audio starts it playing
    for _ in range(4):
        assert playhead.wait_s(10.0, 0.04, lead_s=0.2) < 1e-9
        assert not playhead.sent(0.04, now=10.0)
    assert round(playhead.left_s(10.0), 3) == 0.2
    assert round(playhead.wait_s(10.0, 0.04, lead_s=0.2), 3) == 0.04  # one slice played first
    assert round(playhead.left_s(10.1), 3) == 0.1
    assert playhead.left_s(11.0) == 0.0


def test_a_satellite_that_ran_dry_plays_what_comes_next_from_then_on() -> None:
    playhead = Playhead()
    playhead.sent(0.5, now=0.0)
    assert not playhead.sent(0.5, now=0.3)  # still playing the first half second
    assert playhead.sent(0.5, now=2.0)  # it had played all of it by 1.0: a gap, then this
    assert round(playhead.left_s(2.2), 3) == 0.3
    assert round(playhead.sent_s, 3) == 1.5
