"""End to end: the brain in `voiced run` on spoken input — offline learning, restarts, the barrier."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, Broker
from tests.home import SimulatedHome, voiced
from tests.openai_server import ScriptedServer, Text
from tests.speech_fixtures import spoken_wav
from voiced.brain.store import StateStore

pytestmark = pytest.mark.e2e
ANALYSIS = json.dumps({"risk": None})


def write_config(tmp_path: Path, port: int, extra: str = "") -> Path:
    config = tmp_path / "config.yaml"
    config.write_text(f"devices_dir: {REPO / 'devices'}\nweb:\n  port: 0\nmqtt:\n  port: {port}\n{extra}")
    return config


def events_of(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_an_offline_session_teaches_the_state_which_survives_restarts_and_kill_9(
    tmp_path: Path, broker: Broker
) -> None:
    config = write_config(tmp_path, broker.port)
    session = spoken_wav(
        [
            "Set the diffuser to lavender.",
            "Play some jazz.",
            "What is the weather like on Mars?",
            "What is the weather like on Mars?",
        ],
        tmp_path / "session.wav",
    )
    run = subprocess.run(
        voiced(config, "run", "--input", str(session), "--output", str(tmp_path / "out.wav")),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    shown = subprocess.run(voiced(config, "state"), capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    state = json.loads(shown.stdout)
    assert state["processed_turns"] == 4
    assert state["preferences"]["scents"] == ["lavender"] and state["preferences"]["genres"] == ["jazz"]
    kinds = [p["kind"] for p in state["pain_points"]]
    assert kinds.count("misunderstood") == 2 and "repeated" in kinds, state["pain_points"]
    session_id = state["session_id"]

    # kill -9 in the middle of a second run: the state stays readable, the session goes on.
    more = spoken_wav(["Turn on the kitchen light."] * 6, tmp_path / "more.wav", gap_s=1.0)
    proc = subprocess.Popen(
        voiced(config, "run", "--input", str(more), "--output", str(tmp_path / "more-out.wav")),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    store = StateStore(tmp_path / "voiced-state.sqlite")
    deadline = time.monotonic() + 120
    while (store.load() or state_model_stub()).processed_turns < 6 and time.monotonic() < deadline:
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    after = store.load()
    assert after is not None and after.session_id == session_id and after.processed_turns >= 6
    shown = subprocess.run(voiced(config, "state"), capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0 and json.loads(shown.stdout)["session_id"] == session_id
    # The user can start over.
    short = spoken_wav(["Turn off the kitchen light."], tmp_path / "short.wav")
    fresh = subprocess.run(
        voiced(
            config,
            "run",
            "--new-session",
            "--fast",
            "--input",
            str(short),
            "--output",
            str(tmp_path / "o.wav"),
        ),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert fresh.returncode == 0, fresh.stderr[-2000:]
    latest = json.loads(subprocess.run(voiced(config, "state"), capture_output=True, text=True).stdout)
    assert latest["session_id"] != session_id and latest["processed_turns"] == 1


def state_model_stub():  # type: ignore[no-untyped-def]
    from voiced.brain.state import ConversationState

    return ConversationState(session_id="none")


def _after_asr(events: list[dict[str, object]], turn: int) -> float:
    """Transcript → first reply audio: the part of the latency the brain could delay (Whisper's own
    run time before it varies by a few hundred ms on a busy 2-core box and owes nothing to the brain)."""
    heard = next(e["t"] for e in events if e["kind"] == "transcript" and e["turn"] == turn)
    start = next(e["t"] for e in events if e["kind"] == "tts_started" and e["turn"] == turn)
    return float(start) - float(heard)  # type: ignore[arg-type]


@pytest.mark.parametrize("analyst_s", [2.5, 40.0])
def test_the_mouth_never_waits_for_the_brain_but_the_next_turn_waits_at_the_barrier(
    tmp_path: Path, broker: Broker, llm: ScriptedServer, analyst_s: float
) -> None:
    wav = spoken_wav(["Turn on the kitchen light.", "Lights off."], tmp_path / "in.wav", gap_s=0.9)
    runs = {}
    for name, brain in (
        ("without", "  enabled: false\n"),
        ("with", "  model: brain\n  barrier_timeout_s: 3\n"),
    ):
        folder = tmp_path / name
        folder.mkdir()
        llm.push(*[Text(ANALYSIS, first_delay_s=analyst_s)] * 2, model="brain")
        # the replies turning a device on or off synthesized before ready, in both runs: the time
        # measured is the brain's alone, not whether piper finished saying it ahead
        extra = f"llm:\n  base_url: {llm.base_url}\nbrain:\n{brain}tts:\n  rehearse: familiar\n"
        config = write_config(folder, broker.port, extra)
        events = folder / "events.jsonl"
        result = subprocess.run(
            voiced(
                config,
                "run",
                "--input",
                str(wav),
                "--output",
                str(folder / "out.wav"),
                "--events",
                str(events),
            ),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert result.returncode == 0, result.stderr[-3000:]
        runs[name] = events_of(events)
    # The first reply is no later with a slow brain than with none (within noise).
    assert _after_asr(runs["with"], 1) < _after_asr(runs["without"], 1) + 0.15
    waits = [e for e in runs["with"] if e["kind"] == "barrier_wait" and e["turn"] == 2]
    assert len(waits) == 1
    fillers = [e for e in runs["with"] if e["kind"] == "agent_text" and e["text"] == "One moment."]
    assert [e["turn"] for e in fillers] == [2]
    if analyst_s < 3:
        assert waits[0]["timed_out"] is False and waits[0]["waited_s"] > 0.1
    else:
        assert waits[0]["timed_out"] is True and 2.9 < waits[0]["waited_s"] < 4.0  # type: ignore[operator]
    # Either way the second turn is answered.
    assert any(e["kind"] == "tts_started" and e["turn"] == 2 for e in runs["with"])
    assert not any(e["kind"] == "barrier_wait" for e in runs["without"])


def test_a_spoken_interview_writes_scenes_the_vibe_agent_then_uses(tmp_path: Path, broker: Broker) -> None:
    config = write_config(tmp_path, broker.port)
    wav = spoken_wav(
        [
            "Let's set up my home.",
            "The kitchen and the living room.",
            "I get up at seven and go to bed at eleven.",
            "I like lavender, but not peppermint.",
            "Jazz and classical.",
            "Warm and dim in the evening.",
            "Help me relax.",
        ],
        tmp_path / "in.wav",
    )
    with SimulatedHome(config, broker.port) as home:
        result = home.run(wav, tmp_path / "out.wav")
        published = home.published()
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    for line in (
        "[MASTER] Let's set up your home.",
        "[MASTER] Which rooms should I look after?",
        "[MASTER] When do you usually get up, and when do you go to bed?",
        "[MASTER] I'm putting your scenes together.",
        "[MASTER] I've set up 4 scenes for you: morning, evening, relax and good night, "
        "with lavender and jazz.",
        "[MASTER] Time to relax.",
    ):
        assert line in out, out
    scenes = (tmp_path / "scenes.yaml").read_text()
    assert "lavender" in scenes and "peppermint" not in scenes
    warm_dim = {"state": "ON", "brightness": 76, "color_temp": 454}
    for expected in (
        ("zigbee2mqtt/living_room_light/set", warm_dim),
        ("zigbee2mqtt/kitchen_light/set", warm_dim),
        ("zigbee2mqtt/diffuser/set", {"state": "ON", "scent": "lavender", "intensity": 35}),
        ("voiced/music/set", {"action": "play", "genre": "jazz", "volume": 30}),
    ):
        assert expected in published, (published, out)
    shown = json.loads(subprocess.run(voiced(config, "state"), capture_output=True, text=True).stdout)
    assert shown["status"] == "Completed" and shown["scenes_file"].endswith("scenes.yaml")
    assert shown["user_profile"]["rooms"] == ["kitchen", "living room"]
