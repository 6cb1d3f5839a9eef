"""Plays a signal through the real `SpeakerSink`, pausing and resuming (or stopping) it once.

Run as its own process with a private PulseAudio server's environment (PortAudio reads it once,
when loaded): `python -m tests.speaker_rig SIGNAL.npy OUT.json pause|stop|after-silence`. Prints nothing;
writes the monotonic times of each call and what the echo reference kept (OUT.json, and the
reference itself beside it as OUT.npy).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import numpy as np

from voiced.audio.pcm import EAR_RATE
from voiced.audio.reference import PlaybackReference
from voiced.audio.sinks import SpeakerSink

PAUSE_AFTER_S = 1.0
PAUSED_FOR_S = 0.6


async def after_silence(sink: SpeakerSink, signal: np.ndarray) -> dict[str, float]:
    """A blip, a second of silence, then the signal: a reply after the speaker fell quiet."""
    await sink.play(signal[: EAR_RATE // 5], EAR_RATE)
    await sink.drain()
    await asyncio.sleep(PAUSE_AFTER_S)
    times = {"call_t": time.monotonic()}
    await sink.play(signal, EAR_RATE)
    await sink.drain()
    await asyncio.sleep(0.3)
    return times


async def run(signal: np.ndarray, mode: str, out: Path) -> dict[str, float]:
    reference = PlaybackReference(EAR_RATE)
    sink = SpeakerSink(None, reference)
    if mode == "after-silence":
        try:
            times = await after_silence(sink, signal)
        finally:
            sink.close()
        kept = reference.take(60 * EAR_RATE)
        np.save(out.with_suffix(".npy"), kept)
        return times
    times: dict[str, float] = {}

    async def feed() -> None:
        for start in range(0, len(signal), EAR_RATE // 10):
            await sink.play(signal[start : start + EAR_RATE // 10], EAR_RATE)
        await sink.drain()

    feeding = asyncio.create_task(feed(), name="feed")
    try:
        await asyncio.sleep(PAUSE_AFTER_S)
        times["call_t"] = time.monotonic()
        if mode == "pause":
            sink.pause()
            await asyncio.sleep(PAUSED_FOR_S)
            times["resume_t"] = time.monotonic()
            sink.resume()
            await asyncio.wait_for(feeding, timeout=30)
        else:
            sink.abort()
            feeding.cancel()
            await asyncio.sleep(0.5)
    finally:
        feeding.cancel()
        await asyncio.gather(feeding, return_exceptions=True)
        await asyncio.sleep(0.3)  # the last block reaches the monitor
        sink.close()
    kept = reference.take(60 * EAR_RATE)
    times["reference_sound"] = float(np.count_nonzero(kept))
    return times


def main() -> None:
    signal = np.load(sys.argv[1])
    out = Path(sys.argv[2])
    times = asyncio.run(run(signal, sys.argv[3], out))
    out.write_text(json.dumps(times))


if __name__ == "__main__":
    main()
