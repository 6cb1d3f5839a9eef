"""The one reader for the YAML files users give us (config, devices, presets).

Strict and bounded: errors name the file and the line; a key given twice is an error, not a
silent override; size, nesting, alias expansion, key types and integer length are limited
before anything is built, so a hostile file costs milliseconds and kilobytes, never a traceback.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import yaml

from voiced.errors import ConfigError, short_repr

MAX_BYTES = 1_000_000  # a config is a few KB; 1 MB is generous and still cheap to parse
MAX_DEPTH = 64  # our deepest file nests about 5 levels
MAX_NODES = 100_000  # nodes after alias expansion: "billion laughs" is refused before it is built
MAX_INT_DIGITS = 50  # no field needs more; Python refuses more than 4300 with a traceback


class _Refused(yaml.YAMLError):
    """A limit the file breaks; the message says which and where."""

    def __init__(self, message: str, mark: yaml.Mark | None = None) -> None:
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        super().__init__(f"{message}{where}")


class _StrictLoader(yaml.SafeLoader):
    def __init__(self, stream: str, name: str) -> None:
        super().__init__(stream)
        self.name = name  # marks in PyYAML's own messages name the file, not "<unicode string>"
        self._depth = 0

    def fetch_flow_collection_start(self, token_class: type) -> None:
        # The scanner looks ahead through every open bracket: stop "[[[[..." before it scans them all.
        if self.flow_level >= MAX_DEPTH:
            raise _Refused(f"nested deeper than {MAX_DEPTH} levels", self.get_mark())
        super().fetch_flow_collection_start(token_class)

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        # The composer recurses once per level: bound it before Python's own limit is hit.
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _Refused(f"nested deeper than {MAX_DEPTH} levels", self.peek_event().start_mark)
            return super().compose_node(parent, index)  # type: ignore[no-any-return]
        finally:
            self._depth -= 1


def _expanded_size(root: yaml.Node) -> int:
    """Nodes the document would have with every alias expanded; refuses cycles and blow-ups.

    Iterative (no recursion), memoised per node so a chain of aliases costs its length, not its expansion.
    """
    sizes: dict[int, int] = {}
    active: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            active.discard(key)
            total = 1 + sum(sizes[id(child)] for child in _children(node))
            if total > MAX_NODES:
                raise _Refused(
                    f"expands to more than {MAX_NODES} values (aliases used as a 'billion laughs'?)",
                    node.start_mark,
                )
            sizes[key] = total
            continue
        if key in sizes:
            continue
        if key in active:
            raise _Refused("an alias refers to the node that contains it", node.start_mark)
        active.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)
    return sizes[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _mapping(loader: _StrictLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    loader.flatten_mapping(node)  # merge keys (<<) first, so they are checked like the others
    seen: set[Any] = set()
    for key_node, _value in node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            what = "a list" if isinstance(key_node, yaml.SequenceNode) else "a mapping"
            raise _Refused(f"a key must be a plain name, not {what}", key_node.start_mark)
        key = loader.construct_object(key_node)
        if key in seen:
            mark = key_node.start_mark
            raise _Refused(f"key {short_repr(key)} appears more than once", mark)
        seen.add(key)
    return loader.construct_mapping(node)


def _int(loader: _StrictLoader, node: yaml.ScalarNode) -> int:
    digits = sum(ch.isalnum() for ch in node.value)
    if digits > MAX_INT_DIGITS:
        raise _Refused(f"a number of {digits} digits (at most {MAX_INT_DIGITS})", node.start_mark)
    return loader.construct_yaml_int(node)


def _str(loader: _StrictLoader, node: yaml.ScalarNode) -> str:
    value = loader.construct_scalar(node)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        # "\ud800" escapes make strings no file, topic or JSON body can carry: refuse them here, once
        bad = short_repr(value[exc.start])
        message = f"a string holds a lone surrogate ({bad}), which is not text"
        raise _Refused(message, node.start_mark) from None
    return value


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)
_StrictLoader.add_constructor("tag:yaml.org,2002:str", _str)
_StrictLoader.add_constructor("tag:yaml.org,2002:int", _int)


def _read_text(path: Path) -> str:
    """The file's text; refuses FIFOs and devices without blocking on them, and anything too big."""
    if "\x00" in str(path):
        raise ConfigError(f"{short_repr(str(path))}: the path holds a NUL byte")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    except (OSError, ValueError) as exc:  # ValueError: a path the OS cannot encode (a lone surrogate)
        reason = getattr(exc, "strerror", None) or exc
        raise ConfigError(f"{short_repr(str(path))}: cannot open: {reason}") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise ConfigError(f"{path}: is a directory, expected a YAML file")
        if not stat.S_ISREG(mode):
            raise ConfigError(f"{path}: not a regular file (a FIFO, socket or device); expected a YAML file")
        data = os.read(fd, MAX_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_BYTES // 1000} KB; a config file is a few KB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from None


def load_yaml(path: Path) -> Any:
    """The file's one YAML document; ConfigError naming the file (and line) for anything wrong."""
    text = _read_text(path)
    try:
        loader = _StrictLoader(text, str(path))
        try:
            root = loader.get_single_node()
            if root is None:
                return None
            _expanded_size(root)
            return loader.construct_document(root)
        finally:
            loader.dispose()
    except OSError as exc:  # not expected after the read; kept so nothing escapes as a traceback
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {_bounded(str(exc))}") from None
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        # YAML values PyYAML's constructors choke on (odd timestamps, base64, ...)
        raise ConfigError(f"{path}: not valid YAML: {type(exc).__name__}: {_bounded(str(exc))}") from None


def _bounded(text: str, limit: int = 600) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"
