"""Barge-in decisions, pure and clock-free: feed frames and levels, get verdicts.

Three layers keep the daemon's own voice from interrupting it:
1. echo cancellation (echo.py) removes most of the echo, using what was played as reference;
2. EchoGate: while we play, a frame counts as the user's only if what is left after
   cancellation is well above the usual leak for the current reference level;
3. BargeInGuard: user speech during playback first ducks the reply; it stops the reply
   only once confirmed: long enough to be a real turn, or transcribed and found to be a
   command or a stop word rather than our own words or a backchannel ("uh-huh").
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass
from enum import Enum

SILENT_DB = -55.0  # a reference quieter than this plays nothing worth cancelling


class EchoGate:
    """Double-talk detection from levels: residual-vs-reference ratio against its running median."""

    def __init__(self, *, margin_db: float = 10.0, history: int = 200, initial_leak_db: float = 0.0) -> None:
        self._margin = margin_db
        self._ratios: deque[float] = deque([initial_leak_db], maxlen=history)

    @property
    def leak_db(self) -> float:
        ordered = sorted(self._ratios)
        return ordered[len(ordered) // 2]

    def is_user(self, *, vad_speech: bool, residual_db: float, reference_db: float) -> bool:
        if reference_db <= SILENT_DB:
            return vad_speech
        ratio = residual_db - reference_db
        user = vad_speech and ratio > self.leak_db + self._margin
        if not user:
            self._ratios.append(ratio)  # learn the leak only from frames that are not the user
        return user


class Verdict(Enum):
    STOP = "stop"  # "stop", "wait", "be quiet": silence, no new turn
    SPEECH = "speech"  # something else: silence, and it is the next turn
    BACKCHANNEL = "backchannel"  # "uh-huh", "mm": keep talking
    ECHO = "echo"  # our own words came back: keep talking


STOP_PHRASES = (
    "stop", "wait", "be quiet", "quiet", "shut up", "enough", "hold on", "cancel", "pause", "silence",
    "hang on", "never mind", "nevermind", "okay stop", "ok stop",
)  # fmt: skip
BACKCHANNELS = frozenset(
    [
        "uh",
        "huh",
        "uhhuh",
        "uh-huh",
        "mm",
        "mmm",
        "mhm",
        "mm-hmm",
        "mmhmm",
        "hmm",
        "hm",
        "yeah",
        "yes",
        "yep",
        "ok",
        "okay",
        "right",
        "sure",
        "i",
        "see",
        "aha",
        "ah",
        "oh",
        "uh",
        "um",
        "cool",
        "nice",
        "got",
        "it",
        "alright",
    ]
)
_WORD = re.compile(r"[a-z']+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("-", " "))


def classify(heard: str, recently_spoken: str) -> Verdict:
    """What was said over our reply? `recently_spoken`: the words we played in the last seconds."""
    words = _words(heard)
    if not words:
        return Verdict.BACKCHANNEL
    phrase = " ".join(words)
    if any(re.search(rf"\b{re.escape(stop)}\b", phrase) for stop in STOP_PHRASES) and len(words) <= 4:
        return Verdict.STOP
    if all(word in BACKCHANNELS for word in words) and len(words) <= 3:
        return Verdict.BACKCHANNEL
    ours = set(_words(recently_spoken))
    if ours and len(words) >= 2 and sum(word in ours for word in words) / len(words) >= 0.7:
        return Verdict.ECHO
    return Verdict.SPEECH


@dataclass(frozen=True)
class GuardSettings:
    frame_ms: int = 30
    confirm_ms: int = 900  # speech this long over our reply is a real turn, not a backchannel


class Action(Enum):
    NONE = "none"
    DUCK = "duck"  # lower the reply's volume at once
    INTERRUPT = "interrupt"  # stop the reply: confirmed by duration
    CHECK = "check"  # a short burst ended: transcribe it and classify()


class BargeInGuard:
    """Follows one utterance that starts while we speak."""

    def __init__(self, settings: GuardSettings) -> None:
        self._confirm_frames = max(1, settings.confirm_ms // settings.frame_ms)
        self._active = False
        self._speech_frames = 0
        self._decided = False

    @property
    def active(self) -> bool:
        return self._active

    def started(self, *, playing: bool) -> Action:
        self._active = playing
        self._speech_frames = 0
        self._decided = False
        return Action.DUCK if playing else Action.NONE

    def frame(self, *, user_speech: bool) -> Action:
        if not self._active or self._decided:
            return Action.NONE
        self._speech_frames += int(user_speech)
        if self._speech_frames >= self._confirm_frames:
            self._decided = True
            return Action.INTERRUPT
        return Action.NONE

    def ended(self) -> Action:
        """The utterance closed; a short one needs a transcript to decide."""
        was_active, decided = self._active, self._decided
        self._active = False
        if not was_active or decided:
            return Action.NONE
        return Action.CHECK

    def discarded(self) -> None:
        self._active = False
