"""Barge-in evidence, pure and clock-free: feed frames and levels, get verdicts on words.

Three layers keep the daemon's own voice from interrupting it:
1. echo cancellation (echo.py) removes most of the echo, using what was played as reference;
2. EchoGate: while we play, a frame counts as the user's only if what is left after
   cancellation is well above the usual leak for the current reference level;
3. BargeInGuard: follows user speech during playback and says when its words are worth
   transcribing (the first `confirm_ms` of speech, or a shorter burst when it pauses or ends);
   `weigh` turns them into a verdict: our own words, a backchannel, a stop word or a request.
What is done about it (pause, resume, cancel, drop) is the floor policy's (floor.py).
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass
from difflib import SequenceMatcher
from enum import Enum

from voiced.language import english

SILENT_DB = -55.0  # a reference quieter than this plays nothing worth cancelling


class EchoGate:
    """Double-talk detection from levels: residual-vs-reference ratio against its running median."""

    def __init__(self, *, margin_db: float = 10.0, history: int = 100, initial_leak_db: float = 0.0) -> None:
        self._margin = margin_db
        self._ratios: deque[float] = deque([initial_leak_db], maxlen=history)

    @property
    def leak_db(self) -> float:
        """The 80th percentile of recent leak: the user must beat our echo near its worst."""
        ordered = sorted(self._ratios)
        return ordered[min(len(ordered) - 1, int(len(ordered) * 0.8))]

    def is_user(self, *, vad_speech: bool, residual_db: float, reference_db: float) -> bool:
        if reference_db <= SILENT_DB or not vad_speech:
            return vad_speech
        ratio = residual_db - reference_db
        user = ratio > self.leak_db + self._margin
        if not user:
            # Learn the leak from our own voice only: speech-like frames that are not the user.
            self._ratios.append(max(ratio, -60.0))
        return user


class Verdict(Enum):
    STOP = "stop"  # "stop", "wait", "be quiet": silence, no new turn
    SPEECH = "speech"  # something else: silence, and it is the next turn
    BACKCHANNEL = "backchannel"  # "uh-huh", "mm": keep talking
    ECHO = "echo"  # our own words came back: keep talking


STOP_PHRASES = english().word_lists["stop_phrases"]
BACKCHANNELS = frozenset(english().word_lists["backchannels"])
_WORD = re.compile(r"[a-z']+")
# Talking over a reply takes a stop word or a real request ("turn on the light"): fewer words
# are a backchannel, or a guess of Whisper's at one.
MIN_WORDS_TO_INTERRUPT = 3


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("-", " "))


def _shared_start(a: str, b: str) -> int:
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count


def _is_ours(word: str, ours: set[str]) -> bool:
    """Exact, or a fragment cut at the edge of the audio ("day" of "today", "more" of "morning"),
    or a near miss of Whisper's ("dryer" for "drier")."""
    if word in ours:
        return True
    if len(word) < 3:
        return False
    return any(
        mine.startswith(word)
        or mine.endswith(word)
        or _shared_start(word, mine) >= max(3, round(len(word) * 0.6))
        or (len(word) >= 4 and len(mine) >= 4 and SequenceMatcher(None, word, mine).ratio() >= 0.75)
        for mine in ours
    )


def classify(heard: str, recently_spoken: str) -> Verdict:
    """What was said over our reply? `recently_spoken`: the words we are playing and just played.

    Our own words win over stop words: if the reply itself says "wait", hearing "wait" is echo.
    """
    words = _words(heard)
    if not words:
        return Verdict.BACKCHANNEL
    ours = set(_words(recently_spoken))
    if ours and sum(_is_ours(word, ours) for word in words) / len(words) >= 0.7:
        return Verdict.ECHO
    phrase = " ".join(words)
    if any(re.search(rf"\b{re.escape(stop)}\b", phrase) for stop in STOP_PHRASES) and len(words) <= 4:
        return Verdict.STOP
    if all(word in BACKCHANNELS for word in words) and len(words) <= 3:
        return Verdict.BACKCHANNEL
    return Verdict.SPEECH


@dataclass(frozen=True)
class Evidence:
    """What is known about speech that began over our reply."""

    cleaned: str  # transcript after echo cancellation ("" when not needed)
    raw: str  # transcript of the microphone as is ("" when not needed)
    unexplained_db: float | None  # share of the microphone our echo does not explain; None: unknown
    short: bool = False  # the burst ended before `confirm_ms` of speech


def weigh(evidence: Evidence, recently_spoken: str, *, echo_db: float) -> Verdict:
    """Acoustic evidence first (instant, exact), then the words.

    A short burst that is neither our echo nor a stop word is a backchannel: Whisper cannot
    be trusted to spell "uh-huh" or "mm", but it does not need to.
    """
    if evidence.unexplained_db is not None and evidence.unexplained_db <= echo_db:
        return Verdict.ECHO
    if evidence.unexplained_db is not None:
        # Acoustically not our echo: words that resemble ours are a coincidence.
        verdict = classify(evidence.cleaned, "")
    else:
        verdict = judge(evidence.cleaned, evidence.raw, recently_spoken)
    few_words = len(_words(evidence.cleaned)) < MIN_WORDS_TO_INTERRUPT
    if verdict is Verdict.SPEECH and (evidence.short or few_words):
        return Verdict.BACKCHANNEL
    return verdict


def judge(cleaned: str, raw: str, recently_spoken: str) -> Verdict:
    """Combine two transcripts of speech over our reply.

    `cleaned` is after echo cancellation (best for the user's words); `raw` is the microphone as
    is, where our own voice is clean enough for Whisper to write down exactly, so an echo
    that leaked through the canceller is recognised by its words.
    """
    on_cleaned = classify(cleaned, recently_spoken)
    if on_cleaned in (Verdict.STOP, Verdict.ECHO):
        return on_cleaned
    on_raw = classify(raw, recently_spoken)
    if on_raw is Verdict.ECHO:
        return Verdict.ECHO
    if Verdict.BACKCHANNEL in (on_cleaned, on_raw):
        return Verdict.BACKCHANNEL
    return on_cleaned


@dataclass(frozen=True)
class GuardSettings:
    frame_ms: int = 30
    confirm_ms: int = 700  # shorter bursts are backchannels or stop words; longer ones are judged then


class Action(Enum):
    NONE = "none"
    OVER_REPLY = "over_reply"  # it began while we speak: tell the floor
    CHECK_EARLY = "check_early"  # enough speech: transcribe what there is and classify() it
    CHECK = "check"  # the utterance ended: classify() its transcript


class BargeInGuard:
    """Follows one utterance that starts while we speak.

    Counted in frames, never read from a clock. What counts is how long the voice went on
    (from the onset to the last frame of user speech), not the silence that closes the
    utterance: a burst followed by its hangover is still short, and is not checked early.
    """

    def __init__(self, settings: GuardSettings) -> None:
        self._confirm_frames = max(1, settings.confirm_ms // settings.frame_ms)
        self._active = False
        self._speech_frames = 0
        self._voiced_frames = 0  # frames up to and including the last frame of user speech
        self._checked_early = False

    @property
    def active(self) -> bool:
        return self._active

    @property
    def frames_heard(self) -> int:
        """Frames since the utterance began (onset excluded)."""
        return self._speech_frames

    def started(self, *, playing: bool) -> Action:
        self._active = playing
        self._speech_frames = 0
        self._voiced_frames = 0
        self._checked_early = False
        return Action.OVER_REPLY if playing else Action.NONE

    def frame(self, *, user_speech: bool) -> Action:
        """One frame of the utterance; once the voice has gone on for `confirm_ms`, check what was said."""
        if not self._active:
            return Action.NONE
        self._speech_frames += 1
        if user_speech:
            self._voiced_frames = self._speech_frames
        if not self._checked_early and user_speech and self._voiced_frames >= self._confirm_frames:
            self._checked_early = True
            return Action.CHECK_EARLY
        return Action.NONE

    @property
    def short(self) -> bool:
        """The voice has gone on for less than `confirm_ms` so far."""
        return self._voiced_frames < self._confirm_frames

    def ended(self) -> Action:
        """The utterance closed, kept or discarded as noise: its transcript decides (again, if an
        early check ran). However short it was: over our reply, "stop" may be all there is."""
        was_active = self._active
        self._active = False
        return Action.CHECK if was_active else Action.NONE

    def dropped(self) -> None:
        """The utterance was found to be our own echo: nothing left to decide."""
        self._active = False
