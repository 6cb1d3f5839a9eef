"""End to end: a spoken scene request → `voiced run -v` (real-time input) → the vibe agent drives the home."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REPO, Broker
from tests.home import SimulatedHome
from tests.plans_home import TypedDaemon, plan_config
from tests.speech_fixtures import spoken_wav
from tests.test_e2e_wav import speech_seconds

pytestmark = pytest.mark.e2e


def test_a_spoken_scene_runs_in_the_background_and_the_next_turn_hears_of_it(
    tmp_path: Path, broker: Broker
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(f"devices_dir: {REPO / 'devices'}\nweb:\n  port: 0\nmqtt:\n  port: {broker.port}\n")
    wav = spoken_wav(["Something for a dinner party.", "Turn on the bedroom light."], tmp_path / "in.wav")
    events = tmp_path / "events.jsonl"
    with SimulatedHome(config, broker.port, "--delay-ms", "300") as home:
        result = home.run(wav, tmp_path / "out.wav", "--events", str(events))
        published = home.published()
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    for line in (
        "[MASTER] Setting the table mood.",
        "[VIBE] vibe-1 started for 'a dinner party'",
        '[VIBE] vibe-1 set_light {"device":"living_room_light","state":"on","brightness_pct":45,'
        '"color_temp":"warm"} ...',
        "[VIBE] vibe-1 set_scent -> ok: diffuser confirmed",
        "[VIBE] vibe-1 narrate -> ok: spoke 'Dinner is served, in a manner of speaking.'",
        "[VIBE] vibe-1 complete (dinner, 5 steps)",
        "[MASTER] Dinner is served, in a manner of speaking.",
        "[MASTER] By the way, the dinner scene is ready.",
        "[MASTER] Turning on the bedroom light.",
    ):
        assert line in out, out
    assert sorted(published, key=str) == sorted(
        [
            ("zigbee2mqtt/living_room_light/set", {"state": "ON", "brightness": 114, "color_temp": 454}),
            ("zigbee2mqtt/kitchen_light/set", {"state": "ON", "brightness": 178, "color_temp": 454}),
            ("zigbee2mqtt/diffuser/set", {"state": "ON", "scent": "sandalwood", "intensity": 30}),
            ("voiced/music/set", {"action": "play", "genre": "jazz", "volume": 35}),
            ("zigbee2mqtt/bedroom_light/set", {"state": "ON"}),
        ],
        key=str,
    ), out
    kinds = [json.loads(line)["kind"] for line in events.read_text().splitlines()]
    for kind in ("vibe_started", "vibe_tool_start", "vibe_tool_end", "vibe_complete"):
        assert kind in kinds
    # The scene's commands are all out before the second turn's.
    sent = [json.loads(line) for line in events.read_text().splitlines() if '"command_sent"' in line]
    assert [e["task_id"] for e in sent] == ["vibe-1"] * 4 + [""]
    assert speech_seconds(tmp_path / "out.wav") > 4.0


@pytest.mark.e2e
def test_kill_9_mid_scene_then_restart_resumes_it_and_sends_each_step_once(
    tmp_path: Path, broker: Broker
) -> None:
    """`voiced run --text -` starts a scene on slow devices (2 s to report), is killed -9 once the
    light's first step is confirmed, and restarted on the same state directory: the scene resumes,
    sends only what was not done, and completes; the broker sees every step exactly once."""
    presets = tmp_path / "scenes.yaml"
    presets.write_text(
        "relax:\n"
        "  keywords: [relax]\n"
        "  steps:\n"
        '    - {tool: set_light, device: living_room_light, state: "on", brightness_pct: 30}\n'
        "    - {tool: set_light, device: living_room_light, brightness_pct: 60}\n"
        "    - {tool: set_light, device: living_room_light, brightness_pct: 90}\n"
        '    - {tool: set_scent, device: diffuser, state: "on", scent: lavender, intensity: 40}\n'
    )
    config = plan_config(tmp_path, broker.port, vibe={"presets_file": str(presets), "confirm_timeout_s": 8.0})
    light = "zigbee2mqtt/living_room_light/set"
    with SimulatedHome(config, broker.port, "--delay-ms", "2000") as home:
        first = TypedDaemon(config, tmp_path, "first")
        try:
            first.say("Help me relax.")
            first.wait_for("vibe_tool_end", lambda e: e["task_id"] == "vibe-1" and e["tool"] == "set_light")
        finally:
            first.kill9()  # the light's second step on its way, its third not sent
        before = home.published()
        assert (light, {"state": "ON", "brightness": 76}) in before, before
        assert (light, {"brightness": 229}) not in before, before

        second = TypedDaemon(config, tmp_path, "second")
        try:
            resumed = second.wait_for("vibe_resumed", timeout=30)
            assert resumed["task_id"] == "vibe-1" and resumed["steps_done"] >= 1, resumed
            second.wait_for("vibe_complete", lambda e: e["task_id"] == "vibe-1", timeout=30)
            assert not any(e["kind"] == "vibe_error" for e in second.events()), second.report()
        finally:
            assert second.stop() == 0
        after = home.published()
    assert "[VIBE] vibe-1 resumed after a restart for 'relax'" in "".join(second.output), second.report()
    assert sorted(before + after, key=str) == sorted(
        [
            (light, {"state": "ON", "brightness": 76}),
            (light, {"brightness": 152}),
            (light, {"brightness": 229}),
            ("zigbee2mqtt/diffuser/set", {"state": "ON", "scent": "lavender", "intensity": 40}),
        ],
        key=str,
    ), (before, after)
