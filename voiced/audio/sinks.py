"""Audio sinks: where the daemon's voice goes."""

from __future__ import annotations

import asyncio
import logging
import threading
import wave
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from voiced.audio.pcm import EAR_RATE
from voiced.audio.reference import PlaybackReference

_LOGGER = logging.getLogger(__name__)
# Device-side buffering in fixed 30 ms blocks: enough that a busy CPU seldom underruns (an
# underrun shifts the echo path under the canceller until the delay is found again). A pause
# is heard once the device has played what it holds: 0.18-0.22 s after it is asked at 0.2 s
# (0.13-0.16 s at 0.1 s, which underran seven times in one run beside stress-ng on a loaded
# box). Under PulseAudio's ALSA plugin a latency without a fixed block size can make the
# stream stall or race ahead.
OUTPUT_LATENCY_S = 0.2
BLOCK_S = 0.03
AHEAD_S = 0.15  # how far our own buffer runs ahead of the device


class AudioSinkError(Exception):
    """The output device or file cannot be opened; the message names it."""


class AudioSink(Protocol):
    async def play(self, samples: np.ndarray, rate: int) -> None:
        """Return once the samples have been handed to the device (or written)."""
        ...

    async def drain(self) -> None:
        """Return once everything handed over has been heard."""
        ...

    def abort(self) -> None:
        """Drop audio still queued in the device, at once."""
        ...

    def pause(self) -> None:
        """Fall silent as soon as the device allows, and keep the place: nothing is skipped on
        `resume`. `play` waits meanwhile."""
        ...

    def resume(self) -> None: ...

    def close(self) -> None: ...


class WavFileSink:
    """Appends every reply to one WAV file; the file exists (maybe empty) from the start."""

    def __init__(self, path: Path, rate: int) -> None:
        self._path = path
        self._rate = rate
        try:
            self._wav: wave.Wave_write | None = wave.open(str(path), "wb")  # noqa: SIM115 - held open
        except OSError as exc:
            raise AudioSinkError(f"cannot write {path}: {exc.strerror}") from None
        self._wav.setnchannels(1)
        self._wav.setsampwidth(2)
        self._wav.setframerate(rate)
        self.seconds_written = 0.0

    async def play(self, samples: np.ndarray, rate: int) -> None:
        if self._wav is None:
            raise AudioSinkError(f"{self._path}: already closed")
        if rate != self._rate:
            raise AudioSinkError(f"{self._path}: sample rate changed from {self._rate} to {rate}")
        self._wav.writeframes(np.asarray(samples, dtype=np.int16).tobytes())
        self.seconds_written += len(samples) / rate

    async def drain(self) -> None:
        return None

    def abort(self) -> None:
        return None

    def pause(self) -> None:
        return None  # a file has no listener to yield to

    def resume(self) -> None:
        return None

    def close(self) -> None:
        if self._wav is not None:
            self._wav.close()
            self._wav = None


def has_speaker(device: str | int | None) -> tuple[bool, str]:
    try:
        import sounddevice as sd

        info = sd.query_devices(device, kind="output")
        sd.check_output_settings(device=device, channels=1, dtype="int16")
    except Exception as exc:
        return False, str(exc)
    return True, str(info["name"])


class SpeakerSink:
    """A sounddevice output stream fed from our own buffer by PortAudio's callback.

    Stopping is instant (the buffer is emptied; the device hears silence from its next
    block), and the callback hands every block it plays to `reference`, so the echo
    canceller sees exactly what left the speaker, on the speaker's own clock.
    """

    def __init__(self, device: str | int | None, reference: PlaybackReference | None = None) -> None:
        self._device = device
        self._reference = reference
        self._stream: Any = None
        self._rate = 0
        self._pending = bytearray()
        self._lock = threading.Lock()
        self._paused = False

    def _open(self, rate: int) -> None:
        import sounddevice as sd

        if self._reference is not None and rate != EAR_RATE:
            raise AudioSinkError(f"with echo cancellation the speaker plays at {EAR_RATE} Hz, not {rate}")
        try:
            self._stream = sd.RawOutputStream(
                samplerate=rate,
                channels=1,
                dtype="int16",
                device=self._device,
                latency=OUTPUT_LATENCY_S,
                blocksize=int(rate * BLOCK_S),
                callback=self._fill,
            )
            self._stream.start()
        except (sd.PortAudioError, ValueError) as exc:
            raise AudioSinkError(f"cannot open speaker {self._device or '(default)'}: {exc}") from None
        self._rate = rate

    def _fill(self, outdata: Any, frames: int, _time: Any, _status: Any) -> None:
        wanted = frames * 2
        with self._lock:
            chunk = b"" if self._paused else bytes(self._pending[:wanted])
            del self._pending[: len(chunk)]
        chunk += bytes(wanted - len(chunk))
        outdata[:] = chunk
        if self._reference is not None:
            self._reference.append(np.frombuffer(chunk, dtype=np.int16))

    def _buffered_s(self) -> float:
        with self._lock:
            return len(self._pending) / 2 / max(1, self._rate)

    async def play(self, samples: np.ndarray, rate: int) -> None:
        if self._stream is None or rate != self._rate:
            self.close()
            self._open(rate)
        with self._lock:
            self._pending += np.asarray(samples, dtype=np.int16).tobytes()
        while self._buffered_s() > AHEAD_S:  # stay a little ahead of the device, no more
            await asyncio.sleep(0.01)

    async def drain(self) -> None:
        while self._buffered_s() > 0:
            await asyncio.sleep(0.01)
        stream = self._stream
        if stream is not None:
            await asyncio.sleep(float(stream.latency))

    def abort(self) -> None:
        with self._lock:
            self._pending.clear()
            self._paused = False

    def pause(self) -> None:
        """The device plays out what it holds (it cannot be recalled, and so is heard, not
        lost), then zeros; what waits in our buffer stays for `resume`."""
        with self._lock:
            self._paused = True

    def resume(self) -> None:
        with self._lock:
            self._paused = False

    def close(self) -> None:
        stream, self._stream = self._stream, None
        self.abort()
        if stream is not None:
            try:
                stream.stop()
                stream.close()
            except Exception:
                _LOGGER.debug("closing speaker failed", exc_info=True)
