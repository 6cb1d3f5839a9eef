"""Speech out: a reply is cut into sentences; sentence n+1 is synthesized while n plays."""

from __future__ import annotations

import asyncio
import logging
import re

import numpy as np

from voiced.audio.sinks import AudioSink
from voiced.events import EventBus, TtsStarted, TtsStopped
from voiced.mouth.synthesizer import Synthesizer

_LOGGER = logging.getLogger(__name__)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def split_sentences(text: str) -> list[str]:
    return [part.strip() for part in _SENTENCE_END.split(text) if part.strip()]


class SpeechOutput:
    def __init__(
        self, synthesizer: Synthesizer, sink: AudioSink, bus: EventBus, *, sentence_silence_s: float
    ) -> None:
        self._synthesizer = synthesizer
        self._sink = sink
        self._bus = bus
        self._gap = np.zeros(int(sentence_silence_s * synthesizer.sample_rate), dtype=np.int16)
        self.speaking = False

    async def speak(self, turn: int, text: str) -> None:
        sentences = split_sentences(text)
        if not sentences:
            return
        ready: asyncio.Queue[np.ndarray | Exception | None] = asyncio.Queue(maxsize=1)
        producer = asyncio.create_task(self._synthesize_all(sentences, ready), name=f"tts-turn-{turn}")
        played = 0
        self.speaking = True
        try:
            while (samples := await ready.get()) is not None:
                if isinstance(samples, Exception):
                    raise samples
                if played == 0:
                    self._bus.publish(TtsStarted(turn=turn))
                else:
                    await self._sink.play(self._gap, self._synthesizer.sample_rate)
                await self._sink.play(samples, self._synthesizer.sample_rate)
                played += len(samples)
            await self._sink.drain()
        finally:
            self.speaking = False
            if not producer.done():
                producer.cancel()
            await asyncio.wait([producer], timeout=5)
            self._bus.publish(TtsStopped(turn=turn, audio_s=played / self._synthesizer.sample_rate))

    async def _synthesize_all(
        self, sentences: list[str], ready: asyncio.Queue[np.ndarray | Exception | None]
    ) -> None:
        try:
            for sentence in sentences:
                samples = await asyncio.to_thread(self._synthesizer.synthesize, sentence)
                await ready.put(samples)
        except Exception as exc:
            await ready.put(exc)
            return
        await ready.put(None)
