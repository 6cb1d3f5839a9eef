"""Per-frame front end of the ear: is this frame the user speaking?

Without a speaker (file output) that is plain webrtcvad. With one, the frame first goes
through the echo canceller, and the EchoGate decides whether what is left is the user.
"""

from __future__ import annotations

from collections import deque
from typing import Protocol

import numpy as np
import webrtcvad

from voiced.audio.pcm import EAR_RATE, rms_dbfs
from voiced.ear.bargein import EchoGate
from voiced.ear.echo import PlaybackReference, SpeexEchoCanceller


class FrameClassifier(Protocol):
    def classify(self, frame: bytes) -> tuple[bytes, bool]:
        """The frame to keep (echo removed) and whether it is the user's speech."""
        ...


class PlainVad:
    def __init__(self, aggressiveness: int) -> None:
        self._vad = webrtcvad.Vad(aggressiveness)

    def classify(self, frame: bytes) -> tuple[bytes, bool]:
        return frame, self._vad.is_speech(frame, EAR_RATE)


class EchoCancellingVad:
    def __init__(
        self,
        aggressiveness: int,
        reference: PlaybackReference,
        *,
        frame_ms: int,
        tail_ms: int = 400,
        margin_db: float = 10.0,
    ) -> None:
        self._vad = webrtcvad.Vad(aggressiveness)
        self._reference = reference
        self._canceller = SpeexEchoCanceller(EAR_RATE, tail_ms)
        self._gate = EchoGate(margin_db=margin_db)
        # The echo lags what we played: judge each frame against the loudest recent reference.
        self._recent_ref_db: deque[float] = deque(maxlen=max(1, tail_ms // frame_ms))

    @property
    def playing(self) -> bool:
        return self._reference.active or max(self._recent_ref_db, default=-120.0) > -55.0

    def classify(self, frame: bytes) -> tuple[bytes, bool]:
        mic = np.frombuffer(frame, dtype=np.int16)
        reference = self._reference.take(len(mic))
        self._recent_ref_db.append(rms_dbfs(reference))
        cleaned = self._canceller.process(mic, reference)
        data = cleaned.tobytes()
        speech = self._vad.is_speech(data, EAR_RATE)
        user = self._gate.is_user(
            vad_speech=speech, residual_db=rms_dbfs(cleaned), reference_db=max(self._recent_ref_db)
        )
        return data, user

    def close(self) -> None:
        self._canceller.close()
