"""A pure, clock-free VAD segmenter.

Feed it one frame at a time together with the VAD's verdict; it answers when
an utterance starts and ends. Time is counted in frames, never read from a
clock, so it is tested with plain asserts.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class SegmenterSettings:
    frame_ms: int = 30
    pre_roll_ms: int = 300
    onset_ms: int = 90
    hangover_ms: int = 600
    min_speech_ms: int = 250
    max_utterance_ms: int = 15000
    pause_ms: int = 0  # silence after which a pause is announced (0 = never)
    complete_ms: int = 0  # silence that ends an utterance the caller judged complete (0 = never)

    def frames(self, ms: int) -> int:
        return max(1, -(-ms // self.frame_ms))


@dataclass(frozen=True)
class UtteranceStarted:
    pass


@dataclass(frozen=True)
class UtteranceEnded:
    audio: bytes
    speech_ms: int
    trailing_silence_ms: int
    reason: Literal["silence", "complete", "max_length", "input_ended"]


@dataclass(frozen=True)
class UtterancePaused:
    """Speech stopped `pause_ms` ago; the utterance may end here. Lets the caller start ASR early.

    An UtteranceEnded with reason "silence" or "complete" always ends at the last announced pause.
    """

    audio: bytes


@dataclass(frozen=True)
class UtteranceDiscarded:
    """Opened on a noise burst, but too little speech to be worth transcribing as a turn.

    Its audio comes along all the same: over our reply, a "stop" can be this short, and the
    caller may still want to know what it said.
    """

    speech_ms: int
    audio: bytes = b""
    trailing_silence_ms: int = 0


SegmenterEvent = UtteranceStarted | UtterancePaused | UtteranceEnded | UtteranceDiscarded


class Segmenter:
    def __init__(self, settings: SegmenterSettings) -> None:
        self._s = settings
        self._onset_frames = settings.frames(settings.onset_ms)
        self._hangover_frames = settings.frames(settings.hangover_ms)
        self._max_frames = settings.frames(settings.max_utterance_ms)
        self._pause_frames = settings.frames(settings.pause_ms) if settings.pause_ms else 0
        self._complete_frames = settings.frames(settings.complete_ms) if settings.complete_ms else 0
        self._pre_roll: deque[bytes] = deque(
            maxlen=settings.frames(settings.pre_roll_ms) + self._onset_frames
        )
        self._reset()

    @property
    def in_speech(self) -> bool:
        return self._in_speech

    def _reset(self) -> None:
        self._in_speech = False
        self._voiced_run = 0
        self._frames: list[bytes] = []
        self._speech_frames = 0
        self._silence_run = 0
        self._complete = False  # the caller found what was said so far a whole request
        self._commit_frames = self._complete_frames  # the silence that then ends it
        self._pre_roll.clear()
        self._pauses = self._pause_frames  # this utterance's pause (see pause_after)
        self._pause_short = False

    @property
    def frame_count(self) -> int:
        """Frames in the utterance in progress, pre-roll included."""
        return len(self._frames) if self._in_speech else 0

    def audio_so_far(self) -> bytes:
        """The utterance in progress, pre-roll included (empty when none is open)."""
        return b"".join(self._frames) if self._in_speech else b""

    def pause_after(self, ms: int, *, short_too: bool = False) -> None:
        """For the utterance in progress only, a pause is this much silence (0: none is announced).
        `short_too`: announced even before `min_speech_ms` of speech (over our reply, where an
        "uh-huh" is that short and its words, not the hangover, should give the floor back)."""
        self._pauses = self._s.frames(ms) if ms else 0
        self._pause_short = short_too

    def commit(self, silence_ms: int | None = None) -> list[SegmenterEvent]:
        """What was said up to this pause is a whole request: end it after `silence_ms` (default
        `complete_ms`) of silence rather than the full hangover. Speech before then withdraws the
        judgement."""
        frames = self._s.frames(silence_ms) if silence_ms else self._complete_frames
        if not (self._in_speech and frames and self._silence_run >= self._pauses > 0):
            return []
        self._complete = True
        self._commit_frames = frames
        return [self._close("complete")] if self._silence_run >= frames else []

    def reset(self) -> None:
        """Drop whatever is in progress (e.g. while our own voice is playing)."""
        self._reset()

    def process(self, frame: bytes, is_speech: bool) -> list[SegmenterEvent]:
        if not self._in_speech:
            self._pre_roll.append(frame)
            self._voiced_run = self._voiced_run + 1 if is_speech else 0
            if self._voiced_run < self._onset_frames:
                return []
            self._in_speech = True
            self._frames = list(self._pre_roll)
            self._speech_frames = self._voiced_run
            self._silence_run = 0
            return [UtteranceStarted()]

        self._frames.append(frame)
        if is_speech:
            self._speech_frames += 1
            self._silence_run = 0
            self._complete = False
        else:
            self._silence_run += 1
        if self._silence_run >= self._hangover_frames:
            return [self._close("silence")]
        if self._complete and self._silence_run >= self._commit_frames:
            return [self._close("complete")]
        if len(self._frames) >= self._max_frames:
            return [self._close("max_length")]
        enough_speech = self._pause_short or self._speech_frames * self._s.frame_ms >= self._s.min_speech_ms
        if self._pauses and self._silence_run == self._pauses and enough_speech:
            return [UtterancePaused(audio=b"".join(self._frames))]
        return []

    def flush(self) -> list[SegmenterEvent]:
        """The input has ended: close an utterance in progress."""
        if not self._in_speech:
            self._reset()
            return []
        return [self._close("input_ended")]

    def _close(self, reason: Literal["silence", "complete", "max_length", "input_ended"]) -> SegmenterEvent:
        frame_ms = self._s.frame_ms
        speech_ms = self._speech_frames * frame_ms
        event: SegmenterEvent
        audio = b"".join(self._frames)
        trailing_silence_ms = self._silence_run * frame_ms
        if speech_ms < self._s.min_speech_ms:
            event = UtteranceDiscarded(speech_ms, audio, trailing_silence_ms)
        else:
            event = UtteranceEnded(
                audio=audio,
                speech_ms=speech_ms,
                trailing_silence_ms=trailing_silence_ms,
                reason=reason,
            )
        self._reset()
        return event
