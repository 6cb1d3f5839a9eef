"""The device registry: devices/*.yaml, validated, devices discovered on the broker, and the gate
every command passes.

The YAML devices are fixed at start; discovered ones come and go while the daemon runs (see
voiced/devices/discovery.py), so every read takes a snapshot under a lock, and `version` counts
the changes. A YAML device always wins over a discovered one of the same name or topics."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from voiced.devices.model import (
    Device,
    DeviceCommand,
    DiffuserDevice,
    DiffuserSet,
    LightDevice,
    LightSet,
    MusicDevice,
    MusicSet,
    SwitchDevice,
    SwitchSet,
)
from voiced.errors import ConfigError, DeviceError, describe_validation_error
from voiced.topics import check_topic
from voiced.yamlfile import load_yaml

_DEVICE_ADAPTER: TypeAdapter[Device] = TypeAdapter(Device)
_MQTT_MAX_BYTES = 65_535  # a topic carries a 16-bit length


def load_areas(path: Path) -> dict[str, str]:
    """devices/areas.yaml: `name: room` lines for discovered devices whose payload has no room."""
    if not path.exists():
        return {}
    data = load_yaml(path)
    if data is None:
        return {}
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.items()
    ):
        raise ConfigError(f"{path}: expected lines of `device name: room` (text: text)")
    return {k.strip().lower(): v.strip().lower() for k, v in data.items()}


def _clamp(value: int | None, low: int, high: int) -> int | None:
    return None if value is None else max(low, min(high, value))


class DeviceRegistry:
    def __init__(self, devices: list[Device], sources: list[str] | None = None) -> None:
        self._devices: dict[str, Device] = {}
        name_source: dict[str, str] = {}
        topic_source: dict[str, str] = {}
        names = sources or [f"device #{i + 1}" for i in range(len(devices))]
        for device, source in zip(devices, names, strict=True):
            if device.name in name_source:
                first = name_source[device.name]
                raise ConfigError(f"{source}: name: device {device.name!r} is already declared in {first}")
            for field in ("command_topic", "state_topic", "availability_topic"):
                topic = getattr(device, field)
                if topic is None:
                    continue
                if topic in topic_source:
                    other = topic_source[topic]
                    raise ConfigError(f"{source}: {field}: {topic!r} is already used by {other}")
                topic_source[topic] = source
            self._devices[device.name] = device
            name_source[device.name] = source
        self._sources = name_source  # where each device came from: its file, or its discovery topic
        self._declared = frozenset(self._devices)
        self._lock = threading.RLock()
        self.version = 0  # bumped by every discovered change
        self.areas: dict[str, str] = {}  # devices/areas.yaml: a discovered device's name → its room

    @classmethod
    def load(cls, directory: Path) -> DeviceRegistry:
        if not directory.is_dir():
            what = "is not a directory" if directory.exists() else "not found"
            hint = "set devices_dir in the config file to your folder of device files (docs/devices.md)"
            raise ConfigError(f"devices_dir: {directory} {what}; {hint}")
        files = sorted(p for p in [*directory.glob("*.yaml"), *directory.glob("*.yml")] if p.stem != "areas")
        if not files:
            hint = "write one file per device (docs/devices.md); with devices.discovery, one is still needed"
            raise ConfigError(f"devices_dir: no device files (*.yaml) in {directory}; {hint}")
        devices = []
        for path in files:
            try:
                device = _DEVICE_ADAPTER.validate_python(load_yaml(path))
            except ValidationError as exc:
                raise ConfigError(describe_validation_error(path, exc, tagged=True, schema=Device)) from None
            for field in ("command_topic", "state_topic", "availability_topic"):
                topic = getattr(device, field)
                if topic is not None and len(topic.encode("utf-8")) > _MQTT_MAX_BYTES:
                    raise ConfigError(f"{path}: {field}: longer than MQTT's {_MQTT_MAX_BYTES} bytes")
            devices.append(device)
        registry = cls(devices, [str(path) for path in files])
        registry.areas = load_areas(directory / "areas.yaml")
        return registry

    def __iter__(self) -> Iterator[Device]:
        with self._lock:
            return iter(list(self._devices.values()))

    def __len__(self) -> int:
        return len(self._devices)

    def get(self, name: str) -> Device:
        with self._lock:
            found = self._devices.get(name)
            if found is not None:
                return found
            known = ", ".join(sorted(self._devices))
        raise DeviceError(f"unknown device {name!r} (declared: {known})")

    def source_of(self, name: str) -> str:
        with self._lock:
            return self._sources.get(name, "?")

    def discovered(self, name: str) -> bool:
        return name not in self._declared

    def put(self, device: Device, source: str) -> bool:
        """Add or update a discovered device; False (nothing changed) if it is the same as before.
        Raises ValueError naming the clash when a YAML device (or another source) has its name or
        topics."""
        with self._lock:
            owner = self._sources.get(device.name)
            if device.name in self._declared:
                raise ValueError(f"{device.name!r} is declared in {owner}, which wins")
            if owner is not None and owner != source:
                raise ValueError(f"{device.name!r} is already discovered from {owner}")
            for other in self._devices.values():
                if other.name == device.name:
                    continue
                for field in ("command_topic", "state_topic", "availability_topic"):
                    topic = getattr(device, field)
                    if topic is not None and topic in (
                        other.command_topic,
                        other.state_topic,
                        other.availability_topic,
                    ):
                        raise ValueError(
                            f"{field} {topic!r} is already used by {other.name} ({self._sources[other.name]})"
                        )
            if self._devices.get(device.name) == device:
                return False
            self._devices[device.name] = device
            self._sources[device.name] = source
            self.version += 1
            return True

    def remove(self, name: str, source: str) -> bool:
        """Remove a discovered device, if `source` is what added it."""
        with self._lock:
            if name in self._declared or self._sources.get(name) != source:
                return False
            del self._devices[name]
            del self._sources[name]
            self.version += 1
            return True

    def by_kind(self, kind: str) -> list[Device]:
        return [d for d in self if d.kind == kind]

    def by_state_topic(self, topic: str) -> Device | None:
        for device in self:
            if device.state_topic == topic:
                return device
        return None

    def by_availability_topic(self, topic: str) -> Device | None:
        for device in self:
            if device.availability_topic == topic:
                return device
        return None

    def prepare(self, command: DeviceCommand) -> tuple[str, DeviceCommand]:
        """Check a command against its device's declaration; clamp values to the declared range.

        Returns the command topic and the command as it will be sent.
        """
        device = self.get(command.device)
        if isinstance(command, LightSet) and isinstance(device, LightDevice):
            for field, feature, what in (
                ("brightness", "brightness", "be dimmed"),
                ("color_temp", "color_temp", "change its white"),
                ("color_hex", "color", "change colour"),
            ):
                if getattr(command, field) is not None and feature not in device.features:
                    raise DeviceError(f"{device.name.replace('_', ' ')} cannot {what}")
            command = command.model_copy(
                update={
                    "brightness": _clamp(command.brightness, 0, device.brightness_max),
                    "color_temp": _clamp(command.color_temp, device.color_temp_min, device.color_temp_max),
                }
            )
        elif isinstance(command, DiffuserSet) and isinstance(device, DiffuserDevice):
            if command.scent is not None and command.scent not in device.scents:
                raise DeviceError(
                    f"{device.name}: unknown scent {command.scent!r} (has: {', '.join(device.scents)})"
                )
            command = command.model_copy(
                update={"intensity": _clamp(command.intensity, 0, device.intensity_max)}
            )
        elif isinstance(command, MusicSet) and isinstance(device, MusicDevice):
            if command.genre is not None and device.genres and command.genre not in device.genres:
                raise DeviceError(
                    f"{device.name}: unknown genre {command.genre!r} (has: {', '.join(device.genres)})"
                )
            command = command.model_copy(update={"volume": _clamp(command.volume, 0, device.volume_max)})
        elif isinstance(command, SwitchSet) and isinstance(device, SwitchDevice):
            pass
        else:
            raise DeviceError(
                f"{device.name} is a {device.kind}; it does not take a {type(command).__name__} command"
            )
        if not command.payload():
            raise DeviceError(f"{device.name}: empty command")
        return check_topic(device.command_topic), command
