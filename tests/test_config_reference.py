"""The configuration and device-file references match the models, and config.yaml shows every key."""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args

import pytest
import yaml
from pydantic import BaseModel, TypeAdapter

from voiced import config_reference
from voiced.config import SECRET_ENV, Config
from voiced.devices.model import Device

ROOT = Path(__file__).resolve().parents[1]
SECRETS = {f"{section}.{key}" for section, key in SECRET_ENV.values()}


def test_the_committed_references_match_the_models() -> None:
    differ = config_reference.stale(ROOT)
    assert not differ, f"out of date: {', '.join(differ)}; regenerate with: {config_reference.REGENERATE}"


def test_a_reference_out_of_date_is_named_with_the_command_that_mends_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "docs").mkdir()
    assert config_reference.main(["--root", str(tmp_path)]) == 0
    assert config_reference.main(["--check", "--root", str(tmp_path)]) == 0
    written = (tmp_path / "docs/configuration.md").read_text()
    (tmp_path / "docs/configuration.md").write_text(
        written.replace("| `echo_tail_ms` | `200`", "| `echo_tail_ms` | `250`")
    )
    capsys.readouterr()
    assert config_reference.main(["--check", "--root", str(tmp_path)]) == 1
    complaint = capsys.readouterr().err
    assert "docs/configuration.md" in complaint and "docs/devices.md" not in complaint
    assert config_reference.REGENERATE in complaint
    assert config_reference.main(["--root", str(tmp_path)]) == 0  # writes it again
    assert config_reference.stale(tmp_path) == []


def test_a_row_says_the_default_the_limits_and_the_meaning() -> None:
    reference = config_reference.configuration_reference()
    assert (
        "| `echo_tail_ms` | `200` | whole number (50 to 2000) | echo length the canceller models" in reference
    )
    assert "| `word` | `null` | `okay_nabu`, `hey_jarvis`, `hey_mycroft`, `alexa` or `null` |" in reference
    assert "`VOICED_MQTT_PASSWORD` (refused in the file)" in reference
    devices = config_reference.device_file_reference()
    assert "| `name` | required | text (matching `^[a-z][a-z0-9_]*$`) |" in devices


def _models(model: type[BaseModel], prefix: str = "") -> list[tuple[str, type[BaseModel]]]:
    found = [(prefix.rstrip("."), model)]
    for key, field in model.model_fields.items():
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            found += _models(field.annotation, f"{prefix}{key}.")
    return found


def _device_kinds() -> list[type[BaseModel]]:
    union = get_args(Device)[0]
    return list(get_args(union))


MODELS = [*_models(Config), *((kind.__name__, kind) for kind in _device_kinds())]


@pytest.mark.parametrize(("where", "model"), MODELS, ids=[where or "top level" for where, _ in MODELS])
def test_every_key_and_section_says_what_it_means(where: str, model: type[BaseModel]) -> None:
    assert model.__doc__, f"{where or 'the top level'}: the section has no docstring"
    for key, field in model.model_fields.items():
        is_section = isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel)
        assert is_section or field.description, f"{where}.{key}: no Field(description=...)"


def _flatten(values: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[prefix + key] = value
    return flat


def test_config_yaml_shows_every_key_with_its_default() -> None:
    shown = _flatten(yaml.safe_load((ROOT / "config.yaml").read_text()))
    defaults = _flatten(Config().model_dump(mode="json"))  # secrets are excluded from a dump
    missing = sorted(set(defaults) - set(shown))
    assert not missing, f"config.yaml lacks {missing}"
    unknown = sorted(set(shown) - set(defaults))
    assert not unknown, f"config.yaml has keys no model declares, or secrets: {unknown}"
    differ = {key: (shown[key], defaults[key]) for key in defaults if shown[key] != defaults[key]}
    assert not differ, f"config.yaml's value differs from the model's default (shown, default): {differ}"
    assert not SECRETS & set(shown)


@pytest.mark.parametrize("kind", sorted(config_reference.EXAMPLES))
def test_the_reference_examples_are_valid_device_files(kind: str) -> None:
    device = TypeAdapter(Device).validate_python(yaml.safe_load(config_reference.EXAMPLES[kind]))
    assert device.kind == kind


def test_every_file_the_daemon_keeps_is_named_for_users(tmp_path: Path) -> None:
    """The six SQLite files (the brain's, the plans' and scenes' checkpoints and ledgers, the rehearsed
    replies), where load_config and the ledgers put them: each named in the install guide (with what
    deleting it forgets) and in the configuration reference."""
    from voiced.config import load_config
    from voiced.vibe.runner import ledger_path

    (tmp_path / "config.yaml").write_text("")
    config = load_config(tmp_path / "config.yaml", {})
    assert config.plans.checkpoint_file is not None and config.vibe.checkpoint_file is not None
    assert config.tts.rehearsal_file is not None
    kept = [
        config.brain.state_file,
        config.plans.checkpoint_file,
        ledger_path(config.plans.checkpoint_file),
        config.vibe.checkpoint_file,
        ledger_path(config.vibe.checkpoint_file),
        config.tts.rehearsal_file,
    ]
    assert {path.parent for path in kept} == {tmp_path}
    install = (ROOT / "docs/install.md").read_text()
    reference = (ROOT / "docs/configuration.md").read_text()
    for path in kept:
        assert f"`{path.name}`" in install, path.name
        assert path.name in reference, path.name
    assert "can be deleted safely with the service stopped" in install
