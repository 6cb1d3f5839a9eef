"""`satellites:` in config.yaml: each one's name, address and room checked, and named when wrong."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO
from voiced.cli import check_all
from voiced.config import Config, SatelliteConfig
from voiced.errors import ConfigError

KITCHEN = {"name": "kitchen_satellite", "uri": "tcp://192.168.1.40:10700", "room": "kitchen"}


def write(tmp_path: Path, satellites: object, **extra: object) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"devices_dir": str(REPO / "devices"), "satellites": satellites, **extra}))
    return path


def test_satellites_are_read_with_their_rooms(tmp_path: Path) -> None:
    bedroom = {"name": "bedroom-pi", "uri": "tcp://bedroom.local:10700", "room": "bedroom"}
    config, _registry = check_all(write(tmp_path, [KITCHEN, bedroom]), {}, models=False)
    assert [s.name for s in config.satellites] == ["kitchen_satellite", "bedroom-pi"]
    assert config.satellites[1].host_port == ("bedroom.local", 10700)
    assert config.satellites[0].room == "kitchen"
    assert Config().satellites == ()  # none unless configured
    assert config.satellites[0].echo == "half_duplex"  # deaf while its reply plays, unless told


def test_a_satellite_may_hear_over_its_reply(tmp_path: Path) -> None:
    config, _registry = check_all(write(tmp_path, [{**KITCHEN, "echo": "cancel"}]), {}, models=False)
    assert config.satellites[0].echo == "cancel"


@pytest.mark.parametrize(
    ("satellites", "named"),
    [
        ([{**KITCHEN, "uri": "http://192.168.1.40:10700"}], "satellites.0.uri"),
        ([{**KITCHEN, "uri": "tcp://192.168.1.40"}], "is not tcp://host:port"),
        ([{**KITCHEN, "uri": "tcp://:10700"}], "satellites.0.uri"),
        ([{**KITCHEN, "name": "Kitchen Satellite"}], "satellites.0.name"),
        ([{"name": "kitchen_satellite", "uri": "tcp://h:1"}], "satellites.0.room: Field required"),
        ([KITCHEN, {**KITCHEN, "uri": "tcp://other:10700"}], "two are named 'kitchen_satellite'"),
        ([KITCHEN, {**KITCHEN, "name": "second"}], "'second' has the address of another"),
        ([{**KITCHEN, "microphone": "hw:1"}], "satellites.0.microphone: Extra inputs are not permitted"),
        ([{**KITCHEN, "echo": "off"}], "satellites.0.echo: Input should be 'half_duplex' or 'cancel'"),
        ({"name": "kitchen"}, "satellites: Input should be a valid"),
    ],
)
def test_a_wrong_satellite_is_named(tmp_path: Path, satellites: object, named: str) -> None:
    with pytest.raises(ConfigError) as error:
        check_all(write(tmp_path, satellites), {}, models=False)
    assert named in str(error.value)
    assert str(tmp_path / "config.yaml") in str(error.value)


def test_a_satellite_in_a_room_no_device_is_in_is_refused_naming_the_rooms(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as error:
        check_all(write(tmp_path, [{**KITCHEN, "room": "attic"}]), {}, models=False)
    message = str(error.value)
    assert "satellites.0.room: 'attic' is no room of the devices" in message
    assert "bedroom, kitchen, living room" in message


def test_with_discovery_a_room_may_come_with_the_devices_found_later(tmp_path: Path) -> None:
    path = write(tmp_path, [{**KITCHEN, "room": "attic"}], devices={"discovery": ["zigbee2mqtt"]})
    config, _registry = check_all(path, {}, models=False)
    assert config.satellites[0].room == "attic"


def test_every_satellite_key_says_what_it_means() -> None:
    assert SatelliteConfig.__doc__
    assert all(field.description for field in SatelliteConfig.model_fields.values())
