"""The playback reference, fed blocks as the speaker and microphone callbacks would: no clock."""

from __future__ import annotations

import numpy as np

from voiced.audio.reference import PlaybackReference

BLOCK = 480  # 30 ms at 16 kHz


def counting(start: int, blocks: int) -> list[np.ndarray]:
    """Blocks whose samples number themselves, so a pairing can be read off what comes out."""
    return [np.arange(start + i * BLOCK, start + (i + 1) * BLOCK, dtype=np.int16) for i in range(blocks)]


def test_a_lagging_ear_keeps_its_pairing_with_the_speaker() -> None:
    reference = PlaybackReference(max_lead_s=0.1)  # 1600 samples
    played = counting(1, 60)
    for block in played[:2]:  # the speaker starts two blocks ahead
        reference.append(block)
    # The ear stalls for 40 blocks (1.2 s, far past max_lead) while both devices run on.
    for block in played[2:42]:
        reference.append(block)
        reference.capture(BLOCK)
    taken = [reference.take(BLOCK) for _ in range(40)]
    assert reference.cut == 0
    # Microphone block k is paired with played block k: nothing was cut, nothing shifted.
    for got, want in zip(taken, played, strict=False):
        assert np.array_equal(got, want)


def test_the_lead_beyond_the_backlog_is_cut() -> None:
    reference = PlaybackReference(max_lead_s=0.1)
    for block in counting(1, 10):  # the speaker runs 10 blocks ahead of a microphone that records nothing
        reference.append(block)
    reference.capture(BLOCK)
    first = reference.take(BLOCK)
    assert first[0] == 1
    assert reference.cut >= 5 * BLOCK  # 9 blocks left, at most ~1600 samples of lead kept
    assert reference.take(BLOCK)[0] > 2 * BLOCK


def test_blocks_the_microphone_drops_take_their_reference_with_them() -> None:
    reference = PlaybackReference()
    played = counting(1, 4)
    for block in played:
        reference.append(block)
        reference.capture(BLOCK)
    reference.forget(BLOCK)  # the microphone's queue was full: its oldest block is gone
    assert np.array_equal(reference.take(BLOCK), played[1])


def test_without_a_microphone_counting_it_reads_what_was_played() -> None:
    reference = PlaybackReference()
    reference.append(np.full(BLOCK, 7, dtype=np.int16))
    assert np.array_equal(reference.take(BLOCK), np.full(BLOCK, 7, dtype=np.int16))
    assert not reference.take(BLOCK).any()  # nothing played: silence


def test_retracted_samples_are_the_newest_and_the_pairing_holds() -> None:
    reference = PlaybackReference(sample_rate=1000, max_lead_s=10.0)
    reference.append(np.arange(1, 6, dtype=np.int16))
    reference.append(np.arange(6, 11, dtype=np.int16))
    reference.retract(7)  # the speaker took back 6..10 and 4..5: never played
    reference.append(np.array([20, 21], dtype=np.int16))  # what it played next
    assert reference.take(6).tolist() == [1, 2, 3, 20, 21, 0]
    reference.retract(3)  # nothing left to retract: logged, no harm
    assert reference.take(2).tolist() == [0, 0]


def test_a_restart_is_reported_when_the_ear_reaches_it_not_when_it_happens() -> None:
    reference = PlaybackReference(sample_rate=1000, max_lead_s=10.0)
    reference.append(np.ones(10, dtype=np.int16))
    reference.retract(4)  # the speaker restarted after its 6th sample
    reference.append(np.full(5, 2, dtype=np.int16))
    reference.take(5)
    assert not reference.restarted()  # the microphone is still before it
    reference.take(2)
    assert reference.restarted()
    assert not reference.restarted()  # told once
    reference.take(4)
    assert not reference.restarted()


def test_audio_sent_to_a_satellite_after_a_silence_pairs_with_the_microphone_from_then_on() -> None:
    reference = PlaybackReference(sample_rate=1000, max_lead_s=10.0)
    reference.capture(5)  # the satellite streams; nothing was sent to it
    reference.take(2)  # the ear is 3 samples behind the microphone
    reference.append_sent(np.array([7, 8], dtype=np.int16), restart=True)
    assert reference.take(2).tolist() == [0, 0]  # recorded before the reply was sent
    assert not reference.restarted()
    assert reference.take(1).tolist() == [0]
    assert reference.restarted()  # the reply is what the next microphone sample holds
    assert reference.take(3).tolist() == [7, 8, 0]


def test_audio_sent_ahead_of_the_microphone_is_not_padded() -> None:
    reference = PlaybackReference(sample_rate=1000, max_lead_s=10.0)
    reference.capture(2)
    reference.append_sent(np.array([1, 2, 3], dtype=np.int16))  # 2 samples of silence, then a lead
    reference.append_sent(np.array([4], dtype=np.int16))  # still ahead: follows on at once
    reference.capture(6)  # the satellite ran dry two samples before the next was sent
    reference.append_sent(np.array([9], dtype=np.int16))
    assert reference.take(9).tolist() == [0, 0, 1, 2, 3, 4, 0, 0, 9]


def test_a_reference_cut_or_run_short_is_reported_as_a_restart() -> None:
    """Either shifts our echo against its reference with no restart of the speaker (a speaker
    late or early on a busy box): the ear must look for the delay again, as after a restart."""
    short = PlaybackReference(sample_rate=1000, max_lead_s=10.0)
    short.append(np.ones(3, dtype=np.int16))
    short.take(3)
    assert not short.restarted()
    short.append(np.ones(2, dtype=np.int16))
    short.take(5)  # the ear wanted three samples the speaker had not played yet
    assert short.restarted()
    assert not short.restarted()

    cut = PlaybackReference(max_lead_s=0.1)
    for block in counting(1, 10):
        cut.append(block)
    cut.capture(BLOCK)
    cut.take(BLOCK)
    assert cut.cut and cut.restarted()
