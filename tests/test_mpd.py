"""The music device on a real MPD: Debian's mpd on a free port with a null output and a small library
of tones written by sox and tagged with genres, driven through the MQTT music protocol by the real
gateway, and by typed turns through the whole daemon."""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Broker, free_port, wait_for_port
from voiced.bus import EventBus
from voiced.devices.gateway import DeviceGateway
from voiced.devices.model import MusicDevice, MusicSet
from voiced.devices.mpd_player import MpdPlayer
from voiced.devices.registry import DeviceRegistry

SONGS = [  # (file, genre, artist, album, title)
    ("a.flac", "Jazz", "Miles Davis", "Kind of Blue", "So What"),
    ("b.flac", "Jazz", "Miles Davis", "Kind of Blue", "Blue in Green"),
    ("c.flac", "Rock", "Queen", "A Night at the Opera", "Love of My Life"),
    ("d.flac", "Classical", "Debussy", "Suite bergamasque", "Clair de Lune"),
]


class Mpd:
    """A private MPD: its own config, database, state and music folder; nothing of the user's."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        music = workdir / "music"
        music.mkdir()
        for file, genre, artist, album, title in SONGS:
            tags = [f"GENRE={genre}", f"ARTIST={artist}", f"ALBUM={album}", f"TITLE={title}"]
            comments = [arg for tag in tags for arg in ("--comment", tag)]
            subprocess.run(
                ["sox", "-n", *comments, str(music / file), "synth", "30", "sine", "440", "vol", "0.1"],
                check=True,
                timeout=30,
            )
        self.conf = workdir / "mpd.conf"
        self.conf.write_text(
            f'music_directory "{music}"\n'
            f'db_file "{workdir / "mpd.db"}"\n'
            f'state_file "{workdir / "mpd.state"}"\n'
            f'pid_file "{workdir / "mpd.pid"}"\n'
            f'log_file "{workdir / "mpd.log"}"\n'
            f'bind_to_address "127.0.0.1"\nport "{self.port}"\n'
            'audio_output {\n  type "null"\n  name "null"\n  mixer_type "software"\n}\n'
        )
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        binary = shutil.which("mpd") or "/usr/bin/mpd"
        self.proc = subprocess.Popen(
            [binary, "--no-daemon", str(self.conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        wait_for_port(self.port, timeout=20)
        from mpd import MPDClient

        client = MPDClient()
        client.connect("127.0.0.1", self.port)
        client.update()
        deadline = time.monotonic() + 20
        while "updating_db" in client.status() or len(client.listall()) < len(SONGS):
            assert time.monotonic() < deadline, "MPD did not read its library"
            time.sleep(0.1)
        client.disconnect()

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None


@pytest.fixture
def mpd(tmp_path: Path) -> Iterator[Mpd]:
    server = Mpd(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def device(port: int) -> MusicDevice:
    return MusicDevice(
        kind="music",
        name="music",
        room="living room",
        command_topic="voiced/music/set",
        state_topic="voiced/music/state",
        availability_topic="voiced/music/availability",
        genres=["jazz", "rock", "classical"],
        mpd=f"127.0.0.1:{port}",
    )


async def until(check: Callable[[], Any], timeout: float = 20.0) -> Any:
    # 20 s: in CI beside the end-to-end daemons, the first play once took over 10 s to be reported
    deadline = time.monotonic() + timeout
    while not (found := check()):
        assert time.monotonic() < deadline, f"timed out after {timeout:.0f} s"
        await asyncio.sleep(0.05)
    return found


def test_mpd_plays_by_genre_and_query_pauses_resumes_skips_and_reports_what_plays(
    broker: Broker, mpd: Mpd, caplog: pytest.LogCaptureFixture
) -> None:
    music = device(mpd.port)
    registry = DeviceRegistry([music])

    async def scenario() -> None:
        bus = EventBus()
        bus.bind_loop(asyncio.get_running_loop())
        player = MpdPlayer(music, broker.mqtt_config("mpd-test"), str(music.mpd))
        gateway = DeviceGateway(registry, broker.mqtt_config("gateway-test"), bus)
        player.start()
        gateway.start()
        try:
            assert await gateway.wait_connected(10)
            await until(lambda: gateway.is_online("music"))
            state = lambda: gateway.state_of("music") or {}  # noqa: E731

            async def send(**fields: Any) -> dict[str, Any]:
                sent = gateway.send(MusicSet(device="music", **fields))
                await asyncio.wrap_future(sent.delivered)
                return sent  # type: ignore[no-any-return]

            await send(action="play", genre="jazz")
            playing = await until(lambda: state().get("state") == "playing" and state())
            assert playing["genre"] == "jazz" and playing["track"].startswith("Miles Davis - ")
            await send(action="next")
            await until(lambda: state().get("track") == "Miles Davis - Blue in Green")
            await send(action="pause")
            await until(lambda: state().get("state") == "paused")
            await send(action="play")
            await until(lambda: state().get("state") == "playing")
            await send(volume=30)
            await until(lambda: state().get("volume") == 30)
            await send(action="play", query="queen")
            await until(
                lambda: state().get("track") == "Queen - Love of My Life" and state().get("query") == "queen"
            )
            await send(action="play", query="clair de lune")
            await until(lambda: state().get("track") == "Debussy - Clair de Lune")
            # nothing in the library: MPD stops, and nothing claims to play it
            await send(action="play", query="taylor swift")
            await until(lambda: state().get("state") == "stopped")
            assert "query" not in state()
            assert "nothing in MPD's library" in caplog.text
            await send(action="stop")
        finally:
            gateway.stop()
            player.stop()

    with caplog.at_level(logging.INFO):
        asyncio.run(scenario())


def test_mpd_out_of_reach_makes_the_device_offline_and_it_comes_back(broker: Broker, tmp_path: Path) -> None:
    server = Mpd(tmp_path)  # not started yet
    music = device(server.port)
    registry = DeviceRegistry([music])

    async def scenario() -> None:
        bus = EventBus()
        bus.bind_loop(asyncio.get_running_loop())
        player = MpdPlayer(music, broker.mqtt_config("mpd-test"), str(music.mpd))
        gateway = DeviceGateway(registry, broker.mqtt_config("gateway-test"), bus)
        gateway.start()
        player.start()
        try:
            assert await gateway.wait_connected(10)
            await until(lambda: not gateway.is_online("music"))
            await asyncio.to_thread(server.start)
            await until(lambda: gateway.is_online("music"), timeout=15)
            await until(lambda: (gateway.state_of("music") or {}).get("state") == "stopped")
            await asyncio.to_thread(server.stop)
            await until(lambda: not gateway.is_online("music"), timeout=15)
        finally:
            gateway.stop()
            player.stop()
            server.stop()

    asyncio.run(scenario())


def test_typed_turns_play_from_the_library_through_the_daemon(
    broker: Broker, mpd: Mpd, tmp_path: Path
) -> None:
    devices = tmp_path / "devices"
    shutil.copytree(Path(__file__).parent.parent / "devices", devices)  # the repo's home, its player on MPD
    with (devices / "music.yaml").open("a") as music:
        music.write(f"mpd: 127.0.0.1:{mpd.port}\n")
    config = tmp_path / "config.yaml"
    config.write_text(
        f"devices_dir: {devices}\nmqtt:\n  port: {broker.port}\nweb:\n  port: 0\n"
        f"brain:\n  state_file: {tmp_path / 'state.json'}\nplans:\n  enabled: false\n"
    )
    turns = tmp_path / "turns.txt"
    turns.write_text("play some jazz\nwhat's playing?\nplay the Queen album\npause the music\n")
    events = tmp_path / "events.jsonl"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "voiced",
            "-c",
            str(config),
            "run",
            "--text",
            str(turns),
            "--events",
            str(events),
            "--output",
            str(tmp_path / "replies.wav"),
        ],
        check=True,
        timeout=120,
        stdout=subprocess.DEVNULL,
    )
    said = [json.loads(line) for line in events.read_text().splitlines()]
    replies = [e["text"] for e in said if e["kind"] == "agent_text"]
    text = " ".join(replies)
    assert "jazz" in text.lower() and "Miles Davis" in text, replies
    from mpd import MPDClient

    client = MPDClient()
    client.connect("127.0.0.1", mpd.port)
    try:
        assert client.status()["state"] == "pause"
        assert client.currentsong()["artist"] == "Queen"
    finally:
        client.disconnect()
