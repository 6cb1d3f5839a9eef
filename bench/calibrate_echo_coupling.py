"""Calibration of the front end's `COUPLING_MARGIN_DB` (voiced/ear/frontend.py): after a restart (a
reply starts, a pause resumes) our echo may come back at another delay, and until the delay is found
again a frame is the user's only if the microphone is this much louder than our echo can be (the
loudest reference of the last 800 ms, times the coupling the fitted path measured).

It plays synthesized replies through a digital echo path (with a quiet microphone noise), primes the
front end, restarts, moves the echo by each `--moves-ms`, and over the next reply's first 400 ms
(before any new delay estimate) counts, for each candidate margin:
- frames of our echo alone taken for the user (each may start a false onset), and
- frames of another voice over it, at each `--voices-db` relative to our echo, taken for the user.
The margin is the smallest that takes no echo frame at any move, with headroom; a larger one only
hears fewer voices at the start of a reply (the fitted path takes over within ~0.5 s). Asserts nothing.

Run: .venv/bin/python bench/calibrate_echo_coupling.py [--margins 0,2,4,6,8,10]
(2026-11-29, 5 moves: echo frames taken for the user 7 / 0 / 0 / 0 / 0 at margins 0 / 2 / 4 / 6 / 8 dB;
a voice 12 dB above our echo taken in 15 of 25 frames up to 6 dB, 5 at 8; 6 dB above it, 15 at 2 dB, 1
at 6. The margin is 6 dB: 4 dB of headroom over the smallest clean one, for rooms less exact than this
digital path, and the louder voice still heard; a voice at our echo's level waits for the fitted path)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.speech_fixtures import synthesizer  # noqa: E402
from voiced.audio.pcm import EAR_RATE, resample_band_limited, rms_dbfs  # noqa: E402
from voiced.audio.reference import PlaybackReference  # noqa: E402
from voiced.ear.frontend import EchoCancellingVad  # noqa: E402

FRAME_MS = 30
FRAME = EAR_RATE * FRAME_MS // 1000
DELAY = 1635  # samples: the echo loop of the e2e runs (102 ms)
WATCHED_S = 0.4  # after the restart: before the estimator's first look can have moved the delay
REPLIES = (
    "The morning starts cool and cloudy, with a light breeze from the west. By noon it clears.",
    "Turning on the kitchen light and the bedroom lamp, and setting the diffuser to lavender.",
)


def speech(text: str, speed: float = 1.0) -> np.ndarray:
    tts = synthesizer()
    return resample_band_limited(tts.synthesize(text), int(tts.sample_rate * speed), EAR_RATE)


def trial(
    margin: float, move: int, voice_db: float | None, other: np.ndarray, seed: int
) -> tuple[int, int, int]:
    """(echo frames taken for the user, voice frames, voice frames taken) over the watched span."""
    first, second = speech(REPLIES[0]), speech(REPLIES[1])
    rng = np.random.default_rng(seed)
    reference = PlaybackReference()
    front = EchoCancellingVad(2, reference, frame_ms=FRAME_MS, coupling_margin_db=margin)
    try:
        _play(front, reference, np.concatenate([first, first]), DELAY, None, rng, len(first) * 2)
        time.sleep(0.5)  # the path is fitted in a thread of its own
        reference.retract(0)
        voice = None
        if voice_db is not None:
            echo_db = rms_dbfs(second[: int(WATCHED_S * EAR_RATE)])
            gain = 10 ** ((echo_db + voice_db - rms_dbfs(other)) / 20)
            voice = np.zeros(len(second))
            start = int(0.15 * EAR_RATE)
            voice[start : start + len(other)] = other[: len(second) - start] * gain
        watched = int(WATCHED_S * EAR_RATE)
        return _play(front, reference, second[: watched + DELAY + move], DELAY + move, voice, rng, watched)
    finally:
        front.close()


def _play(
    front: EchoCancellingVad,
    reference: PlaybackReference,
    played: np.ndarray,
    delay: int,
    voice: np.ndarray | None,
    rng: np.random.Generator,
    watched: int,
) -> tuple[int, int, int]:
    mic = np.concatenate([np.zeros(delay), played])[: len(played)] + rng.normal(0, 10, len(played))
    if voice is not None:
        mic += voice[: len(mic)]
    echo_taken = voice_frames = voice_taken = 0
    for start in range(0, min(len(played), watched) - FRAME + 1, FRAME):
        reference.append(played[start : start + FRAME])
        frame = np.clip(mic[start : start + FRAME], -32768, 32767).astype(np.int16)
        _kept, user = front.classify(frame.tobytes())
        is_voice = voice is not None and rms_dbfs(voice[start : start + FRAME].astype(np.int16)) > -45
        voice_frames += is_voice
        voice_taken += is_voice and user
        echo_taken += user and not is_voice
        time.sleep(0.002)  # the fitter's thread gets its turn, as in real time
    return echo_taken, voice_frames, voice_taken


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--margins", default="0,2,4,6,8,10")
    parser.add_argument("--moves-ms", default="-24,16,32,100,170")
    parser.add_argument("--voices-db", default="0,6,12")
    args = parser.parse_args()
    margins = [float(m) for m in args.margins.split(",")]
    moves = [int(float(m) * EAR_RATE / 1000) for m in args.moves_ms.split(",")]
    voices = [float(v) for v in args.voices_db.split(",")]
    other = speech("Uh-huh. Please stop.", 2.0)  # another voice: pitched apart, played faster
    print(
        f"moves {args.moves_ms} ms; voices {args.voices_db} dB over our echo; {WATCHED_S} s after a restart"
    )
    for margin in margins:
        echo = sum(trial(margin, move, None, other, i)[0] for i, move in enumerate(moves))
        heard = []
        for voice_db in voices:
            runs = [trial(margin, move, voice_db, other, i) for i, move in enumerate(moves)]
            frames, taken = sum(r[1] for r in runs), sum(r[2] for r in runs)
            heard.append(f"{voice_db:+.0f} dB {taken}/{frames}")
        print(f"margin {margin:4.1f} dB: echo frames taken {echo:3d}; voice frames taken: {', '.join(heard)}")


if __name__ == "__main__":
    main()
