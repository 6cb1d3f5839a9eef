"""The ear: audio frames → webrtcvad → segmenter → transcriber; utterances out, events on the bus.

ASR starts early: when the speaker pauses (`vad.early_asr_ms`), the audio so far is transcribed
while the hangover decides whether the utterance has really ended. If it has, that transcript
is used; if speech resumes, it is dropped.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from voiced.audio.pcm import EAR_RATE
from voiced.audio.sources import AudioSource
from voiced.config import VadConfig
from voiced.ear.bargein import Action, BargeInGuard, GuardSettings
from voiced.ear.frontend import FrameClassifier, PlainVad
from voiced.ear.segmenter import (
    Segmenter,
    SegmenterEvent,
    SegmenterSettings,
    UtteranceDiscarded,
    UtterancePaused,
    UtteranceStarted,
)
from voiced.ear.transcriber import Transcriber
from voiced.events import EventBus, InputEnded, Ready, SpeechEnded, SpeechStarted

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class Heard:
    text: str
    asr_s: float  # time Whisper took
    early: bool  # started at a pause, before the end of the utterance was certain


OverReply = Literal["no", "check", "confirmed"]


@dataclass(frozen=True)
class Utterance:
    turn: int
    samples: np.ndarray
    voice_end_t: float
    transcript: asyncio.Task[Heard]  # already running; the consumer awaits it
    # Spoken while we were talking: "confirmed" already interrupted us; "check" must be classified.
    over_reply: OverReply = "no"


class BargeInHooks(Protocol):
    """The barge-in lane: called straight from the ear, never queued behind turns."""

    def duck(self) -> None: ...

    def unduck(self) -> None: ...

    def interrupt(self, reason: str) -> None: ...


class _NoHooks:
    def duck(self) -> None:
        return None

    def unduck(self) -> None:
        return None

    def interrupt(self, reason: str) -> None:
        return None


def settings_from(config: VadConfig) -> SegmenterSettings:
    return SegmenterSettings(
        frame_ms=config.frame_ms,
        pre_roll_ms=config.pre_roll_ms,
        onset_ms=config.onset_ms,
        hangover_ms=config.hangover_ms,
        min_speech_ms=config.min_speech_ms,
        max_utterance_ms=int(config.max_utterance_s * 1000),
        pause_ms=config.early_asr_ms,
    )


class Ear:
    def __init__(
        self,
        source: AudioSource,
        config: VadConfig,
        transcriber: Transcriber,
        bus: EventBus,
        *,
        front: FrameClassifier | None = None,
        is_playing: Callable[[], bool] = lambda: False,
        guard: GuardSettings | None = None,
        is_deaf: Callable[[], bool] = lambda: False,
    ) -> None:
        self._source = source
        self._transcriber = transcriber
        self._early: asyncio.Task[Heard] | None = None
        self._config = config
        self._bus = bus
        self._is_deaf = is_deaf
        self._front = front or PlainVad(config.aggressiveness)
        self._is_playing = is_playing
        self._hooks: BargeInHooks = _NoHooks()
        self._guard = BargeInGuard(guard or GuardSettings(frame_ms=config.frame_ms))
        self._confirmed = False
        self._segmenter = Segmenter(settings_from(config))
        self._turn = 0

    async def run(self, deliver: Callable[[Utterance], None], hooks: BargeInHooks | None = None) -> None:
        """Listen until the source ends; each finished utterance is handed to `deliver`."""
        self._hooks = hooks or _NoHooks()
        ready = False
        async for frame in self._source.frames(self._config.frame_ms):
            if not ready:  # models are loaded and audio is flowing: now we are listening
                self._bus.publish(Ready())
                ready = True
            if self._is_deaf():
                self._segmenter.reset()
                continue
            kept, user_speech = self._front.classify(frame)
            if self._segmenter.in_speech and self._guard.frame(user_speech=user_speech) is Action.INTERRUPT:
                self._confirmed = True
                self._hooks.interrupt("speech over the reply")
            for event in self._segmenter.process(kept, user_speech):
                self._on_event(event, deliver)
        for event in self._segmenter.flush():
            self._on_event(event, deliver)
        self._drop_early()
        self._bus.publish(InputEnded())

    def _transcribe(self, audio: bytes, *, early: bool) -> asyncio.Task[Heard]:
        samples = np.frombuffer(audio, dtype=np.int16)

        def timed() -> Heard:
            started = time.monotonic()
            text = self._transcriber.transcribe(samples)
            return Heard(text, time.monotonic() - started, early)

        return asyncio.create_task(asyncio.to_thread(timed), name=f"asr-turn-{self._turn}")

    def _drop_early(self) -> None:
        if self._early is not None:
            self._early.cancel()  # the thread finishes on its own; its result is ignored
            self._early = None

    def _on_event(
        self,
        event: SegmenterEvent,
        deliver: Callable[[Utterance], None],
    ) -> None:
        now = time.monotonic()
        if isinstance(event, UtteranceStarted):
            self._turn += 1
            self._confirmed = False
            playing = self._is_playing()
            self._bus.publish(SpeechStarted(turn=self._turn, over_reply=playing))
            if self._guard.started(playing=playing) is Action.DUCK:
                self._hooks.duck()
        elif isinstance(event, UtterancePaused):
            self._drop_early()
            self._early = self._transcribe(event.audio, early=True)
        elif isinstance(event, UtteranceDiscarded):
            self._drop_early()
            _LOGGER.debug("discarded %d ms of speech-like noise", event.speech_ms)
            if self._guard.active:
                self._guard.discarded()
                self._hooks.unduck()
        else:
            voice_end_t = now - event.trailing_silence_ms / 1000
            samples = np.frombuffer(event.audio, dtype=np.int16)
            self._bus.publish(
                SpeechEnded(turn=self._turn, duration_s=len(samples) / EAR_RATE, voice_end_t=voice_end_t)
            )
            if event.reason == "silence" and self._early is not None:
                transcript, self._early = self._early, None
            else:
                self._drop_early()
                transcript = self._transcribe(event.audio, early=False)
            over_reply: OverReply = "confirmed" if self._confirmed else "no"
            if self._guard.ended() is Action.CHECK:
                over_reply = "check"
            deliver(Utterance(self._turn, samples, voice_end_t, transcript, over_reply))
