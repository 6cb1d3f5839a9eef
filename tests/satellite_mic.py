"""A satellite's microphone for the tests: `--mic-command` of wyoming-satellite.

Writes 16 kHz mono 16-bit audio to stdout in real time: silence, or, when a `*.raw` file appears in
the inbox folder (the test puts a spoken request there), that audio, after which the file is removed.
With LOG, the wall-clock time each request's last chunk was written is appended to it (a line each):
the benchmark's end of speech.

    python tests/satellite_mic.py INBOX [LOG]
"""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path

RATE = 16000
CHUNK = 1024  # samples, as wyoming-satellite reads them
CHUNK_S = CHUNK / RATE


def main(inbox: Path, log: Path | None = None) -> None:
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
        piece, queued = (queued[: CHUNK * 2], queued[CHUNK * 2 :]) if queued else (b"", b"")
        out.write(piece.ljust(CHUNK * 2, b"\0"))
        out.flush()
        if piece and not queued and log is not None:
            with log.open("a") as ends:
                ends.write(f"{time.time():.6f}\n")
        sent += 1
        time.sleep(max(0.0, started + sent * CHUNK_S - time.monotonic()))


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
        main(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else None)
