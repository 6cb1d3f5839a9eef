"""One spoken run: the real `voiced run --input WAV` against a private broker and simulated devices,
every command on the broker recorded, and each sentence given the turns its audio became.

Every sentence must meet the devices as the text corpus describes them: in their initial states.
So the simulator plays every device `--silent`: it takes the commands but never reports a new
state, and the daemon sees the initial states for the whole run (a light turned on by one
sentence does not make a later "dim the lights" start from on). What a turn published is what
reached the broker; the daemon's own command_sent events say which turn sent it.

Sentences and turns are matched by audio position: the ear's segmentation (webrtcvad and the
segmenter, frame-counted, no clock) is replayed here on the same WAV, which gives every turn its
stretch of audio even with `--fast`; it is checked against the daemon's speech_ended events.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import yaml
from paho.mqtt.enums import CallbackAPIVersion

from bench.understanding.spoken_corpus import ROOM, canonical
from bench.understanding.spoken_voices import Track
from tests.conftest import Broker
from tests.home import SimulatedHome
from voiced.audio.pcm import EAR_RATE, read_wav
from voiced.config import AsrConfig, VadConfig
from voiced.devices.registry import DeviceRegistry
from voiced.ear.frontend import PlainVad
from voiced.ear.listener import settings_from
from voiced.ear.segmenter import Segmenter, UtteranceEnded, UtteranceStarted

SETTLE_S = 0.5  # for the last commands to arrive after the daemon has exited
BEAM_FIELDS = ("beam_size", "short_beam_size")  # short_beam_size: short utterances' own beam


def default_beam() -> str:
    """The daemon's own beam setting, in words."""
    asr = AsrConfig()
    short = getattr(asr, "short_beam_size", None)
    if short is None or short == asr.beam_size:
        return f"beam {asr.beam_size}"
    return f"beam {short} up to {getattr(asr, 'short_utterance_s', 0):g} s, {asr.beam_size} beyond"


@dataclass(frozen=True)
class Publish:
    t: float  # time.monotonic() on arrival; the daemon's events use the same clock
    device: str
    payload: str  # canonical JSON (the raw text if it is not JSON)


class CommandLog:
    """Every message on the devices' command topics, timestamped, from its own MQTT client."""

    def __init__(self, port: int, registry: DeviceRegistry) -> None:
        self._devices = {device.command_topic: device.name for device in registry}
        self._got: list[Publish] = []
        self._lock = threading.Lock()
        subscribed = threading.Event()
        self._client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        self._client.on_message = self._on_message
        self._client.on_subscribe = lambda *_: subscribed.set()
        self._client.on_connect = lambda c, *_: c.subscribe([(t, 1) for t in self._devices])
        self._client.connect("127.0.0.1", port)
        self._client.loop_start()
        if not subscribed.wait(10):
            raise SystemExit("bench: could not subscribe to the devices' command topics")

    def _on_message(self, _client: Any, _userdata: Any, message: Any) -> None:
        now = time.monotonic()
        try:
            payload = canonical(json.loads(message.payload))
        except ValueError:
            payload = message.payload.decode(errors="replace")
        with self._lock:
            self._got.append(Publish(now, self._devices.get(message.topic, message.topic), payload))

    def take(self) -> list[Publish]:
        with self._lock:
            got, self._got = self._got, []
        return got

    def close(self) -> None:
        self._client.loop_stop()
        self._client.disconnect()


@dataclass
class Home:
    port: int
    registry: DeviceRegistry
    log: CommandLog


@contextmanager
def private_home(work: Path, registry: DeviceRegistry, devices_dir: Path) -> Iterator[Home]:
    """A Mosquitto of our own on a free port, every device played silent, every command logged."""
    broker = Broker(work)
    broker.start()
    try:
        config = write_config(work / "simulator.yaml", broker.port, devices_dir, work / "simulator-state")
        silent = [arg for device in registry for arg in ("--silent", device.name)]
        with SimulatedHome(config, broker.port, *silent):
            log = CommandLog(broker.port, registry)
            try:
                yield Home(broker.port, registry, log)
            finally:
                log.close()
    finally:
        broker.stop()


def write_config(
    path: Path,
    port: int,
    devices_dir: Path,
    state_file: Path,
    *,
    beam: int | None = None,
    models_dir: Path | None = None,
    settings: list[tuple[str, str, Any]] | None = None,
) -> Path:
    """`beam`: Whisper's beam for every utterance; None = the daemon's own defaults. `settings`:
    (section, key, value) set on top."""
    config: dict[str, Any] = {
        "devices_dir": str(devices_dir),
        "audio": {"room": ROOM},
        "mqtt": {"port": port, "connect_timeout_s": 5},
        # Never the user's conversation state: a new one, in the run's own folder.
        "brain": {"state_file": str(state_file), "new_session": True},
        # Sentences come faster than anyone speaks: the rate limit must not refuse them.
        "safety": {"max_commands": 1000, "per_seconds": 1},
        # The devices never report (see above): scene steps and spoken confirmations give up soon.
        "vibe": {"confirm_timeout_s": 0.5},
        "web": {"port": 0},  # runs may be side by side: none takes the default port
    }
    if beam is not None:
        config["asr"] = {name: beam for name in BEAM_FIELDS if name in AsrConfig.model_fields}
    if models_dir is not None:
        config["models_dir"] = str(models_dir)
    for section, key, value in settings or []:
        config.setdefault(section, {})[key] = value
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


@dataclass
class Turn:
    number: int
    start: int  # samples from the start of the WAV, pre-roll included
    end: int  # just after the last voiced frame
    seconds: float  # the utterance as the ear handed it on (speech_ended's duration_s)
    text: str = ""
    asr_s: float | None = None
    reply: str = ""
    publishes: list[Publish] = field(default_factory=list)


@dataclass
class Heard:
    """What one sentence became."""

    turns: list[Turn]

    @property
    def transcript(self) -> str:
        return " ".join(t.text for t in self.turns if t.text).strip()

    @property
    def publishes(self) -> list[Publish]:
        return [p for t in self.turns for p in t.publishes]

    @property
    def replies(self) -> str:
        return " ".join(t.reply for t in self.turns if t.reply).strip()


@dataclass
class RunResult:
    heard: list[Heard]  # one per sentence, in order
    asr_s: list[float]  # Whisper time of every transcribed turn
    wall_s: float
    notes: list[str]  # what went oddly: strays, merges, splits, unmatched commands


def replay_segmentation(wav: Path, vad: VadConfig) -> list[Turn]:
    """The ear's turns on `wav`, as `voiced run --input` makes them (frames of vad.frame_ms)."""
    samples, rate = read_wav(wav)
    if rate != EAR_RATE:
        raise SystemExit(f"bench: {wav} is not {EAR_RATE} Hz")
    segmenter = Segmenter(settings_from(vad))
    front = PlainVad(vad.aggressiveness)
    step = EAR_RATE * vad.frame_ms // 1000
    turns: list[Turn] = []
    number = 0

    def ended(event: object, upto: int) -> None:
        if isinstance(event, UtteranceEnded):
            length = len(event.audio) // 2
            end = upto - event.trailing_silence_ms * EAR_RATE // 1000
            turns.append(Turn(number, upto - length, end, length / EAR_RATE))

    offsets = range(0, len(samples) - step + 1, step)
    for offset in offsets:
        kept, speech = front.classify(samples[offset : offset + step].tobytes())
        for event in segmenter.process(kept, speech):
            if isinstance(event, UtteranceStarted):
                number += 1  # as the ear counts: a start, even of a burst later discarded
            ended(event, offset + step)
    for event in segmenter.flush():
        ended(event, len(offsets) * step)
    return turns


def run_condition(
    home: Home,
    config: Path,
    track: Track,
    work: Path,
    *,
    fast: bool,
    vad: VadConfig,
) -> RunResult:
    events_file = work / "events.jsonl"
    command = [sys.executable, "-m", "voiced", "-c", str(config), "run", "--input", str(track.path)]
    command += ["--output", str(work / "replies.wav"), "--events", str(events_file)]
    if fast:
        command.append("--fast")
    home.log.take()  # anything left over belongs to no sentence of this run
    started = time.monotonic()
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=track.seconds * 3 + 300, check=False
    )
    wall_s = time.monotonic() - started
    (work / "daemon.log").write_text(done.stdout + done.stderr)
    if done.returncode != 0:
        raise SystemExit(f"bench: voiced run exited {done.returncode}; see {work / 'daemon.log'}")
    time.sleep(SETTLE_S)
    publishes = home.log.take()
    events = [json.loads(line) for line in events_file.read_text().splitlines() if line.strip()]
    turns, notes = _turns(track, vad, events)
    notes += _attribute(publishes, events, turns)
    heard, placing = _place(turns, track.spans)
    asr = [t.asr_s for t in turns if t.asr_s is not None]
    return RunResult(heard, asr, wall_s, notes + placing)


def _turns(track: Track, vad: VadConfig, events: list[dict[str, Any]]) -> tuple[list[Turn], list[str]]:
    """The replayed turns, filled in from the events; checked against the daemon's own segmentation."""
    notes: list[str] = []
    turns = replay_segmentation(track.path, vad)
    ended = {int(e["turn"]): round(float(e["duration_s"]), 2) for e in events if e["kind"] == "speech_ended"}
    if ended != {t.number: round(t.seconds, 2) for t in turns}:
        notes.append(
            f"the daemon's {len(ended)} turns differ from the {len(turns)} the replayed segmentation "
            "found: sentences matched to turns by order instead"
        )
        spans = track.spans
        turns = [
            Turn(number, *spans[min(i, len(spans) - 1)], seconds)
            for i, (number, seconds) in enumerate(sorted(ended.items()))
        ]
    by_number = {t.number: t for t in turns}
    for event in events:
        turn = by_number.get(event.get("turn", -1))
        if turn is None:
            continue
        if event["kind"] == "transcript":
            turn.text = (turn.text + " " + str(event["text"])).strip()
            turn.asr_s = float(event.get("asr_s", 0.0))
        elif event["kind"] == "agent_text":
            turn.reply = (turn.reply + " " + str(event["text"])).strip()
    return turns, notes


def _attribute(publishes: list[Publish], events: list[dict[str, Any]], turns: list[Turn]) -> list[str]:
    """Each command on the broker goes to the turn whose command_sent it matches (same device and
    payload, first unmatched); one no event explains goes to the last turn transcribed before it."""
    notes: list[str] = []
    by_number = {t.number: t for t in turns}
    sent: list[tuple[str, str, int]] = []
    for event in events:
        if event["kind"] == "command_sent":
            try:
                payload = canonical(json.loads(event["payload"]))
            except ValueError:
                payload = str(event["payload"])
            sent.append((str(event["device"]), payload, int(event["turn"])))
    heard_at = sorted((float(e["t"]), int(e["turn"])) for e in events if e["kind"] == "transcript")
    for publish in publishes:
        match = next(
            (i for i, (d, p, _t) in enumerate(sent) if d == publish.device and p == publish.payload), None
        )
        if match is not None:
            number = sent.pop(match)[2]
        else:
            earlier = [n for t, n in heard_at if t <= publish.t]
            number = earlier[-1] if earlier else (turns[0].number if turns else 0)
            notes.append(f"{publish.device} {publish.payload} reached the broker with no command_sent event")
        turn = by_number.get(number)
        if turn is None:
            notes.append(f"{publish.device} {publish.payload} from turn {number}, which has no audio")
            continue
        turn.publishes.append(publish)
    for device, payload, number in sent:
        notes.append(f"turn {number}: {device} {payload} was sent but never reached the broker")
    return notes


def _place(turns: list[Turn], spans: tuple[tuple[int, int], ...]) -> tuple[list[Heard], list[str]]:
    """Each turn to the sentence its audio overlaps most (a stray one to the nearest)."""
    heard = [Heard([]) for _ in spans]
    notes: list[str] = []
    for turn in turns:
        overlaps = [max(0, min(turn.end, b) - max(turn.start, a)) for a, b in spans]
        best = max(range(len(spans)), key=lambda i: overlaps[i])
        if overlaps[best] == 0:
            best = min(
                range(len(spans)),
                key=lambda i: min(abs(turn.start - spans[i][1]), abs(turn.end - spans[i][0])),
            )
            notes.append(
                f"turn {turn.number} ({turn.text!r}) lies between sentences; given to sentence {best + 1}"
            )
        elif sum(1 for o in overlaps if o > 0) > 1:
            notes.append(f"turn {turn.number} ({turn.text!r}) runs over two sentences: they merged")
        heard[best].turns.append(turn)
    for index, got in enumerate(heard):
        if len(got.turns) > 1:
            notes.append(f"sentence {index + 1} became {len(got.turns)} turns")
        elif not got.turns:
            notes.append(f"sentence {index + 1} was not heard at all")
    return heard, notes
