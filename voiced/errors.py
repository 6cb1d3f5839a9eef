"""Errors that name what is wrong and where."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError


class ConfigError(Exception):
    """A configuration or device file is invalid; the message names file and field."""


class DeviceError(Exception):
    """A command names an unknown device or a value the device does not accept."""


class BrokerUnavailable(Exception):
    """The MQTT broker cannot be reached; commands are refused, not queued."""


def describe_validation_error(path: Path | str, error: ValidationError) -> str:
    lines = [f"{path}: invalid configuration"]
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or "(top level)"
        got = item.get("input")
        shown = "" if item["type"] == "missing" else f" (got {got!r})"
        lines.append(f"  {where}: {item['msg']}{shown}")
    return "\n".join(lines)
