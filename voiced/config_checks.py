"""Checks behind config fields that pydantic's types do not express: hosts, MQTT strings, paths.

Each catches, at check-config time, a value that would otherwise only fail once `run` has started.
"""

from __future__ import annotations

import ipaddress
import os
import unicodedata
from pathlib import Path

from voiced.errors import ConfigError, short_repr

MQTT_MAX_BYTES = 65_535  # MQTT strings carry a 16-bit length
# Control, format (bidi overrides, zero-width), surrogate, private-use, unassigned and space characters.
_NOT_IN_HOSTS = {"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp"}


def not_a_bool(value: object) -> object:
    """`true` for a number is a slip, not 1."""
    if isinstance(value, bool):
        raise ValueError(f"expected a number, got {str(value).lower()}")
    return value


def check_host(value: str) -> str:
    if not value:
        raise ValueError("must be a host name or an IP address, not empty")
    for ch in value:
        if unicodedata.category(ch) in _NOT_IN_HOSTS:
            raise ValueError(f"holds {short_repr(ch)}, which no host name has")
    try:
        ipaddress.ip_address(value)
        return value
    except ValueError:
        pass
    try:
        value.encode("idna")
    except UnicodeError as exc:
        raise ValueError(f"is not a valid host name ({exc})") from None
    return value


def check_mqtt_text(value: str) -> str:
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise ValueError("holds a lone surrogate, which is not text MQTT can send") from None
    if size > MQTT_MAX_BYTES:
        raise ValueError(f"is {size} bytes in UTF-8; MQTT allows at most {MQTT_MAX_BYTES}")
    if "\x00" in value:
        raise ValueError("holds a NUL character, which MQTT does not allow")
    return value


def check_path_text(value: object) -> object:
    if isinstance(value, str):
        if "\x00" in value:
            raise ValueError("a path cannot hold a NUL byte")
        try:
            os.fsencode(value)
        except UnicodeEncodeError:
            raise ValueError("a path cannot hold a lone surrogate") from None
        if len(value) > 4096:
            raise ValueError(f"a path of {len(value)} characters (at most 4096)")
        if any(len(os.fsencode(part)) > 255 for part in value.split("/")):
            raise ValueError("a path with a name over 255 bytes, which no file system here accepts")
    return value


def check_state_file(state_file: Path, origin: object) -> None:
    """The state file is opened after the models load: say now, not a minute later, if it cannot be."""
    where = f"{origin}: brain.state_file"
    if not state_file.parent.is_dir():
        raise ConfigError(f"{where}: folder {state_file.parent} does not exist")
    if state_file.exists():
        if not state_file.is_file():
            raise ConfigError(f"{where}: {state_file} exists and is not a regular file")
        if not os.access(state_file, os.R_OK | os.W_OK):
            raise ConfigError(f"{where}: {state_file} is not readable and writable by this user")
    elif not os.access(state_file.parent, os.W_OK | os.X_OK):
        raise ConfigError(f"{where}: folder {state_file.parent} is not writable by this user")
