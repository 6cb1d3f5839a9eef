"""The device registry: devices/*.yaml, validated, and the gate every command passes."""

from __future__ import annotations

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
)
from voiced.errors import ConfigError, DeviceError, describe_validation_error
from voiced.topics import check_topic
from voiced.yamlfile import load_yaml

_DEVICE_ADAPTER: TypeAdapter[Device] = TypeAdapter(Device)
_MQTT_MAX_BYTES = 65_535  # a topic carries a 16-bit length


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

    @classmethod
    def load(cls, directory: Path) -> DeviceRegistry:
        if not directory.is_dir():
            what = "is not a directory" if directory.exists() else "not found"
            raise ConfigError(f"devices_dir: {directory} {what}")
        files = sorted([*directory.glob("*.yaml"), *directory.glob("*.yml")])
        if not files:
            raise ConfigError(f"devices_dir: no device files (*.yaml) in {directory}")
        devices = []
        for path in files:
            try:
                device = _DEVICE_ADAPTER.validate_python(load_yaml(path))
            except ValidationError as exc:
                raise ConfigError(describe_validation_error(path, exc, tagged=True)) from None
            for field in ("command_topic", "state_topic", "availability_topic"):
                topic = getattr(device, field)
                if topic is not None and len(topic.encode("utf-8")) > _MQTT_MAX_BYTES:
                    raise ConfigError(f"{path}: {field}: longer than MQTT's {_MQTT_MAX_BYTES} bytes")
            devices.append(device)
        return cls(devices, [str(path) for path in files])

    def __iter__(self) -> Iterator[Device]:
        return iter(self._devices.values())

    def __len__(self) -> int:
        return len(self._devices)

    def get(self, name: str) -> Device:
        try:
            return self._devices[name]
        except KeyError:
            known = ", ".join(sorted(self._devices))
            raise DeviceError(f"unknown device {name!r} (declared: {known})") from None

    def by_kind(self, kind: str) -> list[Device]:
        return [d for d in self._devices.values() if d.kind == kind]

    def by_state_topic(self, topic: str) -> Device | None:
        for device in self._devices.values():
            if device.state_topic == topic:
                return device
        return None

    def by_availability_topic(self, topic: str) -> Device | None:
        for device in self._devices.values():
            if device.availability_topic == topic:
                return device
        return None

    def prepare(self, command: DeviceCommand) -> tuple[str, DeviceCommand]:
        """Check a command against its device's declaration; clamp values to the declared range.

        Returns the command topic and the command as it will be sent.
        """
        device = self.get(command.device)
        if isinstance(command, LightSet) and isinstance(device, LightDevice):
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
        else:
            raise DeviceError(
                f"{device.name} is a {device.kind}; it does not take a {type(command).__name__} command"
            )
        if not command.payload():
            raise DeviceError(f"{device.name}: empty command")
        return check_topic(device.command_topic), command
