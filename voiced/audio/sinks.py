"""Audio sinks: where the daemon's voice goes."""

from __future__ import annotations

import asyncio
import logging
import threading
import wave
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from voiced.audio.pcm import EAR_RATE, resample
from voiced.ear.echo import PlaybackReference

_LOGGER = logging.getLogger(__name__)


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
    """A sounddevice output stream, opened at the voice's rate on first use.

    What it plays is also handed, at 16 kHz, to `reference` for the ear's echo canceller.
    """

    def __init__(self, device: str | int | None, reference: PlaybackReference | None = None) -> None:
        self._device = device
        self._reference = reference
        self._stream: Any = None
        self._rate = 0
        self._lock = threading.Lock()

    def _open(self, rate: int) -> None:
        import sounddevice as sd

        try:
            self._stream = sd.RawOutputStream(
                samplerate=rate, channels=1, dtype="int16", device=self._device, latency="low"
            )
            self._stream.start()
        except (sd.PortAudioError, ValueError) as exc:
            raise AudioSinkError(f"cannot open speaker {self._device or '(default)'}: {exc}") from None
        self._rate = rate

    def _write(self, samples: np.ndarray, rate: int) -> None:
        with self._lock:
            if self._stream is None or rate != self._rate:
                self._close_stream()
                self._open(rate)
            if self._reference is not None:
                self._reference.append(resample(samples, rate, EAR_RATE))
            self._stream.write(np.asarray(samples, dtype=np.int16).tobytes())

    async def play(self, samples: np.ndarray, rate: int) -> None:
        await asyncio.to_thread(self._write, samples, rate)

    async def drain(self) -> None:
        stream = self._stream
        if stream is not None:
            await asyncio.sleep(float(stream.latency))

    def abort(self) -> None:
        # abort() discards what PortAudio still holds, unlike stop(); the next play reopens.
        stream, self._stream = self._stream, None
        if stream is not None:
            try:
                stream.abort()
                stream.close()
            except Exception:
                _LOGGER.debug("aborting speaker failed", exc_info=True)
        if self._reference is not None:
            self._reference.clear()

    def _close_stream(self) -> None:
        if self._stream is not None:
            try:
                self._stream.stop()
                self._stream.close()
            except Exception:
                _LOGGER.debug("closing speaker failed", exc_info=True)
            self._stream = None

    def close(self) -> None:
        with self._lock:
            self._close_stream()
