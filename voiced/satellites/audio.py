"""A satellite's microphone as the ear's audio source, and its speaker as the mouth's audio sink."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator

import numpy as np
from wyoming.audio import AudioChunk, AudioStart, AudioStop

from voiced.audio.pcm import EAR_RATE, resample
from voiced.audio.reference import PlaybackReference
from voiced.satellites.link import SatelliteLink

_LOGGER = logging.getLogger(__name__)
BACKLOG_S = 30.0  # audio the ear may fall behind before the oldest is dropped
END_SILENCE_S = 1.5  # after the stream ends: enough silence that an utterance in progress closes
PLAYED_TAIL_S = 0.3  # the satellite's own buffering, past the length of the audio we sent
LEAD_S = 0.2  # of the reply sent ahead of what the satellite has played: its buffer against jitter


class SatelliteMicrophone:
    """Audio that the link hands in (16 kHz mono int16 bytes), as frames of the ear's length.

    It never ends: while the satellite is away the ear waits. When a stream ends (audio-stop, or the
    satellite went away) silence follows it, so the utterance in progress ends as it would in a room
    that fell quiet."""

    def __init__(self, reference: PlaybackReference | None = None) -> None:
        """`reference`: counts what the satellite records, so that our echo pairs with it."""
        self._reference = reference
        self._chunks: asyncio.Queue[bytes] = asyncio.Queue()
        self._queued = 0  # bytes
        self._limit = int(BACKLOG_S * EAR_RATE) * 2
        self._dropped = 0

    def feed(self, pcm: bytes) -> None:
        while self._queued + len(pcm) > self._limit and not self._chunks.empty():
            dropped = len(self._chunks.get_nowait())
            self._queued -= dropped
            self._dropped += 1
            if self._reference is not None:
                self._reference.forget(dropped // 2)
            if self._dropped in (1, 100) or self._dropped % 1000 == 0:
                _LOGGER.warning("the ear runs %.0f s behind a satellite: audio dropped", BACKLOG_S)
        self._chunks.put_nowait(pcm)
        self._queued += len(pcm)
        if self._reference is not None:
            self._reference.capture(len(pcm) // 2)

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


class Playhead:
    """Where a satellite is in the audio we sent it, from the times given in (pure, no clock).

    It plays what it is sent as it comes; once it has played all of it, it waits, and what comes
    next plays from then on."""

    def __init__(self) -> None:
        self.sent_s = 0.0
        self._origin: float | None = None  # when what was sent would have begun, played without a gap

    def sent(self, seconds: float, now: float) -> bool:
        """`seconds` more were sent at `now`; True when the satellite had played all it held
        before them (the stream's start, or it ran dry): they start it playing again."""
        dry = self._origin is None or now - self._origin >= self.sent_s
        if dry:
            self._origin = now - self.sent_s
        self.sent_s += seconds
        return dry

    def left_s(self, now: float) -> float:
        """What the satellite has yet to play."""
        return 0.0 if self._origin is None else max(0.0, self._origin + self.sent_s - now)

    def wait_s(self, now: float, seconds: float, lead_s: float) -> float:
        """How long to wait before sending `seconds` more, so that it holds at most `lead_s`."""
        return max(0.0, self.left_s(now) + seconds - lead_s)


class SatelliteSpeaker:
    """The reply's audio, sent to the satellite as Wyoming audio-start, audio-chunks, audio-stop.

    Nothing plays here. The audio is sent as fast as the satellite plays it, `LEAD_S` ahead: a stop
    or a pause is heard within that, and with a `reference` (echo: cancel) what was sent is our
    echo's reference at the moment it plays. `drain` ends the stream and waits until the satellite
    has played it (its `played`, or the audio's length)."""

    def __init__(self, link: SatelliteLink, reference: PlaybackReference | None = None) -> None:
        self._link = link
        self._reference = reference
        self._rate = 0  # of the stream open on the satellite; 0: none is
        self._playhead = Playhead()
        self._playing = asyncio.Event()  # cleared while paused
        self._playing.set()

    async def play(self, samples: np.ndarray, rate: int) -> None:
        seconds = len(samples) / rate
        while True:
            await self._playing.wait()
            wait_s = self._playhead.wait_s(time.monotonic(), seconds, LEAD_S)
            if wait_s <= 0:
                break
            await asyncio.sleep(wait_s)
        if self._rate != rate:
            self._stop()
            if not self._link.send(AudioStart(rate=rate, width=2, channels=1).event()):
                return  # nobody to play it to: the reply is lost with the satellite
            self._link.expect_played()
            self._rate = rate
        pcm = samples.astype(np.int16, copy=False).tobytes()
        if self._link.send(AudioChunk(rate=rate, width=2, channels=1, audio=pcm).event()):
            again = self._playhead.sent(seconds, time.monotonic())
            if self._reference is not None:
                self._reference.append_sent(resample(samples, rate, EAR_RATE), restart=again)
        await asyncio.sleep(0)

    async def drain(self) -> None:
        if not self._rate:
            return
        left_s = self._playhead.left_s(time.monotonic())
        self._stop()
        await self._link.played(left_s + PLAYED_TAIL_S)

    def _stop(self) -> None:
        self._playing.set()
        self._playhead = Playhead()
        if self._rate:
            self._link.send(AudioStop().event())
            self._rate = 0

    def abort(self) -> None:
        self._stop()  # what the satellite holds (LEAD_S) plays out: Wyoming cannot take it back

    def pause(self) -> None:
        self._playing.clear()  # nothing more is sent: silent once it has played what it holds

    def resume(self) -> None:
        self._playing.set()

    def close(self) -> None:
        self._stop()
