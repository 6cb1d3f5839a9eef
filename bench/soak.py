"""Soak: thousands of typed turns through one `voiced run --text -`, its memory and files watched.

    scripts/bench.sh soak [--turns 10000] [--every 1000]

The real program, as systemd would run it (web server, Home Assistant's entities, the brain, the
plans and scenes, all on), against its own Mosquitto and `voiced simulate`, all in a temporary
folder. Turns are a household's mix: lights, colours, music, the diffuser, scenes, questions,
things it does not understand. Every `--every` turns it prints the daemon's RSS and the size of
each file it keeps (with its -wal), then the RSS growth from the first report to the last.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.home_config import write_home_config  # noqa: E402
from tests.conftest import Broker, free_port  # noqa: E402
from tests.home import SimulatedHome, voiced  # noqa: E402

TURNS = (
    "turn on the kitchen light",
    "set the living room light to 40 percent",
    "make the bedroom light blue",
    "turn off all the lights",
    "play some jazz",
    "turn the music down",
    "stop the music",
    "set the diffuser to lavender",
    "turn off the diffuser",
    "is the kitchen light on",
    "what time is it",
    "make it cozy",
    "blorp the fizzlewick",
    "dim the kitchen light a bit",
    "thanks",
)


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _files(folder: Path) -> str:
    sizes = {}
    for path in sorted(folder.glob("*.sqlite*")):
        sizes[path.name] = path.stat().st_size // 1024
    return " ".join(f"{name}={kb}KB" for name, kb in sizes.items())


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--turns", type=int, default=10000)
    parser.add_argument("--every", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="voiced-soak-") as tmp:
        work = Path(tmp)
        broker = Broker(work)
        broker.start()
        config = write_home_config(
            work, broker.port, free_port(), homeassistant={"discovery": True, "node_id": "soak"}
        )
        try:
            with SimulatedHome(config, broker.port):
                return _soak(config, work, args.turns, args.every)
        finally:
            broker.stop()


def _soak(config: Path, work: Path, turns: int, every: int) -> int:
    daemon = subprocess.Popen(
        [*voiced(config, "run", "--text", "-", "--output", str(work / "replies.wav"))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=work,
    )
    assert daemon.stdin is not None and daemon.stdout is not None
    done = 0
    finished = threading.Condition()
    tail: list[str] = []

    def read() -> None:
        nonlocal done
        for line in daemon.stdout:  # type: ignore[union-attr]
            tail[:] = [*tail[-40:], line]
            if "] voiced: " in line and line.startswith("[turn "):
                number = int(line[6 : line.index("]")])
                with finished:
                    done = max(done, number)
                    finished.notify_all()

    threading.Thread(target=read, daemon=True).start()

    def feed() -> None:
        for text in itertools.islice(itertools.cycle(TURNS), turns):
            daemon.stdin.write(text + "\n")  # type: ignore[union-attr]
            daemon.stdin.flush()  # type: ignore[union-attr]
        daemon.stdin.close()  # type: ignore[union-attr]

    threading.Thread(target=feed, daemon=True).start()
    started = time.monotonic()
    reports: list[int] = []
    print(f"soak: {turns} typed turns, a report every {every}", flush=True)

    def reached(mark: int) -> bool:
        return done >= mark or daemon.poll() is not None

    for mark in range(every, turns + 1, every):
        with finished:
            if not finished.wait_for(functools.partial(reached, mark), timeout=3600):
                print("soak: no progress in an hour", flush=True)
                break
        if daemon.poll() is not None:
            print(f"soak: the daemon ended early (exit {daemon.returncode}):\n{''.join(tail)}", flush=True)
            return 1
        rss = _rss_kb(daemon.pid)
        reports.append(rss)
        elapsed = time.monotonic() - started
        print(f"turn {done:>6}: RSS {rss / 1024:6.1f} MB  {elapsed:6.0f} s  {_files(work)}", flush=True)
    daemon.wait(timeout=120)
    if len(reports) >= 2:
        growth = (reports[-1] - reports[0]) / 1024
        print(f"soak: RSS from turn {every} to {every * len(reports)}: {growth:+.1f} MB", flush=True)
    print(f"soak: {done} turns in {time.monotonic() - started:.0f} s, exit {daemon.returncode}", flush=True)
    return 0 if daemon.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
