"""End to end: spoken commands → `voiced run --input` → exact payloads on a real broker."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from tests.conftest import REPO, Broker, free_port
from tests.speech_fixtures import spoken_wav
from voiced.audio.pcm import read_wav, rms_dbfs

pytestmark = pytest.mark.e2e


COMMAND_TOPICS = ("zigbee2mqtt/+/set", "voiced/music/set")


class Recorder:
    def __init__(self, port: int, topics: tuple[str, ...] = COMMAND_TOPICS) -> None:
        """Every JSON message on `topics` (default: the devices' commands), in order."""
        self.messages: queue.Queue[tuple[str, dict[str, object]]] = queue.Queue()
        self.client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        self.client.on_message = lambda _c, _u, m: self.messages.put((m.topic, json.loads(m.payload)))
        self.client.connect("127.0.0.1", port)
        for topic in topics:
            self.client.subscribe(topic, qos=1)
        self.client.loop_start()

    def drain(self) -> list[tuple[str, dict[str, object]]]:
        got = []
        while not self.messages.empty():
            got.append(self.messages.get_nowait())
        return got

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


def write_config(tmp_path: Path, port: int) -> Path:
    config = tmp_path / "config.yaml"
    config.write_text(
        f"devices_dir: {REPO / 'devices'}\nweb:\n  port: 0\nmqtt:\n  port: {port}\n  connect_timeout_s: 3\n"
    )
    return config


def run_voiced(config: Path, wav: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "voiced",
            "-c",
            str(config),
            "run",
            "--input",
            str(wav),
            "--output",
            str(out),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )


def speech_seconds(path: Path) -> float:
    samples, rate = read_wav(path)
    window = rate // 10
    loud = sum(rms_dbfs(samples[i : i + window]) > -35 for i in range(0, len(samples) - window + 1, window))
    return loud / 10


def test_spoken_commands_reach_the_broker_as_exact_payloads(tmp_path: Path, broker: Broker) -> None:
    wav = spoken_wav(
        [
            "Turn on the kitchen light.",
            "Set the bedroom light to fifty percent and play some jazz.",
            "Set the diffuser to lavender.",
            "What is the capital of France?",
            # tiny.en's other readings say "Abby Road": alone it would read the title back; the
            # second ear (Whisper base) hears "Abbey Road" too, and two models agreeing settle it
            "Put on the album Abbey Road.",
            "Turn off the kitchen light.",
            # tiny.en hears "Claire to Loom"; the music device's library has "Clair de Lune", which
            # fits the sound nearly as well and far better than any other title of it
            "Play the song Clair de Lune.",
        ],
        tmp_path / "in.wav",
    )
    recorder = Recorder(broker.port)
    try:
        result = run_voiced(write_config(tmp_path, broker.port), wav, tmp_path / "out.wav", "--fast")
        assert result.returncode == 0, result.stderr[-3000:]
        published = recorder.drain()
    finally:
        recorder.close()
    assert published == [
        ("zigbee2mqtt/kitchen_light/set", {"state": "ON"}),
        ("zigbee2mqtt/bedroom_light/set", {"state": "ON", "brightness": 127}),
        ("voiced/music/set", {"action": "play", "genre": "jazz"}),
        ("zigbee2mqtt/diffuser/set", {"state": "ON", "scent": "lavender"}),
        ("voiced/music/set", {"action": "play", "query": "abbey road"}),
        ("zigbee2mqtt/kitchen_light/set", {"state": "OFF"}),
        ("voiced/music/set", {"action": "play", "query": "clair de lune"}),
    ], result.stdout
    assert "didn't catch that" in result.stdout
    assert "Did you say" not in result.stdout
    # Five replies, each at least a short sentence of real speech.
    assert speech_seconds(tmp_path / "out.wav") > 5.0
    samples, _ = read_wav(tmp_path / "out.wav")
    assert np.abs(samples).max() > 3000


def test_real_time_input_exits_when_input_and_turns_are_done(tmp_path: Path, broker: Broker) -> None:
    wav = spoken_wav(["Play some classical music."], tmp_path / "in.wav", gap_s=0.7)
    recorder = Recorder(broker.port)
    try:
        result = run_voiced(write_config(tmp_path, broker.port), wav, tmp_path / "out.wav", "-v")
        published = recorder.drain()
    finally:
        recorder.close()
    assert result.returncode == 0, result.stderr[-3000:]
    assert published == [("voiced/music/set", {"action": "play", "genre": "classical"})]
    kinds = [line.split()[1] for line in result.stdout.splitlines() if line[:1] == " " or line[:1].isdigit()]
    for kind in ("speech_started", "speech_ended", "transcript", "command_sent", "tts_started"):
        assert kind in kinds, result.stdout
    assert speech_seconds(tmp_path / "out.wav") > 0.5


def test_commands_are_refused_while_the_broker_is_down_and_never_delivered_late(tmp_path: Path) -> None:
    port = free_port()  # no broker yet
    wav = spoken_wav(
        ["Turn on the kitchen light.", "Turn on the bedroom light."], tmp_path / "in.wav", gap_s=9
    )
    command = [sys.executable, "-m", "voiced", "-c", str(write_config(tmp_path, port)), "run"]
    command += ["--input", str(wav), "--output", str(tmp_path / "out.wav")]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout or []], daemon=True)
    reader.start()
    late = Broker(tmp_path, port)
    recorder = None
    try:
        seen = []
        while not any("can't reach the devices" in line for line in seen):
            seen.append(lines.get(timeout=120))
        late.start()  # the broker comes back; the daemon reconnects on its own
        recorder = Recorder(port)
        assert proc.wait(timeout=120) == 0
        reader.join(timeout=10)
        while not lines.empty():
            seen.append(lines.get_nowait())
        published = recorder.drain()
    finally:
        proc.kill()
        if recorder is not None:
            recorder.close()
        late.stop()
    assert published == [("zigbee2mqtt/bedroom_light/set", {"state": "ON"})], "".join(seen)
    assert speech_seconds(tmp_path / "out.wav") > 2.0
