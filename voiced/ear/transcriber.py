"""The Transcriber interface: 16 kHz mono int16 audio in, text out (blocking)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np


@dataclass(frozen=True)
class Hearing:
    """What the model heard: the text, how sure it was of it (0..1), the words it doubted, and what
    else it might have been."""

    text: str
    confidence: float = 1.0
    doubtful: tuple[str, ...] = ()  # lower case, without punctuation; only when asked for
    alternatives: tuple[str, ...] = ()  # other readings of the same audio, most likely first (short speech)


class SpeechStream(Protocol):
    """An utterance's audio as it is spoken, for an engine that takes it then (none of these blocks)."""

    def begin(self, audio: bytes) -> None: ...

    def feed(self, frame: bytes) -> None: ...

    def end(self) -> None: ...


class Transcriber(Protocol):
    def transcribe(self, samples: np.ndarray) -> str:
        """Blocking; callers run it off the event loop."""
        ...

    def transcribe_scored(self, samples: np.ndarray) -> Hearing:
        """The text, how sure the model was of it and, where it matters, of each word (blocking)."""
        ...

    def glance(self, samples: np.ndarray) -> Hearing:
        """The first words of a short burst, as fast as the model allows: enough to tell a stop
        word, a backchannel or more words apart over our reply; never a turn's text (blocking)."""
        ...
