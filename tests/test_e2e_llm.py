"""End to end with an LLM: `voiced run --input` against a scripted OpenAI-compatible server over
real HTTP and a real broker. Tool calls become exact payloads; every failure ends in speech and
the daemon goes on to the next turn."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, Broker
from tests.openai_server import HttpError, Raw, ScriptedServer, Text, Tools, call
from tests.speech_fixtures import spoken_wav
from tests.test_e2e_wav import Recorder, speech_seconds

pytestmark = pytest.mark.e2e


def run(tmp_path: Path, broker: Broker, llm: ScriptedServer, lines: list[str]) -> tuple[str, list[dict]]:
    config = tmp_path / "config.yaml"
    config.write_text(
        f"devices_dir: {REPO / 'devices'}\nweb:\n  port: 0\nmqtt:\n  port: {broker.port}\n"
        f"llm:\n  base_url: {llm.base_url}\n  first_token_timeout_s: 1.5\n"
    )
    wav = spoken_wav(lines, tmp_path / "in.wav", gap_s=1.2)
    events = tmp_path / "events.jsonl"
    command = [sys.executable, "-m", "voiced", "-c", str(config), "run", "--input", str(wav)]
    command += ["--output", str(tmp_path / "out.wav"), "--fast", "--events", str(events)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout, [json.loads(line) for line in events.read_text().splitlines()]


def test_tool_calls_and_every_failure_end_in_speech(
    tmp_path: Path, broker: Broker, llm: ScriptedServer
) -> None:
    llm.push(
        # 1: the model dims the bedroom light through a tool, then says so.
        Tools((call("set_light", device="bedroom_light", state="on", brightness_pct=50),)),
        Text("The bedroom light is at half brightness."),
        # 2: the endpoint fails.
        HttpError(500),
        # 3: garbage instead of a stream.
        Raw(b"data: this is not json\n\n"),
        # 4: a first token slower than the 1.5 s timeout.
        Text("Too late.", first_delay_s=4.0),
        # 5: a tool call for a device that does not exist; the model corrects itself.
        Tools((call("set_light", device="garage_light", state="on"),)),
        Tools((call("play_music", device="music", action="play", genre="jazz"),)),
        Text("Playing jazz."),
    )
    recorder = Recorder(broker.port)
    try:
        stdout, events = run(
            tmp_path,
            broker,
            llm,
            [
                "Could you make the bedroom cosy for reading?",
                "What is the tallest mountain in the world?",
                "How many legs does a spider have?",
                "Who painted the Mona Lisa?",
                "Something to listen to in the shed, please.",
            ],
        )
        published = recorder.drain()
    finally:
        recorder.close()
    assert published == [
        ("zigbee2mqtt/bedroom_light/set", {"state": "ON", "brightness": 127}),
        ("voiced/music/set", {"action": "play", "genre": "jazz"}),
    ], stdout
    said = [e["text"] for e in events if e["kind"] == "agent_text"]
    assert "The bedroom light is at half brightness." in said
    assert said.count("Sorry, my thinking service isn't answering right now.") == 3, said
    assert "Playing jazz." in said
    # Every turn finished, and the daemon went on to the next one after each failure.
    assert sum(1 for e in events if e["kind"] == "turn_finished") == 5
    assert speech_seconds(tmp_path / "out.wav") > 5.0
    refused = [r for r in llm.requests if any(m.get("role") == "tool" for m in r["messages"])]
    assert any("garage_light" in json.dumps(r["messages"]) for r in refused)
