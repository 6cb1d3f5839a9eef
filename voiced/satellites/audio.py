"""A satellite's microphone as the ear's audio source, and its speaker as the mouth's audio sink."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator

import numpy as np
from wyoming.audio import AudioChunk, AudioStart, AudioStop

from voiced.audio.pcm import EAR_RATE
from voiced.satellites.link import SatelliteLink

_LOGGER = logging.getLogger(__name__)
BACKLOG_S = 30.0  # audio the ear may fall behind before the oldest is dropped
END_SILENCE_S = 1.5  # after the stream ends: enough silence that an utterance in progress closes
PLAYED_TAIL_S = 0.3  # the satellite's own buffering, past the length of the audio we sent


class SatelliteMicrophone:
    """Audio that the link hands in (16 kHz mono int16 bytes), as frames of the ear's length.

    It never ends: while the satellite is away the ear waits. When a stream ends (audio-stop, or the
    satellite went away) silence follows it, so the utterance in progress ends as it would in a room
    that fell quiet."""

    def __init__(self) -> None:
        self._chunks: asyncio.Queue[bytes] = asyncio.Queue()
        self._queued = 0  # bytes
        self._limit = int(BACKLOG_S * EAR_RATE) * 2
        self._dropped = 0

    def feed(self, pcm: bytes) -> None:
        while self._queued + len(pcm) > self._limit and not self._chunks.empty():
            self._queued -= len(self._chunks.get_nowait())
            self._dropped += 1
            if self._dropped in (1, 100) or self._dropped % 1000 == 0:
                _LOGGER.warning("the ear runs %.0f s behind a satellite: audio dropped", BACKLOG_S)
        self._chunks.put_nowait(pcm)
        self._queued += len(pcm)

    def end_of_stream(self) -> None:
        self.feed(bytes(int(END_SILENCE_S * EAR_RATE) * 2))

    async def frames(self, frame_ms: int) -> AsyncIterator[bytes]:
        step = EAR_RATE * frame_ms // 1000 * 2
        pending = b""
        while True:
            while len(pending) < step:
                chunk = await self._chunks.get()
                self._queued -= len(chunk)
                pending += chunk
            frame, pending = pending[:step], pending[step:]
            yield frame


class SatelliteSpeaker:
    """The reply's audio, sent to the satellite as Wyoming audio-start, audio-chunks, audio-stop.

    Nothing plays here: `play` returns once a slice is queued for the satellite; `drain` ends the
    stream and waits until the satellite has played it (its `played`, or the audio's length)."""

    def __init__(self, link: SatelliteLink) -> None:
        self._link = link
        self._rate = 0  # of the stream open on the satellite; 0: none is
        self._sent_s = 0.0
        self._started = 0.0

    async def play(self, samples: np.ndarray, rate: int) -> None:
        if self._rate != rate:
            self._stop()
            if not self._link.send(AudioStart(rate=rate, width=2, channels=1).event()):
                return  # nobody to play it to: the reply is lost with the satellite
            self._link.expect_played()
            self._rate, self._sent_s, self._started = rate, 0.0, time.monotonic()
        pcm = samples.astype(np.int16, copy=False).tobytes()
        if self._link.send(AudioChunk(rate=rate, width=2, channels=1, audio=pcm).event()):
            self._sent_s += len(samples) / rate
        await asyncio.sleep(0)

    async def drain(self) -> None:
        if not self._rate:
            return
        self._stop()
        left_s = self._sent_s - (time.monotonic() - self._started)
        await self._link.played(max(0.0, left_s) + PLAYED_TAIL_S)

    def _stop(self) -> None:
        if self._rate:
            self._link.send(AudioStop().event())
            self._rate = 0

    def abort(self) -> None:
        self._stop()  # what the satellite holds already plays out: Wyoming has no way to take it back

    def pause(self) -> None:
        return None  # likewise: a satellite cannot pause what it was sent

    def resume(self) -> None:
        return None

    def close(self) -> None:
        self._stop()
