"""Bad config and device files: exit status 2 and a message naming the file and the field."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.pulse import PulseServer
from voiced.cli import load_all
from voiced.config import load_config
from voiced.errors import ConfigError


def check_config(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "voiced", "check-config", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=path.parent,
    )


def project_copy(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "devices", tmp_path / "devices")
    shutil.copy(REPO / "config.yaml", tmp_path / "config.yaml")
    return tmp_path / "config.yaml"


def test_default_config_is_valid() -> None:
    result = check_config(REPO / "config.yaml")
    assert result.returncode == 0, result.stderr
    assert "5 devices" in result.stdout


@pytest.mark.parametrize(
    ("yaml_text", "expected"),
    [
        ("vad:\n  hangover_ms: 10\n", "vad.hangover_ms"),
        ("vad:\n  aggressiveness: 7\n", "vad.aggressiveness"),
        ("mqtt:\n  port: http\n", "mqtt.port"),
        ("mqtt:\n  prot: 1883\n", "mqtt.prot"),
        ("audio:\n  echo: sometimes\n", "audio.echo"),
        ("agent:\n  kind: gpt\n", "agent.kind"),
        ("devices_dir: nowhere\n", "devices_dir: "),
        ("vad:\n  frame_ms: 30\nvad:\n  hangover_ms: 300\n", "key 'vad' appears more than once"),
        ("asr:\n  compute_type: float128\n", "asr.compute_type"),
        ("audio:\n  sample_rate: 16000\n", "audio.sample_rate"),
        ("vad: [1, 2\n", "not valid YAML"),
        ("- just\n- a list\n", "expected a mapping"),
        ("mqtt:\n  password: hunter2\n", "VOICED_MQTT_PASSWORD"),
    ],
)
def test_bad_config_exits_2_naming_the_field(tmp_path: Path, yaml_text: str, expected: str) -> None:
    config = project_copy(tmp_path)
    config.write_text(yaml_text)
    result = check_config(config)
    assert result.returncode == 2
    assert str(config) in result.stderr
    assert expected in result.stderr


def test_missing_config_file_exits_2(tmp_path: Path) -> None:
    result = check_config(tmp_path / "absent.yaml")
    assert result.returncode == 2
    assert "absent.yaml: file not found" in result.stderr


@pytest.mark.parametrize(
    ("file", "yaml_text", "expected"),
    [
        ("kitchen_light.yaml", "kind: light\nname: kitchen_light\ncommand_topic: a/set\n", "state_topic"),
        ("lamp.yaml", "kind: lamp\nname: lamp\ncommand_topic: a/set\nstate_topic: a\n", "kind"),
        (
            "bad.yaml",
            "kind: light\nname: bad\ncommand_topic: zigbee2mqtt/#\nstate_topic: zigbee2mqtt/bad\n",
            "command_topic",
        ),
        (
            "dim.yaml",
            "kind: light\nname: dim\ncommand_topic: d/set\nstate_topic: d\nbrightness_max: 999\n",
            "brightness_max",
        ),
        (
            "dup.yaml",
            "kind: light\nname: kitchen_light\ncommand_topic: d/set\nstate_topic: d\n",
            "name: device 'kitchen_light' is already declared in",
        ),
        (
            "same_topic.yaml",
            "kind: light\nname: other\ncommand_topic: zigbee2mqtt/kitchen_light/set\nstate_topic: o\n",
            "command_topic: 'zigbee2mqtt/kitchen_light/set' is already used by",
        ),
        (
            "warm.yaml",
            "kind: light\nname: warm\ncommand_topic: w/set\nstate_topic: w\n"
            "color_temp_min: 600\ncolor_temp_max: 500\n",
            "color_temp_min (600) is above color_temp_max (500)",
        ),
        ("lamp.yml", "kind: lamp\nname: lamp\ncommand_topic: l/set\nstate_topic: l\n", "kind: must be"),
        ("latin1.yaml", b"name: caf\xe9\n", "not UTF-8 text"),
    ],
)
def test_bad_device_file_exits_2_naming_file_and_field(
    tmp_path: Path, file: str, yaml_text: str | bytes, expected: str
) -> None:
    config = project_copy(tmp_path)
    target = tmp_path / "devices" / file
    if isinstance(yaml_text, bytes):
        target.write_bytes(yaml_text)
    else:
        target.write_text(yaml_text)
    result = check_config(config)
    assert result.returncode == 2
    assert expected in result.stderr
    assert file in result.stderr


def test_config_that_is_a_directory_exits_2(tmp_path: Path) -> None:
    (tmp_path / "conf.yaml").mkdir()
    result = check_config(tmp_path / "conf.yaml")
    assert result.returncode == 2
    assert "is a directory" in result.stderr


def test_models_that_cannot_be_found_fail_check_config(tmp_path: Path) -> None:
    config = project_copy(tmp_path)
    config.write_text("tts:\n  voice: en_GB-nobody-low\n")
    result = check_config(config)
    assert result.returncode == 2
    assert "tts.voice" in result.stderr and "en_GB-nobody-low" in result.stderr


def test_empty_devices_dir_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "devices").mkdir()
    told = r"no device files .*; write one file per device \(docs/devices.md\)"
    with pytest.raises(ConfigError, match=told):
        load_all(_write(tmp_path, "devices_dir: devices\n"), {})


def test_password_comes_from_the_environment(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, "mqtt:\n  username: home\n"), {"VOICED_MQTT_PASSWORD": "s3cret"})
    assert config.mqtt.username == "home"
    assert config.mqtt.password == "s3cret"
    assert "s3cret" not in config.model_dump_json()


def test_relative_paths_resolve_against_the_config_file(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, "devices_dir: my-devices\n"), {})
    assert config.devices_dir == tmp_path / "my-devices"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return path


def test_an_error_about_the_whole_config_never_shows_the_password_from_the_environment(
    tmp_path: Path,
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("agent:\n  kind: llm\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path, {"VOICED_MQTT_PASSWORD": "hunter2"})
    assert "llm.base_url is not set" in str(caught.value) and "hunter2" not in str(caught.value)


@pytest.mark.parametrize("command", [["check-config"], ["run", "--text", "-"]])
def test_a_misspelt_key_or_choice_names_the_closest_valid_ones(tmp_path: Path, command: list[str]) -> None:
    config = project_copy(tmp_path)
    config.write_text("mqtt:\n  hots: broker.lan\nbrain:\n  state_fil: s.json\nagent:\n  kind: hybird\n")
    result = subprocess.run(
        [sys.executable, "-m", "voiced", *command, "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2, result.stderr
    assert f"{config}: invalid configuration" in result.stderr
    expected = [
        "mqtt.hots: Extra inputs are not permitted (got 'broker.lan'); did you mean 'host'?",
        "brain.state_fil: Extra inputs are not permitted (got 's.json'); did you mean 'state_file'?",
        "agent.kind: Input should be 'auto', 'local', 'llm' or 'hybrid' (got 'hybird')"
        "; did you mean 'hybrid'?",
    ]
    for line in expected:
        assert line in result.stderr, result.stderr


def test_a_key_far_from_any_lists_the_keys_there_and_device_files_are_matched_by_kind(tmp_path: Path) -> None:
    config = project_copy(tmp_path)
    config.write_text("vad:\n  zzzz: 1\n")
    result = check_config(config)
    far = "vad.zzzz: Extra inputs are not permitted (got 1); the keys here are "
    assert far in result.stderr, result.stderr
    assert "aggressiveness" in result.stderr and "hangover_ms" in result.stderr
    config.write_text("")
    (tmp_path / "devices" / "zz.yaml").write_text(
        "kind: diffuser\nname: zz\ncommand_topic: zz/set\nstate_topic: zz\nalias: [x]\n"
    )
    result = check_config(config)
    assert result.returncode == 2
    alias = "zz.yaml: invalid configuration\n  alias: Extra inputs are not permitted (got ['x'])"
    assert f"{alias}; did you mean 'aliases'?" in result.stderr, result.stderr


def test_a_zigbee2mqtt_friendly_name_as_a_name_is_answered_with_the_name_that_fits(tmp_path: Path) -> None:
    """A new user's first device file often names the light as Zigbee2MQTT shows it."""
    (tmp_path / "devices").mkdir()
    config = _write(tmp_path, "devices_dir: devices\n")
    topics = "command_topic: zigbee2mqtt/Hall Light/set\nstate_topic: zigbee2mqtt/Hall Light\n"
    light = "kind: light\nname: {name}\n" + topics
    (tmp_path / "devices" / "hall.yaml").write_text(light.format(name="Hall Light"))
    result = check_config(config)
    assert result.returncode == 2
    assert "name: String should match pattern" in result.stderr, result.stderr
    assert "(got 'Hall Light'); did you mean 'hall_light'?" in result.stderr, result.stderr
    (tmp_path / "devices" / "hall.yaml").write_text(light.format(name="hall_light"))
    result = check_config(config)
    assert result.returncode == 0, result.stderr
    assert ": OK (1 device from " in result.stdout, result.stdout


def test_check_audio_needs_no_config_or_device_files(tmp_path: Path, pulse: PulseServer) -> None:
    """From an empty folder (no config.yaml, no devices/) it checks the default devices, as `run` would."""
    empty = tmp_path / "empty"
    empty.mkdir()
    result = subprocess.run(
        [sys.executable, "-m", "voiced", "check-audio"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=empty,
        env={**pulse.env(), "PYTHONPATH": str(REPO)},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "microphone: ok" in result.stdout, result.stdout
    # `run` from there still needs device files, and says where they are looked for and how to set it
    run = subprocess.run(
        [sys.executable, "-m", "voiced", "run", "--text", "-"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=empty,
        stdin=subprocess.DEVNULL,
        env={**pulse.env(), "PYTHONPATH": str(REPO)},
    )
    assert run.returncode == 2
    assert f"devices_dir: {empty / 'devices'} not found; set devices_dir in the config file" in run.stderr


def test_check_audio_without_a_microphone_says_the_ways_out(tmp_path: Path, pulse: PulseServer) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("audio:\n  input_device: no such microphone\n")
    result = subprocess.run(
        [sys.executable, "-m", "voiced", "check-audio", "-c", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={**pulse.env(), "PYTHONPATH": str(REPO)},
    )
    assert result.returncode == 3, result.stdout + result.stderr
    assert "microphone: not available" in result.stdout
    assert "speaker:    ok" in result.stdout
    assert "audio.input_device" in result.stderr and "--text" in result.stderr
