"""The Synthesizer interface: one sentence of text in, int16 samples out (blocking)."""

from __future__ import annotations

from typing import Protocol

import numpy as np


class Synthesizer(Protocol):
    @property
    def sample_rate(self) -> int: ...

    def synthesize(self, text: str) -> np.ndarray:
        """Blocking; callers run it off the event loop."""
        ...
