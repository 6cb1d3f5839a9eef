"""Audio sinks: where the daemon's voice goes."""

from __future__ import annotations

import asyncio
import logging
import threading
import wave
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from voiced.audio.pcm import EAR_RATE
from voiced.audio.reference import PlaybackReference

_LOGGER = logging.getLogger(__name__)
# Device-side buffering in fixed 30 ms blocks: enough that a busy CPU seldom underruns (an
# underrun shifts the echo path under the canceller until the delay is found again; 0.1 s
# underran seven times in one run beside stress-ng on a loaded box). A pause or stop does not
# wait for the device to play out what it holds: the stream is aborted (silent within ~10 ms
# under PulseAudio's ALSA plugin) and restarted, and what the device had not yet played is
# taken back by its playback times. Under that plugin a latency without a fixed block size
# can make the stream stall or race ahead.
OUTPUT_LATENCY_S = 0.2
BLOCK_S = 0.03
AHEAD_S = 0.15  # how far our own buffer runs ahead of the device


@dataclass(frozen=True)
class _Block:
    """One block handed to the device: when it is heard, and how much of it is our audio."""

    heard_at: float  # the stream's clock; 0.0 when the host API cannot tell
    pcm: bytes
    audio: int  # bytes of `pcm` taken from our buffer; the rest is padding


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

    Pausing and stopping are instant: the device's own buffer is dropped (`_recall`), and on a
    pause what it had not yet played goes back into ours. The callback hands every block it
    plays to `reference`, so the echo canceller sees exactly what left the speaker, on the
    speaker's own clock; what is recalled is retracted from it again.
    """

    def __init__(self, device: str | int | None, reference: PlaybackReference | None = None) -> None:
        self._device = device
        self._reference = reference
        self._stream: Any = None
        self._rate = 0
        self._pending = bytearray()
        self._lock = threading.Lock()
        self._paused = False
        self._sent: deque[_Block] = deque(maxlen=64)  # the last ~2 s handed to the device
        self._recalled_at: float | None = None  # the stream's clock when it last dropped its buffer

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

    def _fill(self, outdata: Any, frames: int, times: Any, _status: Any) -> None:
        wanted = frames * 2
        with self._lock:
            chunk = b"" if self._paused else bytes(self._pending[:wanted])
            del self._pending[: len(chunk)]
            audio = len(chunk)
            chunk += bytes(wanted - len(chunk))
            heard_at = float(times.outputBufferDacTime)
            self._sent.append(_Block(heard_at, chunk, audio))
            recalled_at, self._recalled_at = self._recalled_at, None
        outdata[:] = chunk
        if self._reference is not None:
            if recalled_at is not None and heard_at > recalled_at:
                # The restarted stream is heard this much after the last sample the old one
                # played: that silence reaches the microphone, so the reference holds it too.
                gap = min(self._rate, round((heard_at - recalled_at) * self._rate))
                self._reference.append(np.zeros(gap, dtype=np.int16))
            self._reference.append(np.frombuffer(chunk, dtype=np.int16))

    def _buffered_s(self) -> float:
        with self._lock:
            return len(self._pending) / 2 / max(1, self._rate)

    async def play(self, samples: np.ndarray, rate: int) -> None:
        if self._stream is None or rate != self._rate:
            self.close()
            self._open(rate)
        elif self._holds_only_silence():
            # A reply begins: heard at once, not after the silence the device already holds.
            self._recall(keep=True)
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
        self._recall(keep=False)

    def pause(self) -> None:
        """Silent at once; what the device had not played, and what waits in our buffer, stay
        for `resume`."""
        with self._lock:
            self._paused = True
        self._recall(keep=True)

    def _holds_only_silence(self) -> bool:
        stream = self._stream
        if stream is None:
            return False
        with self._lock:
            if self._pending or self._paused or not self._sent:
                return False
            _unplayed, audio = self._unplayed(float(stream.time), float(stream.latency))
        return not audio

    def _recall(self, *, keep: bool) -> None:
        """Drop what the device holds (abort, then start again: it plays zeros or our buffer
        from its next block); with `keep`, put its unplayed audio back at the front of ours."""
        stream = self._stream
        if stream is None:
            return
        try:
            now = float(stream.time)
            stream.abort()  # waits for a callback in progress, so `_sent` is complete below
        except Exception:
            _LOGGER.warning("the speaker could not drop what it holds", exc_info=True)
            return
        with self._lock:
            unplayed, audio = self._unplayed(now, float(stream.latency))
            if keep:
                self._pending[:0] = audio
            self._sent.clear()
            self._recalled_at = now
        if self._reference is not None:
            self._reference.retract(unplayed)
        try:
            stream.start()
        except Exception as exc:
            self._stream = None  # the next `play` opens it again, or says why it cannot
            _LOGGER.error("the speaker did not restart after a pause: %s", exc)

    def _unplayed(self, now: float, latency: float) -> tuple[int, bytes]:
        """Samples handed over but not yet heard at `now`, and the audio among them, in order."""
        blocks = list(self._sent)
        if any(block.heard_at <= 0.0 for block in blocks):  # no playback times: trust the latency
            left = int(latency * self._rate)
            heard = [0] * len(blocks)
            for i in range(len(blocks) - 1, -1, -1):
                frames = len(blocks[i].pcm) // 2
                heard[i] = max(0, frames - left)
                left = max(0, left - frames)
        else:
            heard = [round((now - block.heard_at) * self._rate) for block in blocks]
        unplayed = 0
        audio = bytearray()
        for block, done in zip(blocks, heard, strict=True):
            frames = len(block.pcm) // 2
            done = min(frames, max(0, done))
            unplayed += frames - done
            audio += block.pcm[2 * done : block.audio]
        return unplayed, bytes(audio)

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
