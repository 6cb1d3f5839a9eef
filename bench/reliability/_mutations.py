"""Seeded mutations of a YAML file: structure (keys, values, nesting, aliases) and raw bytes.

Each mutation returns the new file content (bytes), or a special kind the caller makes on disk
(a FIFO, a directory, a symlink), and the field it aimed at when there is one.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import yaml

DEEP = "__voiced_deep__"  # a scalar replaced, after dumping, by text the serializer cannot write
INT = "tag:yaml.org,2002:int"
STR = "tag:yaml.org,2002:str"


@dataclass(frozen=True)
class Mutation:
    kind: str
    content: bytes | None  # None: a special file (kind names it)
    field: str | None = None  # the key or dotted path the mutation aimed at


HOSTILE_STRINGS = [
    "",
    "\x00",
    "a\x00b",
    "\u202e",
    "\ud800",
    "\udcff",
    "²",
    "¹²³",
    "\uff46\uff55\uff4c\uff4c",  # fullwidth "full"
    "\U0001f4a1",
    "x" * 70_000,
    "é" * 40_000,
    "../../etc/passwd",
    "$SYS/#",
    "+/#",
    "a\nb\tc",
    " ",
    "on",
    "1e999",
]
HOSTILE_SCALARS = [
    (INT, "9" * 5000),
    (INT, "-" + "9" * 60),
    (INT, "0x" + "f" * 80),
    ("tag:yaml.org,2002:bool", "true"),
    ("tag:yaml.org,2002:null", "null"),
    ("tag:yaml.org,2002:float", ".nan"),
    ("tag:yaml.org,2002:float", "-.inf"),
    ("tag:yaml.org,2002:float", "1.0e308"),
    (INT, "-1"),
    (INT, "0"),
    (INT, "65536"),
    ("tag:yaml.org,2002:timestamp", "2001-12-14"),
    ("tag:yaml.org,2002:binary", "AAAA"),
]


def billion_laughs(levels: int) -> str:
    parts = ["&l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    parts += [f"&l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "[" + ", ".join(parts) + "]"


def deep(depth: int, rng: random.Random) -> str:
    if rng.random() < 0.5:
        return "[" * depth + "]" * depth
    return "{a: " * depth + "1" + "}" * depth


def _hostile_node(rng: random.Random) -> tuple[yaml.Node, str]:
    choice = rng.randrange(6)
    if choice == 0:
        return yaml.ScalarNode(STR, rng.choice(HOSTILE_STRINGS)), "string"
    if choice == 1:
        tag, value = rng.choice(HOSTILE_SCALARS)
        return yaml.ScalarNode(tag, value), "scalar"
    if choice == 2:
        return yaml.SequenceNode("tag:yaml.org,2002:seq", [yaml.ScalarNode(STR, "x")]), "list"
    if choice == 3:
        pair = (yaml.ScalarNode(STR, "x"), yaml.ScalarNode(INT, "1"))
        return yaml.MappingNode("tag:yaml.org,2002:map", [pair]), "map"
    if choice == 4:
        return yaml.ScalarNode(STR, DEEP), "deep"
    return yaml.ScalarNode(STR, DEEP + "laughs"), "laughs"


def _places(node: yaml.Node, path: tuple[str, ...]) -> list[tuple[yaml.Node, int, tuple[str, ...]]]:
    """Every (collection, index, path) whose child can be replaced."""
    found: list[tuple[yaml.Node, int, tuple[str, ...]]] = []
    if isinstance(node, yaml.MappingNode):
        for index, (key, value) in enumerate(node.value):
            here = (*path, str(key.value))
            found.append((node, index, here))
            found.extend(_places(value, here))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            here = (*path, f"[{index}]")
            found.append((node, index, here))
            found.extend(_places(item, here))
    return found


def _dump(root: yaml.Node, rng: random.Random) -> bytes:
    text = yaml.serialize(root, allow_unicode=rng.random() < 0.5, width=4096)
    depth = rng.choice([40, 63, 65, 200, 5000, 100_000])
    text = text.replace(f"'{DEEP}laughs'", billion_laughs(rng.choice([3, 6, 9, 12])))
    text = text.replace(f"{DEEP}laughs", billion_laughs(rng.choice([3, 6, 9, 12])))
    text = text.replace(DEEP, deep(depth, rng))
    return text.encode("utf-8", "surrogatepass")


def structural(text: str, rng: random.Random) -> Mutation:
    root = yaml.compose(text)
    places = _places(root, ())
    parent, index, path = rng.choice(places)
    field = path[-1]
    op = rng.randrange(6)
    if isinstance(parent, yaml.MappingNode):
        key, value = parent.value[index]
        if op == 0:  # a list or a map (or another odd scalar) as the key
            odd, kind = _hostile_node(rng)
            parent.value[index] = (odd, value)
            return Mutation(f"key-{kind}", _dump(root, rng), None)
        if op == 1:  # the same key twice
            parent.value.append((yaml.ScalarNode(STR, key.value), value))
            return Mutation("duplicate-key", _dump(root, rng), field)
        if op == 2:
            del parent.value[index]
            return Mutation("deleted", _dump(root, rng), None)
        if op == 3:  # an alias to another node of the file
            other = rng.choice(places)
            target = other[0].value[other[1]]
            parent.value[index] = (key, target[1] if isinstance(target, tuple) else target)
            return Mutation("alias", _dump(root, rng), field)
        odd, kind = _hostile_node(rng)
        parent.value[index] = (key, odd)
        return Mutation(f"value-{kind}", _dump(root, rng), field)
    odd, kind = _hostile_node(rng)
    parent.value[index] = odd
    return Mutation(f"item-{kind}", _dump(root, rng), field)


def raw(data: bytes, rng: random.Random) -> Mutation:
    op = rng.randrange(10)
    if op == 0:
        return Mutation("truncated", data[: rng.randrange(len(data))])
    if op == 1:
        out = bytearray(data)
        for _ in range(rng.randint(1, 12)):
            out[rng.randrange(len(out))] = rng.randrange(256)
        return Mutation("bytes-flipped", bytes(out))
    if op == 2:
        at = rng.randrange(len(data))
        return Mutation("bytes-inserted", data[:at] + rng.randbytes(rng.randint(1, 64)) + data[at:])
    if op == 3:
        return Mutation("random-bytes", rng.randbytes(rng.randint(0, 4096)))
    if op == 4:
        at = rng.randrange(len(data))
        return Mutation("nul", data[:at] + b"\x00" + data[at:])
    if op == 5:
        return Mutation("oversize", data + b"#" + b"x" * 1_100_000 + b"\n")
    if op == 6:
        return Mutation("tabs", data.replace(b"  ", b"\t"))
    if op == 7:
        return Mutation("documents", data + b"\n---\n" + data)
    if op == 8:
        return Mutation("bom-and-crlf", b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n"))
    return Mutation("empty", rng.choice([b"", b"\n", b"~\n", b"[]\n", b"0\n"]))


SPECIALS = ["fifo", "directory", "symlink-dev-zero", "symlink-loop", "dangling-symlink"]


def special(rng: random.Random) -> Mutation:
    return Mutation(rng.choice(SPECIALS), None)


def set_field(text: str, dotted: str, value: Any) -> bytes:
    """The config with one field (a dotted path) set to a value, other keys kept."""
    data = yaml.safe_load(text)
    *parents, last = dotted.split(".")
    where = data
    for part in parents:
        if not isinstance(where.get(part), dict):
            where[part] = {}
        where = where[part]
    where[last] = value
    return yaml.safe_dump(data, allow_unicode=False, width=1_000_000).encode("utf-8")
