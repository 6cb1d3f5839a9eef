"""The Transcriber interface: 16 kHz mono int16 audio in, text out (blocking)."""

from __future__ import annotations

from typing import Protocol

import numpy as np


class Transcriber(Protocol):
    def transcribe(self, samples: np.ndarray) -> str:
        """Blocking; callers run it off the event loop."""
        ...

    def transcribe_scored(self, samples: np.ndarray) -> tuple[str, float]:
        """The text and how sure the model was of it, 0..1 (blocking)."""
        ...
