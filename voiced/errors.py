"""Errors that name what is wrong and where."""

from __future__ import annotations

import difflib
import re
import reprlib
import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError


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


def describe_validation_error(
    path: Path | str, error: ValidationError, *, tagged: bool = False, schema: object = None
) -> str:
    """One line per problem: the field path, what was expected, what was given, and for a
    misspelt key or choice the closest valid one(s).

    `tagged`: the model is a union chosen by `kind`; pydantic puts the kind first in the path.
    `schema`: the model (or annotation) validated, so an unknown key can be matched to known ones.
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
        lines.append(f"  {where}: {message}{shown}{_hint(item, schema)}")
    return "\n".join(lines)


def _hint(item: Any, schema: object) -> str:
    """'; did you mean ...?' for an unknown key or a choice that is near a valid one."""
    got = item.get("input")
    if item["type"] == "extra_forbidden" and schema is not None and item["loc"]:
        key = str(item["loc"][-1])
        known = sorted(_keys_at(schema, list(item["loc"])[:-1]))
        if not known:
            return ""
        close = difflib.get_close_matches(key, known, n=3, cutoff=0.6)
        if close:
            return f"; did you mean {_either(close)}?"
        return f"; the keys here are {', '.join(known)}" if len(known) <= 20 else ""
    if item["type"] in ("literal_error", "enum") and isinstance(got, str):
        choices = re.findall(r"'([^']*)'", str((item.get("ctx") or {}).get("expected", "")))
        close = difflib.get_close_matches(got, choices, n=2, cutoff=0.6)
        return f"; did you mean {_either(close)}?" if close else ""
    if item["type"] == "string_pattern_mismatch" and isinstance(got, str):
        # "Desk Lamp" for a name: the same words in lower case joined by _ often fit
        candidate = re.sub(r"[^a-z0-9]+", "_", got.lower()).strip("_")
        pattern = str((item.get("ctx") or {}).get("pattern", ""))
        try:
            fits = bool(candidate and pattern and re.fullmatch(pattern, candidate))
        except re.error:  # pydantic's (Rust) regex syntax that Python's re does not take
            fits = False
        if fits and candidate != got:
            return f"; did you mean {candidate!r}?"
    return ""


def _either(words: list[str]) -> str:
    quoted = [repr(word) for word in words]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def _models(annotation: object) -> list[type[BaseModel]]:
    """The models an annotation can hold: through Optional, unions, Annotated, tuples and lists."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _models(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType, tuple, list, dict):
        args = typing.get_args(annotation)
        return [model for arg in (args[-1:] if origin is dict else args) for model in _models(arg)]
    return []


def _keys_at(schema: object, loc: list[Any]) -> set[str]:
    """The keys a mapping at `loc` may have; a part that is no field is a list index or a union's tag."""
    models = _models(schema)
    for part in loc:
        if not isinstance(part, str):
            continue
        with_field = [model for model in models if part in model.model_fields]
        if with_field:
            models = [inner for model in with_field for inner in _models(model.model_fields[part].annotation)]
        else:  # a tagged union names the chosen member by its `kind`
            models = [model for model in models if _tag(model) == part] or models
    return {name for model in models for name in model.model_fields}


def _tag(model: type[BaseModel]) -> object:
    field = model.model_fields.get("kind")
    args = typing.get_args(field.annotation) if field is not None else ()
    return args[0] if len(args) == 1 else None
