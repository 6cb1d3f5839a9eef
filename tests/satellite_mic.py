"""A satellite's microphone for the tests: `--mic-command` of wyoming-satellite.

Writes 16 kHz mono 16-bit audio to stdout in real time: silence, or, when a `*.raw` file appears in
the inbox folder (the test puts a spoken request there), that audio, after which the file is removed.
With LOG, the wall-clock time each request's last chunk was written is appended to it (a line each):
the benchmark's end of speech. CHUNK: samples a write, as the satellite reads them
(its --mic-command-samples-per-chunk; 1024 unless told).

    python tests/satellite_mic.py INBOX [LOG|-] [CHUNK]
"""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path

RATE = 16000
CHUNK = 1024  # samples, as wyoming-satellite reads them by default


def main(inbox: Path, log: Path | None = None, chunk: int = CHUNK) -> None:
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
        out.write(piece.ljust(chunk * 2, b"\0"))
        out.flush()
        if piece and not queued and log is not None:
            with log.open("a") as ends:
                ends.write(f"{time.time():.6f}\n")
        sent += 1
        time.sleep(max(0.0, started + sent * chunk / RATE - time.monotonic()))


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
        log = Path(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] != "-" else None
        main(Path(sys.argv[1]), log, int(sys.argv[3]) if len(sys.argv) > 3 else CHUNK)
