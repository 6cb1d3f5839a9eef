"""Pure parts of the vibe agent and the device safety: plain asserts, no broker."""

from __future__ import annotations

from pathlib import Path

import pytest

from voiced.cli import main
from voiced.config import SafetyConfig
from voiced.devices.confirm import expected_state, mismatches
from voiced.devices.gateway import parse_availability
from voiced.devices.model import DiffuserSet, LightSet, MusicSet
from voiced.devices.registry import DeviceRegistry
from voiced.devices.safety import RateLimiter, SafetyGate
from voiced.errors import ConfigError, DeviceError
from voiced.vibe.messages import Failed, StepOutcome, Success
from voiced.vibe.plan import VibeStep
from voiced.vibe.presets import PresetPlanner

DEVICES = Path(__file__).parent.parent / "devices"
REGISTRY = DeviceRegistry.load(DEVICES)


def test_expected_state_and_mismatches() -> None:
    light = LightSet(device="kitchen_light", state="ON", brightness=100, color_hex="#ff8800")
    want = expected_state(light)
    assert want == {"state": "ON", "brightness": 100, "color": {"hex": "#FF8800"}}
    assert mismatches({"state": "ON", "brightness": 101, "color": {"hex": "#ff8800", "x": 0.5}}, want) == []
    assert mismatches({"state": "OFF", "brightness": 100}, want) == [
        "state='OFF' (want 'ON')",
        "color=None (want {'hex': '#FF8800'})",
    ]
    assert mismatches(None, want) == ["no state reported"]
    music = expected_state(MusicSet(device="music", action="play", tracks=("a", "b")))
    assert music == {"state": "playing", "tracks": ["a", "b"]}
    assert mismatches({"state": "paused", "tracks": ["a", "b"]}, music) == ["state='paused' (want 'playing')"]
    assert mismatches({"state": True}, {"state": 1}) == ["state=True (want 1)"]


def test_availability_payloads() -> None:
    assert parse_availability(b'{"state":"online"}') is True
    assert parse_availability(b'{"state":"offline"}') is False
    assert parse_availability(b"online") is True  # Zigbee2MQTT's legacy form
    assert parse_availability(b"{}") is None
    assert parse_availability(b"\xff") is None


def test_rate_limiter_is_a_sliding_window() -> None:
    limiter = RateLimiter(2, 10.0)
    assert limiter.allow(0.0) and limiter.allow(1.0)
    assert not limiter.allow(9.9)
    assert limiter.allow(10.0)  # the first one left the window
    assert not limiter.allow(10.5)


def test_safety_gate_caps_scent_and_stops_floods() -> None:
    gate = SafetyGate(
        SafetyConfig(scent_max_intensity=60, scent_max_minutes=45, max_commands=2, per_seconds=5)
    )
    command, notes = gate.check(DiffuserSet(device="diffuser", intensity=90, duration_min=100), 0.0)
    assert command == DiffuserSet(device="diffuser", intensity=60, duration_min=45)
    assert notes == [
        "intensity 90 capped to the safety limit 60",
        "duration 100 min capped to the safety limit 45",
    ]
    light = LightSet(device="kitchen_light", state="ON")
    assert gate.check(light, 1.0) == (light, [])
    with pytest.raises(DeviceError, match="kitchen_light: rate limit reached"):
        gate.check(light, 2.0)


def test_presets_pick_by_keywords_and_say_when_the_default_stood_in() -> None:
    presets = PresetPlanner(None, REGISTRY, "relax")
    assert presets.plan("a dinner party").name == "dinner"
    assert presets.plan("a rainy afternoon in Paris").name == "cozy"
    assert presets.plan("good_night").name == "good_night"
    # "night" alone is no bedtime: a movie night turns nothing off ("good night" still is one)
    assert presets.plan("movie night").name == "movie" and presets.plan("movie night").note == ""
    assert presets.plan("it's a good night for sleep").name == "good_night"
    fallback = presets.plan("something vaguely Martian")
    assert (
        fallback.name == "relax"
        and fallback.note == "no preset matches 'something vaguely Martian'; used 'relax'"
    )
    relax = presets.plan("relax")
    assert relax.steps == (
        VibeStep(
            tool="set_light",
            input={"device": "living_room_light", "state": "on", "brightness_pct": 30, "color_temp": "warm"},
        ),
        VibeStep(
            tool="set_scent",
            input={"device": "diffuser", "state": "on", "scent": "lavender", "intensity": 40},
        ),
        VibeStep(
            tool="play_music", input={"device": "music", "action": "play", "genre": "ambient", "volume": 30}
        ),
    )
    lights = [s.input["device"] for s in presets.plan("good night").steps if s.tool == "set_light"]
    assert lights == ["bedroom_light", "kitchen_light", "living_room_light"]  # device "*"


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("calm:\n  steps:\n    - {tool: set_lamp}\n", "calm.steps[0]: tool: must be one of set_light"),
        (
            "calm:\n  steps:\n    - {tool: set_light, device: garage, state: 'on'}\n",
            "calm.steps[0]: unknown light device 'garage'",
        ),
        (
            "calm:\n  steps:\n    - {tool: set_scent, scent: garlic}\n",
            "calm.steps[0]: unknown scent 'garlic' for diffuser",
        ),
        ("calm:\n  steps: []\n", "calm.steps: List should have at least 1 item"),
        ("calm:\n  steps:\n    - {tool: narrate}\n", "calm.steps[0]: invalid arguments for narrate: text"),
    ],
)
def test_bad_presets_name_the_file_preset_and_step(tmp_path: Path, text: str, error: str) -> None:
    path = tmp_path / "scenes.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        PresetPlanner(path, REGISTRY, "calm")
    assert str(path) in str(caught.value)
    assert error in str(caught.value).replace("\n  ", " ")


def test_check_config_refuses_a_bad_preset_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "scenes.yaml").write_text("calm:\n  steps:\n    - {tool: set_light, device: attic}\n")
    config = tmp_path / "config.yaml"
    config.write_text(f"devices_dir: {DEVICES}\nvibe:\n  presets_file: scenes.yaml\n  default_preset: calm\n")
    assert main(["check-config", str(config)]) == 2
    assert "scenes.yaml: calm.steps[0]: unknown light device 'attic'" in capsys.readouterr().err


def test_what_the_next_turn_hears_about_a_scene() -> None:
    presets = PresetPlanner(None, REGISTRY, "relax")
    plan = presets.plan("relax")
    ok = StepOutcome("set_light", "living_room_light", True, "living room light confirmed")
    bad = StepOutcome("play_music", "music", False, "music did not confirm within 5 s")
    assert (
        Success("vibe-1", "relax", plan=plan, steps=(ok,)).spoken() == "By the way, the relax scene is ready."
    )
    failed = Failed("vibe-2", "relax", error="music did not confirm within 5 s", steps=(ok, bad))
    assert failed.spoken() == (
        "Sorry, the scene is only partly set: the music couldn't be set. The living room light did change."
    )
    assert failed.for_model() == (
        "The scene 'relax' (vibe-2) failed: music did not confirm within 5 s. Applied: living_room_light."
    )
