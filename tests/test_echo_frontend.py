"""The ear's front end over our own playback, on a digital echo path (as the tests' PulseAudio
loopback is): a paused speaker leaves the microphone in exact zeros, and the reply's first
milliseconds after a resume are played before their echo is back. Nothing there is the user."""

from __future__ import annotations

import time

import numpy as np

from tests.speech_fixtures import synthesizer
from voiced.audio.pcm import EAR_RATE, resample_band_limited
from voiced.audio.reference import PlaybackReference
from voiced.ear.frontend import EchoCancellingVad

FRAME_MS = 30
FRAME = EAR_RATE * FRAME_MS // 1000
DELAY = 1635  # samples, as the echo loop measured in the e2e runs (102 ms)


def _voice() -> np.ndarray:
    tts = synthesizer()
    text = "The morning starts cool and cloudy, with a light breeze from the west. By noon it clears."
    return resample_band_limited(tts.synthesize(text), tts.sample_rate, EAR_RATE)


def _run(front: EchoCancellingVad, reference: PlaybackReference, played: np.ndarray) -> list[bool]:
    """Plays `played` through an exact echo `DELAY` samples late: each frame judged the user's?"""
    mic = np.concatenate([np.zeros(DELAY, dtype=np.int16), played])[: len(played)]
    out = []
    for start in range(0, len(played) - FRAME + 1, FRAME):
        reference.append(played[start : start + FRAME])
        frame = mic[start : start + FRAME]
        _kept, user = front.classify(frame.tobytes())
        out.append(user)
    return out


def test_a_silent_microphone_over_our_reply_is_never_the_user() -> None:
    """Before the fix the canceller's leftovers of exact zeros passed the VAD and their 'share
    unexplained' (of nothing) read 0 dB: every resume (and every reply's first 100 ms) was an
    onset of 'the user', which paused the reply again, and again."""
    voice = _voice()
    reference = PlaybackReference()
    front = EchoCancellingVad(2, reference, frame_ms=FRAME_MS)  # the daemon's default VAD
    users: dict[str, list[int]] = {}
    try:
        # The reply plays long enough for the delay to be found and the echo path fitted ...
        _run(front, reference, np.concatenate([voice, voice, voice]))
        time.sleep(0.5)  # the path is fitted in a thread of its own
        # ... then pauses (the speaker plays exact zeros) for 2 s and resumes where it was.
        for cut_s in (0.7, 1.3, 2.1, 2.9):
            cut = int(cut_s * EAR_RATE)
            pause = np.zeros(2 * EAR_RATE, dtype=np.int16)
            frames = _run(front, reference, np.concatenate([voice[:cut], pause, voice[cut:]]))
            users[f"paused at {cut_s} s"] = [i for i, user in enumerate(frames) if user]
    finally:
        front.close()
    assert not any(users.values()), f"frames taken for the user: {users}"


def test_the_onset_is_judged_from_the_frames_as_classified_with_no_thread_to_wait_for() -> None:
    voice = _voice()
    tts = synthesizer()
    other = resample_band_limited(
        tts.synthesize("Uh-huh. Please turn on the kitchen light."), tts.sample_rate, EAR_RATE
    )
    reference = PlaybackReference()
    front = EchoCancellingVad(2, reference, frame_ms=FRAME_MS)
    try:
        _run(front, reference, np.concatenate([voice, voice]))
        time.sleep(0.5)  # the path is fitted in a thread of its own
        _run(front, reference, voice[: EAR_RATE // 2])  # adopted with the next frame
        echo_only = front.judged_share(3)
        # Another voice, louder than our echo, over the reply (pitched apart: played faster).
        faster = other[::2][: len(voice)]
        mic = np.concatenate([np.zeros(DELAY, dtype=np.int16), voice])[: len(voice)].astype(np.int32)
        mic[EAR_RATE : EAR_RATE + len(faster)] += faster[: len(voice) - EAR_RATE].astype(np.int32) * 2
        shares = []
        for start in range(0, EAR_RATE + 6 * FRAME, FRAME):
            reference.append(voice[start : start + FRAME])
            frame = np.clip(mic[start : start + FRAME], -32768, 32767).astype(np.int16)
            front.classify(frame.tobytes())
            shares.append(front.judged_share(3))
    finally:
        front.close()
    assert echo_only is not None and echo_only < -30, echo_only
    voiced = [share for share in shares[-3:] if share is not None]
    assert voiced and min(voiced) > -6, shares[-6:]
