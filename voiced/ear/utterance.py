"""What the ear hands on: heard words, utterances, and the barge-in lane's hooks.

The contract between a listener (the `Ear`, or typed lines) and whoever takes its turns, kept
apart from the ear's machinery so both sides import it without the audio stack.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from voiced.ear.bargein import Evidence
from voiced.ear.floor import Stage
from voiced.safe_text import clean


@dataclass(frozen=True)
class Heard:
    text: str
    asr_s: float  # time Whisper took
    early: bool  # started at a pause, before the end of the utterance was certain
    confidence: float = 1.0  # how sure Whisper was, 0..1
    doubtful: tuple[str, ...] = ()  # words Whisper was unsure of, where they were weighed
    alternatives: tuple[str, ...] = ()  # other readings of the audio, most likely first
    typed: bool = False  # the user's own words, not a reading of audio: nothing in them was misheard

    def __post_init__(self) -> None:
        # Every turn's words pass here (Whisper, typed lines, the web's /api/say): cleaned once.
        object.__setattr__(self, "text", clean(self.text))
        object.__setattr__(self, "alternatives", tuple(clean(other) for other in self.alternatives))


OverReply = Literal["no", "check"]


@dataclass(frozen=True)
class Utterance:
    turn: int
    samples: np.ndarray
    voice_end_t: float
    transcript: asyncio.Task[Heard]  # already running; the consumer awaits it
    # "check": it began while we were talking, so it may be our own echo or a backchannel;
    # `evidence` then says how much of it our echo explains, and what the words were.
    over_reply: OverReply = "no"
    evidence: asyncio.Task[Evidence] | None = None


class BargeInHooks(Protocol):
    """The barge-in lane (voiced/floor_lane.py): called straight from the ear, never queued
    behind turns. The ear only reports what it hears; the floor policy decides."""

    def voice_over(self, turn: int) -> None:
        """Speech began while our voice plays."""
        ...

    def acoustics(self, turn: int, unexplained_db: float | None, *, goes_on: bool = False) -> None:
        """How much of that speech our echo does not explain (None: unknowable yet); `goes_on`:
        of its last frames, as the voice goes on (it may pause the reply, never drop the voice)."""
        ...

    def words(self, turn: int, evidence: asyncio.Task[Evidence], stage: Stage) -> None:
        """Evidence with the words, when Whisper has them: `stage` "early" (the voice goes on),
        "paused" (a short burst paused), "final" (the utterance ended)."""
        ...

    def abandoned(self, turn: int) -> None:
        """The utterance was given up unheard (muted, or restarted): it will bring no words."""
        ...


class Listener(Protocol):
    """What the daemon takes its turns from: the `Ear`, or typed lines (`typed.py`)."""

    async def run(self, deliver: Callable[[Utterance], None], hooks: BargeInHooks | None = None) -> None:
        """Hand each finished utterance to `deliver` until the input ends."""
        ...

    def drop(self, turn: int) -> None:
        """Forget the utterance in progress if it is `turn` (it was found to be our own echo)."""
        ...


class NoHooks:
    """Hooks for a run without a barge-in lane: early words are dropped unread."""

    def voice_over(self, turn: int) -> None:
        return None

    def acoustics(self, turn: int, unexplained_db: float | None, *, goes_on: bool = False) -> None:
        return None

    def words(self, turn: int, evidence: asyncio.Task[Evidence], stage: Stage) -> None:
        if stage != "final":  # a final one travels with its utterance
            evidence.cancel()

    def abandoned(self, turn: int) -> None:
        return None
