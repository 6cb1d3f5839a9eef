"""Errors that name what is wrong and where."""

from __future__ import annotations

import reprlib
from pathlib import Path

from pydantic import ValidationError


class ConfigError(Exception):
    """A configuration or device file is invalid; the message names file and field."""


class DeviceError(Exception):
    """A command names an unknown device or a value the device does not accept."""


class BrokerUnavailable(Exception):
    """The MQTT broker cannot be reached; commands are refused, not queued."""


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother, _REPR.maxlong = 3, 80, 80, 40
_REPR.maxlist = _REPR.maxdict = _REPR.maxtuple = _REPR.maxset = 6


def short_repr(value: object) -> str:
    """A value as shown in an error: bounded, so a 1 MB string or a deep structure stays one line."""
    try:
        return _REPR.repr(value)
    except (ValueError, RecursionError):  # ints past Python's digit limit, self-referencing values
        return f"<{type(value).__name__}>"


def describe_validation_error(path: Path | str, error: ValidationError, *, tagged: bool = False) -> str:
    """One line per problem: the field path, what was expected, what was given.

    `tagged`: the model is a union chosen by `kind`; pydantic puts the kind first in the path.
    """
    lines = [f"{path}: invalid configuration"]
    for item in error.errors():
        loc = list(item["loc"])[1:] if tagged and item["loc"] else list(item["loc"])
        where = ".".join(str(part)[:80] for part in loc) or "(top level)"
        got = item.get("input")
        # A whole section or file as "what was given" says nothing new, and may hold a secret
        # from the environment (mqtt.password): values are shown, mappings are not.
        shown = "" if item["type"] == "missing" or isinstance(got, dict) else f" (got {short_repr(got)})"
        message = item["msg"][:300]
        if item["type"] in ("union_tag_invalid", "union_tag_not_found"):
            where = "kind"
            expected = (item.get("ctx") or {}).get("expected_tags", "")
            got = got.get("kind") if isinstance(got, dict) else got
            message, shown = f"must be one of {expected}", f" (got {short_repr(got)})"
        lines.append(f"  {where}: {message}{shown}")
    return "\n".join(lines)
