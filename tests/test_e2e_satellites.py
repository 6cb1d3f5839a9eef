"""End to end with real satellites: wyoming-satellite processes on loopback, the whole daemon in this
process (run_daemon, as `voiced run` runs it), a real Mosquitto and the device simulator.

The daemon's own microphone is typed lines that never come (a pipe nobody writes to), and its own
room is the bedroom: what a satellite hears is that satellite's room's, and its reply goes to it alone.
Every turn's events, and /metrics, name the room the turn was in (the daemon's own microphone's too).
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import socket
import time
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.conftest import REPO, Broker, free_port
from tests.home import SimulatedHome
from tests.satellites import Satellite, at_ear_rate
from tests.speech_fixtures import spoken, spoken_wav
from voiced.app import RunOptions, run_daemon
from voiced.audio.sinks import WavFileSink
from voiced.audio.sources import WavFileSource
from voiced.cli import check_all
from voiced.config import Config
from voiced.devices.registry import DeviceRegistry
from voiced.ear.typed import TypedTurns
from voiced.engines import Engines, load_engines
from voiced.web.server import bind

pytestmark = pytest.mark.e2e
REPLY_WITHIN_S = 30.0  # end of speech to the whole reply on the satellite, on a busy 2-core box


@pytest.fixture(scope="module")
def engines(registry: DeviceRegistry) -> Engines:
    """Whisper and piper, loaded once for the module (every test's config keeps their defaults)."""
    return load_engines(Config(devices_dir=REPO / "devices", models_dir=REPO / "models"), registry)


def write_config(
    workdir: Path,
    broker: Broker,
    satellites: list[dict[str, str]],
    *,
    web_port: int | None = None,
    discovery: bool = False,
) -> Path:
    """`web_port`: where the web server listens, when the test starts it (Daemon.start);
    `discovery`: devices announced on the broker (Home Assistant's discovery) join the home."""
    config: dict[str, Any] = {
        "devices_dir": str(REPO / "devices"),
        "models_dir": str(REPO / "models"),
        "audio": {"room": "bedroom"},  # the daemon's own room: never a satellite's "here"
        "mqtt": {"port": broker.port, "connect_timeout_s": 3},
        "brain": {"state_file": str(workdir / "state.sqlite")},
        "homeassistant": {"discovery": False},
        "satellites": satellites,
    }
    if web_port is not None:
        config["web"] = {"port": web_port}
    if discovery:
        config["devices"] = {"discovery": ["homeassistant"]}
    path = workdir / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


class Events:
    """The daemon's events file (`--events`), read as it grows."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def all(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text().splitlines() if line.strip()]

    async def count(self, kind: str, satellite: str, count: int, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while self._count(kind, satellite) < count:
            assert time.monotonic() < deadline, (
                f"{kind} of {satellite}: {self._count(kind, satellite)} of {count}"
            )
            await asyncio.sleep(0.1)

    def _count(self, kind: str, satellite: str) -> int:
        return sum(1 for e in self.all() if e["kind"] == kind and e.get("satellite") == satellite)


class Daemon:
    """run_daemon in this process, until its typed input ends."""

    def __init__(self, workdir: Path, config_path: Path, engines: Engines) -> None:
        self.config, self.registry = check_all(config_path, {}, models=False)
        self.events = Events(workdir / "events.jsonl")
        self.local_output = workdir / "local.wav"
        self._engines = engines
        self._read_end, self._write_end = os.pipe()
        self.task: asyncio.Task[int] | None = None

    def start(self, *, web: bool = False) -> None:
        """`web`: with the web server on (where the config says)."""
        source = TypedTurns.from_stream(io.FileIO(self._read_end, "rb"))
        sink = WavFileSink(self.local_output, self._engines.synthesizer.sample_rate)
        web_socket = bind(self.config.web) if web else None
        options = RunOptions(events_file=self.events.path, web_socket=web_socket)
        run = run_daemon(self.config, self.registry, self._engines, source, sink, options)
        self.task = asyncio.create_task(run, name="daemon")

    async def stop(self) -> None:
        os.close(self._write_end)  # the end of its input: it stops as `voiced run --text -` does
        assert self.task is not None
        await asyncio.wait_for(self.task, 30)

    def heard_locally_s(self) -> float:
        with wave.open(str(self.local_output)) as wav:
            return wav.getnframes() / wav.getframerate()


@pytest.fixture
def home(tmp_path: Path, broker: Broker) -> Iterator[SimulatedHome]:
    config = write_config(tmp_path / "simulator", broker, [])
    with SimulatedHome(config, broker.port) as simulated:
        yield simulated


class Commands:
    """The devices' commands on the broker, each matched once by the test."""

    def __init__(self, home: SimulatedHome) -> None:
        self._home = home
        self._seen: list[tuple[str, object]] = []
        self._matched: set[int] = set()

    async def sent(self, wanted: tuple[str, str], timeout_s: float = REPLY_WITHIN_S) -> None:
        """`wanted` (device, "ON"/"OFF") was published, within `timeout_s`, since the last it matched."""
        deadline = time.monotonic() + timeout_s
        while True:
            self._seen += [(topic.split("/")[1], p.get("state")) for topic, p in self._home.published()]
            for index, command in enumerate(self._seen):
                if command == wanted and index not in self._matched:
                    self._matched.add(index)
                    return
            assert time.monotonic() < deadline, f"no {wanted} on the broker; saw {self._seen}"
            await asyncio.sleep(0.1)


async def started(
    workdir: Path,
    config: Path,
    satellite: Satellite,
    home: SimulatedHome,
    engines: Engines,
    *,
    web: bool = False,
) -> tuple[Daemon, Commands]:
    """The daemon running, `satellite` connected to it, and the devices' commands followed."""
    daemon = Daemon(workdir, config, engines)
    daemon.start(web=web)
    commands = Commands(home)
    await daemon.events.count("satellite_connected", satellite.name, 1, 60)
    return daemon, commands


async def reply_heard(satellite: Satellite, count: int, engines: Engines, events: Events) -> str:
    """The `count`-th reply played on `satellite`, as Whisper hears it, once its turn is over.

    The satellite's speaker here is a file, written as the reply is sent: at the pace it would play
    (voiced/satellites/audio.py), so it is read once the turn is over, not when it first looks
    settled (on a loaded box the sending can pause longer than that look, and the reply was cut
    short). The daemon waits the reply's length, deaf (half duplex) as it is while a real speaker
    plays it: a person waits for it too."""
    await events.count("room_turn_finished", satellite.name, count, REPLY_WITHIN_S)
    replies = await asyncio.to_thread(satellite.wait_reply, count, REPLY_WITHIN_S)
    assert engines.transcriber is not None
    return (await asyncio.to_thread(engines.transcriber.transcribe, at_ear_rate(replies[-1]))).lower()


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "simulator").mkdir(exist_ok=True)
    return tmp_path


def test_a_kitchen_satellite_lights_the_kitchen_answers_there_and_comes_back_after_a_kill(
    workdir: Path, broker: Broker, home: SimulatedHome, engines: Engines, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="voiced.memory")
    kitchen = Satellite(workdir, "kitchen_satellite")
    kitchen.start()
    try:
        satellites = [{"name": kitchen.name, "uri": kitchen.uri, "room": "kitchen"}]
        web_port = free_port()
        config = write_config(workdir, broker, satellites, web_port=web_port)
        asyncio.run(asyncio.wait_for(_kitchen(workdir, config, kitchen, home, engines, web_port), 150))
    finally:
        kitchen.stop()
    # the daemon's own room heard nothing: every give-back was the satellite room's, after each of
    # its Whisper jobs and each of its three turns
    given = [r for r in caplog.records if r.name == "voiced.memory" and "given back" in r.getMessage()]
    assert len(given) >= 6, len(given)


async def _kitchen(
    workdir: Path, config: Path, kitchen: Satellite, home: SimulatedHome, engines: Engines, web_port: int
) -> None:
    daemon, commands = await started(workdir, config, kitchen, home, engines, web=True)

    kitchen.say(spoken("Turn on the kitchen light."))
    await commands.sent(("kitchen_light", "ON"))
    assert "kitchen light" in await reply_heard(kitchen, 1, engines, daemon.events)

    kitchen.say(spoken("Turn off the light in here."))  # here: the kitchen, not the daemon's bedroom
    await commands.sent(("kitchen_light", "OFF"))
    assert "kitchen" in await reply_heard(kitchen, 2, engines, daemon.events)

    kitchen.kill()
    await daemon.events.count("satellite_disconnected", kitchen.name, 1, 15)
    kitchen.start()
    await daemon.events.count("satellite_connected", kitchen.name, 2, 30)
    kitchen.say(spoken("Turn on the light in here."))
    await commands.sent(("kitchen_light", "ON"))
    assert "kitchen" in await reply_heard(kitchen, 3, engines, daemon.events)
    # /metrics labels the kitchen's commands, turns and their stages by its room
    turns = daemon.events._count("room_turn_finished", kitchen.name)
    metrics = await scraped(
        web_port,
        'voiced_device_commands_total{device="kitchen_light",result="sent",room="kitchen"} 3.0',
        f'voiced_turns_total{{room="kitchen"}} {turns:.1f}',
        f'voiced_stage_seconds_count{{room="kitchen",stage="asr"}} {turns:.1f}',
        f'voiced_stage_seconds_count{{room="kitchen",stage="speech_end_to_audio"}} {turns:.1f}',
    )
    assert 'room="bedroom"' not in metrics  # the daemon's own room took no turn

    await daemon.stop()
    assert daemon.heard_locally_s() == 0.0  # nothing played on the daemon's own speaker
    events = daemon.events.all()
    heard = [e["text"] for e in events if e["kind"] == "room_heard"]
    assert len(heard) == 3 and all(e["room"] == "kitchen" for e in events if e["kind"] == "room_heard")
    sent = [e for e in events if e["kind"] == "command_sent"]
    assert len(sent) == 3 and {e["room"] for e in sent} == {"kitchen"}, sent
    states = {e["state"] for e in events if e["kind"] == "room_state" and e["satellite"] == kitchen.name}
    assert states == {"idle", "listening", "thinking", "speaking"}, states
    # the daemon's own state is the bedroom's, untouched by the kitchen's turns
    local = {(e["room"], e["state"]) for e in events if e["kind"] == "assistant_state"}
    assert local == {("bedroom", "idle")}, local
    # the home's one brain took the kitchen's turns as the kitchen's: what it learns is every room's
    # (its state in this test's own file)
    assert len([e for e in events if e["kind"] == "brain_finished" and not e["failed"]]) == 3
    state = [e["state"] for e in events if e["kind"] == "state_updated"][-1]
    assert state["processed_turns"] == 3
    assert [t["room"] for t in state["recent_turns"]] == ["kitchen"] * 3
    assert [c["device"] for t in state["recent_turns"] for c in t["commands"]] == ["kitchen_light"] * 3


async def scraped(port: int, *lines: str) -> str:
    """/metrics once it has every one of `lines` (the web reads the bus in its own task)."""
    deadline = time.monotonic() + 10
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as client:
        while True:
            text = (await client.get("/metrics")).text
            missing = [line for line in lines if line not in text]
            if not missing:
                return text
            assert time.monotonic() < deadline, f"not in /metrics: {missing}"
            await asyncio.sleep(0.1)


def test_the_daemon_s_own_microphone_names_its_room_in_every_turn_event(
    workdir: Path, broker: Broker, home: SimulatedHome, engines: Engines
) -> None:
    """No satellite: the daemon's microphone (a WAV read as fast as it goes) is the bedroom's
    (`audio.room`), and so is each of its turn's events, its command's and its reply's included."""
    config_path = write_config(workdir, broker, [])
    config, registry = check_all(config_path, {}, models=False)
    microphone = WavFileSource(
        spoken_wav(["Turn on the light in here."], workdir / "mic.wav"), realtime=False
    )
    sink = WavFileSink(workdir / "out.wav", engines.synthesizer.sample_rate)
    events = Events(workdir / "events.jsonl")
    options = RunOptions(events_file=events.path)
    run = run_daemon(config, registry, engines, microphone, sink, options)
    assert asyncio.run(asyncio.wait_for(run, 120)) == 1
    seen = events.all()
    sent = [e for e in seen if e["kind"] == "command_sent"]
    assert [e["device"] for e in sent] == ["bedroom_light"], seen  # "here" is the bedroom
    kinds = (
        "speech_started",
        "speech_ended",
        "transcript",
        "command_sent",
        "agent_text",
        "tts_started",
        "tts_stopped",
        "turn_finished",
        "assistant_state",
    )
    named = [(e["kind"], e["room"]) for e in seen if e["kind"] in kinds]
    assert {kind for kind, _ in named} == set(kinds), named
    assert {room for _, room in named} == {"bedroom"}, named


def test_two_satellites_at_once_each_get_their_own_answer_and_a_mute_one_holds_nobody_up(
    workdir: Path, broker: Broker, home: SimulatedHome, engines: Engines
) -> None:
    kitchen = Satellite(workdir, "kitchen_satellite")
    bedroom = Satellite(workdir, "bedroom_satellite")
    with socket.socket() as mute:  # accepts the connection and never says a word
        mute.bind(("127.0.0.1", free_port()))
        mute.listen()
        mute_uri = f"tcp://127.0.0.1:{mute.getsockname()[1]}"
        for satellite in (kitchen, bedroom):
            satellite.start()
        try:
            satellites = [
                {"name": "mute_satellite", "uri": mute_uri, "room": "living room"},
                {"name": kitchen.name, "uri": kitchen.uri, "room": "kitchen"},
                {"name": bedroom.name, "uri": bedroom.uri, "room": "bedroom"},
            ]
            config = write_config(workdir, broker, satellites)
            asyncio.run(asyncio.wait_for(_two_rooms(workdir, config, kitchen, bedroom, home, engines), 150))
        finally:
            for satellite in (kitchen, bedroom):
                satellite.stop()


async def _two_rooms(
    workdir: Path, config: Path, kitchen: Satellite, bedroom: Satellite, home: SimulatedHome, engines: Engines
) -> None:
    daemon = Daemon(workdir, config, engines)
    daemon.start()
    commands = Commands(home)
    for satellite in (kitchen, bedroom):
        await daemon.events.count("satellite_connected", satellite.name, 1, 60)

    request = spoken("Turn on the light in here.")
    kitchen.say(request)
    bedroom.say(request)  # the same words at the same moment, in two rooms
    await commands.sent(("kitchen_light", "ON"))
    await commands.sent(("bedroom_light", "ON"))
    kitchen_reply, bedroom_reply = await asyncio.gather(
        reply_heard(kitchen, 1, engines, daemon.events), reply_heard(bedroom, 1, engines, daemon.events)
    )
    assert "kitchen" in kitchen_reply and "bedroom" not in kitchen_reply
    assert "bedroom" in bedroom_reply and "kitchen" not in bedroom_reply

    await daemon.stop()
    assert len(kitchen.reply_files()) == 1 and len(bedroom.reply_files()) == 1  # one answer each
    assert daemon.heard_locally_s() == 0.0
    assert daemon.events._count("satellite_connected", "mute_satellite") == 0
    # one brain for both: the same words from two rooms are two requests, not one said twice
    analysed = [e for e in daemon.events.all() if e["kind"] == "brain_finished"]
    assert [(e["notice"], e["failed"]) for e in analysed] == [(None, None)] * 2, analysed


def test_voiced_listens_for_a_satellite_s_wake_word_on_its_stream(
    workdir: Path, broker: Broker, home: SimulatedHome, engines: Engines
) -> None:
    """`wake_word` on a satellite that streams without one of its own: a request without the word
    is no turn; with it, it is the kitchen's."""
    kitchen = Satellite(workdir, "kitchen_satellite")
    kitchen.start()
    try:
        satellite = {"name": kitchen.name, "uri": kitchen.uri, "room": "kitchen", "wake_word": "okay_nabu"}
        config = write_config(workdir, broker, [satellite])
        asyncio.run(asyncio.wait_for(_woken(workdir, config, kitchen, home, engines), 150))
    finally:
        kitchen.stop()


async def _woken(
    workdir: Path, config: Path, kitchen: Satellite, home: SimulatedHome, engines: Engines
) -> None:
    daemon, commands = await started(workdir, config, kitchen, home, engines)

    kitchen.say(spoken("Turn on the kitchen light."))  # overheard: no wake word
    await asyncio.sleep(8)  # the request said, and time for a turn it must not become
    assert not [e for e in daemon.events.all() if e["kind"] == "room_heard"]
    assert ("kitchen_light", "ON") not in [
        (topic.split("/")[1], p.get("state")) for topic, p in home.published()
    ]

    kitchen.say(spoken("Okay Nabu, turn on the kitchen light."))
    await commands.sent(("kitchen_light", "ON"))
    assert "kitchen light" in await reply_heard(kitchen, 1, engines, daemon.events)
    await daemon.stop()
