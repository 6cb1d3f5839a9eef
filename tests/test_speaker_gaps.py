"""The speaker's reference keeps an underrun's silence: what our echo will sound like stays
aligned with the microphone when a busy CPU let the device run dry (PortAudio's callback is
driven here by hand, with the block timing it passes; the device's clock is the DAC time)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from voiced.audio.reference import PlaybackReference
from voiced.audio.sinks import SpeakerSink

RATE = 16000
BLOCK = 480  # 30 ms


def _blocks(sink: SpeakerSink, dac_times: list[float]) -> None:
    for at in dac_times:
        out = bytearray(BLOCK * 2)
        sink._fill(out, BLOCK, SimpleNamespace(outputBufferDacTime=at), None)


def test_an_underrun_puts_its_silence_into_the_reference_and_jitter_does_not() -> None:
    reference = PlaybackReference(RATE, max_lead_s=60)
    sink = SpeakerSink(None, reference)
    sink._rate = RATE
    tone = (np.sin(np.arange(RATE * 4) / 5) * 8000).astype(np.int16)
    sink._pending += tone.tobytes()
    steady = [10.0 + i * 0.03 for i in range(40)]  # 1.2 s on time (the start is never judged)
    jitter = [steady[-1] + 0.03 + i * 0.03 + (0.004 if i % 2 else 0.0) for i in range(10)]
    after = jitter[-1] + 0.03 + 0.25  # the device ran dry for 250 ms
    _blocks(sink, steady + jitter + [after + i * 0.03 for i in range(5)])
    played = reference.take(RATE * 4)
    blocks = len(steady) + len(jitter)
    assert sink.gaps == 1
    assert np.array_equal(played[: blocks * BLOCK], tone[: blocks * BLOCK])
    gap = played[blocks * BLOCK : blocks * BLOCK + 4000]
    assert not gap.any()  # 250 ms of silence where the device played none of ours
    assert np.array_equal(
        played[blocks * BLOCK + 4000 : blocks * BLOCK + 4000 + 5 * BLOCK],
        tone[blocks * BLOCK : (blocks + 5) * BLOCK],
    )


def test_the_first_second_of_a_stream_is_not_judged() -> None:
    reference = PlaybackReference(RATE, max_lead_s=60)
    sink = SpeakerSink(None, reference)
    sink._rate = RATE
    _blocks(sink, [0.0, 0.03, 0.06, 1.7, 1.73])  # a null sink reporting its start as a stall
    assert sink.gaps == 0
    assert reference._played.queued == 5 * BLOCK  # nothing added to what was played
