"""The ear: audio frames → webrtcvad → segmenter → utterances on a queue, events on the bus."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import webrtcvad

from voiced.audio.pcm import EAR_RATE
from voiced.audio.sources import AudioSource
from voiced.config import VadConfig
from voiced.ear.segmenter import (
    Segmenter,
    SegmenterSettings,
    UtteranceDiscarded,
    UtteranceEnded,
    UtteranceStarted,
)
from voiced.events import EventBus, InputEnded, SpeechEnded, SpeechStarted

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class Utterance:
    turn: int
    samples: np.ndarray
    voice_end_t: float


def settings_from(config: VadConfig) -> SegmenterSettings:
    return SegmenterSettings(
        frame_ms=config.frame_ms,
        pre_roll_ms=config.pre_roll_ms,
        onset_ms=config.onset_ms,
        hangover_ms=config.hangover_ms,
        min_speech_ms=config.min_speech_ms,
        max_utterance_ms=int(config.max_utterance_s * 1000),
    )


class Ear:
    def __init__(
        self,
        source: AudioSource,
        config: VadConfig,
        bus: EventBus,
        *,
        is_deaf: Callable[[], bool] = lambda: False,
    ) -> None:
        self._source = source
        self._config = config
        self._bus = bus
        self._is_deaf = is_deaf
        self._vad = webrtcvad.Vad(config.aggressiveness)
        self._segmenter = Segmenter(settings_from(config))
        self._turn = 0

    async def run(self, deliver: Callable[[Utterance], None]) -> None:
        """Listen until the source ends; each finished utterance is handed to `deliver`."""
        async for frame in self._source.frames(self._config.frame_ms):
            if self._is_deaf():
                self._segmenter.reset()
                continue
            is_speech = self._vad.is_speech(frame, EAR_RATE)
            for event in self._segmenter.process(frame, is_speech):
                self._on_event(event, deliver)
        for event in self._segmenter.flush():
            self._on_event(event, deliver)
        self._bus.publish(InputEnded())

    def _on_event(
        self,
        event: UtteranceStarted | UtteranceEnded | UtteranceDiscarded,
        deliver: Callable[[Utterance], None],
    ) -> None:
        now = time.monotonic()
        if isinstance(event, UtteranceStarted):
            self._turn += 1
            self._bus.publish(SpeechStarted(turn=self._turn))
        elif isinstance(event, UtteranceDiscarded):
            _LOGGER.debug("discarded %d ms of speech-like noise", event.speech_ms)
        else:
            voice_end_t = now - event.trailing_silence_ms / 1000
            samples = np.frombuffer(event.audio, dtype=np.int16)
            self._bus.publish(
                SpeechEnded(turn=self._turn, duration_s=len(samples) / EAR_RATE, voice_end_t=voice_end_t)
            )
            deliver(Utterance(turn=self._turn, samples=samples, voice_end_t=voice_end_t))
