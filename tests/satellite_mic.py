"""A satellite's microphone for the tests: `--mic-command` of wyoming-satellite.

Writes 16 kHz mono 16-bit audio to stdout in real time: silence, or, when a `*.raw` file appears in
the inbox folder (the test puts a spoken request there), that audio, after which the file is removed.
With LOG, the wall-clock time each request's last chunk was written is appended to it (a line each):
the benchmark's end of speech. CHUNK: samples a write, as the satellite reads them
(its --mic-command-samples-per-chunk; 1024 unless told, or 0). With ECHO, a file the satellite's
speaker appends what it plays to (16 kHz): it is heard back, times GAIN, as it plays, a chunk at a
time: the room's echo.

    python tests/satellite_mic.py INBOX [LOG|-] [CHUNK|0] [ECHO GAIN]
"""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path

import numpy as np

RATE = 16000
CHUNK = 1024  # samples, as wyoming-satellite reads them by default


class Echo:
    """What the speaker played, heard back: the file grows as audio is sent to it, and is heard
    at the rate it plays, from when it came (what came early waits its turn, as in a speaker)."""

    def __init__(self, path: Path, gain: float) -> None:
        self._path = path
        self._gain = gain
        self._read = 0  # bytes of the file taken in
        self._pending = b""

    def mix(self, piece: bytes) -> bytes:
        if self._path.exists():
            with self._path.open("rb") as played:
                played.seek(self._read)
                came = played.read()
            came = came[: len(came) // 2 * 2]
            self._read += len(came)
            self._pending += came
        heard, self._pending = self._pending[: len(piece)], self._pending[len(piece) :]
        if not heard:
            return piece
        voice = np.frombuffer(piece, dtype=np.int16).astype(np.float32)
        echo = np.frombuffer(heard.ljust(len(piece), b"\0"), dtype=np.int16).astype(np.float32)
        return np.clip(voice + self._gain * echo, -32768, 32767).astype(np.int16).tobytes()


def main(inbox: Path, log: Path | None = None, chunk: int = CHUNK, echo: Echo | None = None) -> None:
    out = sys.stdout.buffer
    queued = b""
    started = time.monotonic()
    sent = 0
    while True:
        if not queued:
            for said in sorted(inbox.glob("*.raw")):
                queued = said.read_bytes()
                said.unlink()
                break
        piece, queued = (queued[: chunk * 2], queued[chunk * 2 :]) if queued else (b"", b"")
        heard = piece.ljust(chunk * 2, b"\0")
        out.write(heard if echo is None else echo.mix(heard))
        out.flush()
        if piece and not queued and log is not None:
            with log.open("a") as ends:
                ends.write(f"{time.time():.6f}\n")
        sent += 1
        time.sleep(max(0.0, started + sent * chunk / RATE - time.monotonic()))


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
        args = sys.argv[1:]
        log = Path(args[1]) if len(args) > 1 and args[1] != "-" else None
        chunk = int(args[2]) if len(args) > 2 and int(args[2]) else CHUNK
        echo = Echo(Path(args[3]), float(args[4])) if len(args) > 4 else None
        main(Path(args[0]), log, chunk, echo)
