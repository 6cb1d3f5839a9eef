"""Audio sources: each yields 16 kHz mono int16 frames of a fixed length."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Protocol

from voiced.audio.pcm import EAR_RATE, read_wav, resample
from voiced.audio.reference import PlaybackReference

_LOGGER = logging.getLogger(__name__)


class AudioSourceError(Exception):
    """The input device or file cannot be opened; the message names it."""


class AudioSource(Protocol):
    def frames(self, frame_ms: int) -> AsyncIterator[bytes]: ...


class WavFileSource:
    """A WAV file as the microphone, paced in real time or as fast as possible."""

    def __init__(self, path: Path, *, realtime: bool = True) -> None:
        try:
            samples, rate = read_wav(path)
        except (FileNotFoundError, ValueError) as exc:
            raise AudioSourceError(str(exc)) from None
        self._samples = resample(samples, rate, EAR_RATE)
        self._realtime = realtime
        self.duration_s = len(self._samples) / EAR_RATE

    async def frames(self, frame_ms: int) -> AsyncIterator[bytes]:
        step = EAR_RATE * frame_ms // 1000
        start = time.monotonic()
        for index, offset in enumerate(range(0, len(self._samples) - step + 1, step)):
            if self._realtime:
                due = start + index * frame_ms / 1000
                delay = due - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
            elif index % 32 == 0:
                await asyncio.sleep(0)  # let the rest of the daemon run
            yield self._samples[offset : offset + step].tobytes()


class MicrophoneSource:
    """A sounddevice input stream; the PortAudio callback hands blocks to the loop.

    With a `reference` (what our speaker plays), the callback pairs each block with the
    reference of the same moment, so the echo stays aligned however far the ear lags behind.
    """

    def __init__(self, device: str | int | None, reference: PlaybackReference | None = None) -> None:
        self._device = device
        self._reference = reference

    async def frames(self, frame_ms: int) -> AsyncIterator[bytes]:
        import sounddevice as sd  # imported here: needs libportaudio2 only when a mic is used

        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[bytes] = asyncio.Queue(maxsize=500)
        step = EAR_RATE * frame_ms // 1000

        reference = self._reference

        def on_block(data: Any, frames: int, _time: Any, status: Any) -> None:
            if status:
                _LOGGER.debug("microphone status: %s", status)
            if reference is not None:
                reference.capture(frames)
            loop.call_soon_threadsafe(_offer, queue, bytes(data), reference)

        try:
            stream = sd.RawInputStream(
                samplerate=EAR_RATE,
                channels=1,
                dtype="int16",
                blocksize=step,
                device=self._device,
                callback=on_block,
            )
        except (sd.PortAudioError, ValueError) as exc:
            raise AudioSourceError(f"cannot open microphone {self._device or '(default)'}: {exc}") from None
        with stream:
            _LOGGER.info("microphone open: %s", self._device or "(default)")
            lagging = 0
            while True:
                backlog = queue.qsize()
                if backlog >= 10 and backlog > 2 * lagging:  # once per doubling, not every frame
                    _LOGGER.info("the ear runs %d ms behind the microphone", backlog * frame_ms)
                lagging = backlog if backlog >= 10 else 0
                yield await queue.get()


def _offer(queue: asyncio.Queue[bytes], block: bytes, reference: PlaybackReference | None) -> None:
    if queue.full():
        dropped = queue.get_nowait()  # drop the oldest block rather than fall behind the speaker
        if reference is not None:
            reference.forget(len(dropped) // 2)
    queue.put_nowait(block)


def has_microphone(device: str | int | None) -> tuple[bool, str]:
    try:
        import sounddevice as sd

        info = sd.query_devices(device, kind="input")
        sd.check_input_settings(device=device, samplerate=EAR_RATE, channels=1, dtype="int16")
    except (OSError, ValueError, Exception) as exc:
        return False, str(exc)
    return True, str(info["name"])
