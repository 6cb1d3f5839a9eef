"""The satellites benchmark's runs: one daemon (`voiced run`) with N real wyoming-satellite processes,
each saying its requests at random moments, then all at once; and the local-microphone baseline.

Times: a satellite's end of speech is when its microphone (tests/satellite_mic.py) wrote the request's
last chunk (the speech is trimmed and ends on a chunk's end); its first reply audio is when the
speaker command got the reply's first bytes. Both are wall clock on this machine. The local baseline
uses the same moments inside the daemon: when the last speech sample was recorded (its WAV frame is
handed over once the frame's last sample is, as a microphone's block), and the first reply audio at
the daemon's sink (`tts_started`).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from tests.satellite_mic import CHUNK
from tests.satellites import Satellite
from voiced.audio.pcm import EAR_RATE, resample_band_limited
from voiced.mouth.piper_tts import PiperSynthesizer

REPO = Path(__file__).resolve().parent.parent
ROOMS = (
    ("kitchen_satellite", "kitchen"),
    ("bedroom_satellite", "bedroom"),
    ("living_room_satellite", "living room"),
)
REQUESTS = ("Turn on the light in here.", "Turn off the light in here.")
LEAD_S = 0.25  # silence before each request
QUIET = 200  # |sample| at or below this, after the last word, is trailing silence (int16)
TURN_WITHIN_S = 30.0  # a request whose turn has not finished by then is lost
CONNECT_WITHIN_S = 180.0
SETTLE_WITHIN_S = 120.0
CALM = 0.3  # CPU seconds in a second: the daemon is calm
IDLE_S = 8.0  # the daemon's CPU measured with every satellite streaming silence


def request_audio(voice: PiperSynthesizer, text: str, chunk: int = CHUNK) -> np.ndarray:
    """`text` at the ear's rate: trimmed after its last word, silence before it so it ends on a
    chunk of the satellite's microphone (`chunk` samples)."""
    speech = resample_band_limited(voice.synthesize(text), voice.sample_rate, EAR_RATE)
    loud = np.flatnonzero(np.abs(speech.astype(np.int32)) > QUIET)
    speech = speech[: int(loud[-1]) + 1]
    lead = int(LEAD_S * EAR_RATE)
    lead += (-(lead + len(speech))) % chunk
    return np.concatenate([np.zeros(lead, np.int16), speech])


def daemon_config(workdir: Path, mqtt_port: int, satellites: list[Satellite], room: str) -> Path:
    config: dict[str, Any] = {
        "devices_dir": str(REPO / "devices"),
        "models_dir": str(REPO / "models"),
        "audio": {"room": room},
        "mqtt": {"port": mqtt_port},
        "web": {"port": 0},
        "brain": {"state_file": str(workdir / "state.sqlite")},
        "homeassistant": {"discovery": False},
        "satellites": [{"name": s.name, "uri": s.uri, "room": dict(ROOMS)[s.name]} for s in satellites],
    }
    path = workdir / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def events(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    lines = path.read_text().splitlines()
    return [
        json.loads(line) for line in lines[:-1] + ([lines[-1]] if lines and lines[-1].endswith("}") else [])
    ]


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def proc_stat(pid: int) -> tuple[float, float]:
    """(CPU seconds so far, peak RSS in MB) of a running process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = 100.0  # os.sysconf("SC_CLK_TCK") on Linux
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    status = Path(f"/proc/{pid}/status").read_text()
    hwm = next(line for line in status.splitlines() if line.startswith("VmHWM:"))
    return cpu, int(hwm.split()[1]) / 1024


def settle(pid: int) -> float:
    """Waits until the daemon is calm (its start-up work, such as rehearsing its replies, done): a
    second under CALM of a core, or SETTLE_WITHIN_S. Returns how long that took."""
    started = time.monotonic()
    cpu, _ = proc_stat(pid)
    while time.monotonic() - started < SETTLE_WITHIN_S:
        time.sleep(1.0)
        now, _ = proc_stat(pid)
        if now - cpu < CALM:
            break
        cpu = now
    return time.monotonic() - started


@dataclass
class RoomsRun:
    """What one daemon with N satellites gave: per satellite, its requests' ends and replies."""

    rooms: int
    said: dict[str, list[str]] = field(default_factory=dict)  # satellite -> requests, in order
    together_from: dict[str, int] = field(default_factory=dict)  # index of its first "at once" request
    ends: dict[str, list[float]] = field(default_factory=dict)
    firsts: dict[str, list[float]] = field(default_factory=dict)
    replies: dict[str, list[np.ndarray]] = field(default_factory=dict)
    heard: dict[str, list[float]] = field(default_factory=dict)  # room_heard, wall clock
    answered: dict[str, list[float]] = field(default_factory=dict)  # each turn's first room_said
    settle_s: float = 0.0  # after the satellites connected, until the daemon's start-up work was done
    idle_cpu: float = 0.0  # share of a core with every satellite streaming silence
    cpu_s: float = 0.0
    wall_s: float = 0.0  # the time the CPU was measured over
    peak_rss_mb: float = 0.0
    load: str = ""


def run_rooms(
    workdir: Path,
    mqtt_port: int,
    rooms: int,
    audio: dict[str, np.ndarray],
    slots: int,
    together: int,
    seed: int,
    mic_chunk: int = 0,
) -> RoomsRun:
    """`mic_chunk`: each satellite's --mic-command-samples-per-chunk (0: its default, 1024)."""
    workdir.mkdir(parents=True)
    satellites = [Satellite(workdir, name, timed=True, mic_chunk=mic_chunk) for name, _room in ROOMS[:rooms]]
    result = RoomsRun(rooms, said={s.name: [] for s in satellites})
    try:
        for satellite in satellites:
            satellite.start()
        config = daemon_config(workdir, mqtt_port, satellites, "living room")
        _with_daemon(workdir, config, satellites, result, audio, slots, together, seed)
    finally:
        for satellite in satellites:
            satellite.stop()
    seen = events(workdir / "events.jsonl")
    for satellite in satellites:
        mine = [e for e in seen if e.get("satellite") == satellite.name]
        result.heard[satellite.name] = [float(e["at"]) for e in mine if e["kind"] == "room_heard"]
        answered: dict[int, float] = {}
        for e in mine:
            if e["kind"] == "room_said":
                answered.setdefault(int(e["turn"]), float(e["at"]))
        result.answered[satellite.name] = sorted(answered.values())
        result.ends[satellite.name] = [float(x) for x in satellite.said_log.read_text().split()]
        firsts = sorted(satellite.replies.glob("reply-*.first"))
        result.firsts[satellite.name] = [float(f.read_text()) for f in firsts]
        result.replies[satellite.name] = [
            np.frombuffer(f.with_suffix(".raw").read_bytes(), np.int16)
            if f.with_suffix(".raw").exists()
            else np.zeros(0, np.int16)
            for f in firsts
        ]
    return result


def _with_daemon(
    workdir: Path,
    config: Path,
    satellites: list[Satellite],
    result: RoomsRun,
    audio: dict[str, np.ndarray],
    slots: int,
    together: int,
    seed: int,
) -> None:
    events_file = workdir / "events.jsonl"
    command = [sys.executable, "-m", "voiced", "-c", str(config), "run", "--text", "-"]
    # its own speaker a file (no sound card here); its own microphone typed lines that never come
    command += ["--output", str(workdir / "local.wav"), "--events", str(events_file)]
    log = (workdir / "daemon.log").open("wb")
    daemon = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT)
    try:
        finished = Finished(events_file)
        deadline = time.monotonic() + CONNECT_WITHIN_S
        while finished.count("satellite_connected") < len(satellites):
            if time.monotonic() > deadline or daemon.poll() is not None:
                log.flush()
                tail = (workdir / "daemon.log").read_text(errors="replace")[-3000:]
                raise SystemExit(f"bench: the satellites did not connect; the daemon said:\n{tail}")
            time.sleep(0.2)
        result.settle_s = settle(daemon.pid)
        cpu_before, _ = proc_stat(daemon.pid)
        time.sleep(IDLE_S)
        cpu_idle, _ = proc_stat(daemon.pid)
        result.idle_cpu = (cpu_idle - cpu_before) / IDLE_S
        cpu_before, wall_before = cpu_idle, time.monotonic()
        threads = [
            threading.Thread(target=_random_moments, args=(s, finished, audio, result, slots, seed + i))
            for i, s in enumerate(satellites)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for satellite in satellites:
            result.together_from[satellite.name] = len(result.said[satellite.name])
        for round_ in range(together):
            text = REQUESTS[round_ % len(REQUESTS)]
            for satellite in satellites:  # the same moment in every room
                satellite.say(audio[text])
                result.said[satellite.name].append(text)
            for satellite in satellites:
                finished.wait(satellite.name, len(result.said[satellite.name]))
            time.sleep(1.0)
        result.load = load_average()
        cpu_after, result.peak_rss_mb = proc_stat(daemon.pid)
        result.cpu_s = cpu_after - cpu_before
        result.wall_s = time.monotonic() - wall_before
    finally:
        assert daemon.stdin is not None
        daemon.stdin.close()  # the end of its typed input: it stops
        try:
            daemon.wait(timeout=60)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
        log.close()


class Finished:
    """Counts of the daemon's events per satellite, read from its events file as it grows."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()

    def count(self, kind: str, satellite: str | None = None) -> int:
        with self._lock:
            seen = events(self._path)
        return sum(1 for e in seen if e["kind"] == kind and satellite in (None, e.get("satellite")))

    def wait(self, satellite: str, count: int) -> bool:
        """Whether the satellite's `count`-th turn finished within TURN_WITHIN_S."""
        deadline = time.monotonic() + TURN_WITHIN_S
        while self.count("room_turn_finished", satellite) < count:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)
        return True


def _random_moments(
    satellite: Satellite,
    finished: Finished,
    audio: dict[str, np.ndarray],
    result: RoomsRun,
    slots: int,
    seed: int,
) -> None:
    """`slots` requests, each after a random pause once the room's previous turn is over."""
    rng = random.Random(seed)
    for slot in range(slots):
        time.sleep(rng.uniform(0.3, 4.0))
        text = REQUESTS[slot % len(REQUESTS)]
        satellite.say(audio[text])
        result.said[satellite.name].append(text)
        finished.wait(satellite.name, len(result.said[satellite.name]))


def match(ends: list[float], firsts: list[float]) -> tuple[list[float], int, int]:
    """(latencies, lost, extra): each end takes the first reply after it and before the next end."""
    latencies: list[float] = []
    used: set[int] = set()
    for index, end in enumerate(ends):
        until = ends[index + 1] if index + 1 < len(ends) else float("inf")
        for j, first in enumerate(firsts):
            if j not in used and end <= first < until:
                used.add(j)
                latencies.append(first - end)
                break
    return latencies, len(ends) - len(latencies), len(firsts) - len(used)
