"""End to end: an ask-back dialogue and a spoken correction, into the real `voiced run`, against a real
broker.

Two rooms whose names a mishearing can confuse: the daemon asks which one was meant, takes
the answer as the next turn, and only then does the device receive a command.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO, Broker
from tests.home import SimulatedHome, voiced
from tests.speech_fixtures import spoken_wav

pytestmark = pytest.mark.e2e
ROOMS = ("bedroom", "bathroom")


def _home(tmp_path: Path, port: int) -> Path:
    devices = tmp_path / "devices"
    devices.mkdir()
    for room in ROOMS:
        topic = f"zigbee2mqtt/{room}_light"
        (devices / f"{room}.yaml").write_text(
            f"kind: light\nname: {room}_light\nroom: {room}\n"
            f"command_topic: {topic}/set\nstate_topic: {topic}\navailability_topic: {topic}/availability\n"
        )
    config = tmp_path / "config.yaml"
    config.write_text(
        f"devices_dir: {devices}\nweb:\n  port: 0\nmqtt:\n  port: {port}\n  connect_timeout_s: 3\n"
    )
    return config


def test_a_name_heard_two_ways_is_asked_back_and_the_answer_acts(tmp_path: Path, broker: Broker) -> None:
    config = _home(tmp_path, broker.port)
    turns = tmp_path / "turns.txt"
    turns.write_text("turn on the bedthroom light\nthe bathroom one\n")
    events = tmp_path / "events.jsonl"
    with SimulatedHome(config, broker.port) as home:
        done = subprocess.run(
            voiced(
                config,
                "run",
                "--text",
                str(turns),
                "--output",
                str(tmp_path / "out.wav"),
                "--events",
                str(events),
            ),
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode == 0, done.stderr
        published = home.published()
    said = [e["text"] for e in map(json.loads, events.read_text().splitlines()) if e["kind"] == "agent_text"]
    said = [text for text in said if text != "One moment."]  # the brain's barrier may speak first
    assert said == [
        "Sorry, did you mean the bathroom light or the bedroom light?",
        "Turning on the bathroom light.",
    ]
    assert published == [("zigbee2mqtt/bathroom_light/set", {"state": "ON"})]


def test_a_spoken_correction_puts_the_wrong_light_back_and_lights_the_right_one(
    tmp_path: Path, broker: Broker
) -> None:
    """ "Turn on the kitchen light." — "No, the bedroom one.": spoken into `voiced run --input`, the
    simulator playing the home's devices; the kitchen light goes back off and the bedroom light on."""
    config = tmp_path / "config.yaml"
    config.write_text(
        f"devices_dir: {REPO / 'devices'}\nweb:\n  port: 0\n"
        f"mqtt:\n  port: {broker.port}\n  connect_timeout_s: 3\n"
    )
    wav = spoken_wav(["Turn on the kitchen light.", "No, the bedroom one."], tmp_path / "in.wav", gap_s=2.5)
    with SimulatedHome(config, broker.port) as home:
        done = subprocess.run(
            voiced(config, "run", "--input", str(wav), "--output", str(tmp_path / "out.wav"), "--fast"),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        published = home.published()
    assert published == [
        ("zigbee2mqtt/kitchen_light/set", {"state": "ON"}),
        ("zigbee2mqtt/kitchen_light/set", {"state": "OFF"}),
        ("zigbee2mqtt/bedroom_light/set", {"state": "ON"}),
    ], done.stdout
    assert "put the kitchen light back" in done.stdout
