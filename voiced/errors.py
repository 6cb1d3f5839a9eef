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


def describe_validation_error(path: Path | str, error: ValidationError, *, tagged: bool = False) -> str:
    """One line per problem: the field path, what was expected, what was given.

    `tagged`: the model is a union chosen by `kind`; pydantic puts the kind first in the path.
    """
    lines = [f"{path}: invalid configuration"]
    for item in error.errors():
        loc = list(item["loc"])[1:] if tagged and item["loc"] else list(item["loc"])
        where = ".".join(str(part) for part in loc) or "(top level)"
        got = item.get("input")
        shown = "" if item["type"] == "missing" else f" (got {got!r})"
        message = item["msg"]
        if item["type"] in ("union_tag_invalid", "union_tag_not_found"):
            where = "kind"
            expected = (item.get("ctx") or {}).get("expected_tags", "")
            got = got.get("kind") if isinstance(got, dict) else got
            message, shown = f"must be one of {expected}", f" (got {got!r})"
        lines.append(f"  {where}: {message}{shown}")
    return "\n".join(lines)
