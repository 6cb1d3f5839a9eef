"""Seeded hostile MQTT payloads for the `payloads` reliability family (bench/reliability/payloads.py).

The families the issue lists: oversize, deep nesting (valid and unclosed), NaN/Infinity and huge
numbers, wrong types, unicode and control characters, invalid UTF-8, empty, scalars, and some valid.
"""

from __future__ import annotations

import json
import random
from typing import Any

FIELDS = ("state", "brightness", "color_temp", "color", "scent", "intensity", "genre", "volume", "tracks")
WEIRD_TEXT = ("\n", "\r\n", "\x1b[2J", "\u202e", "\u2028", "\x00", "\ud800", "🙂", "online", "ON", "$SYS/#")


def _value(rng: random.Random) -> Any:
    return rng.choice(
        [
            None,
            True,
            -1,
            rng.randint(-(10**30), 10**30),
            rng.random() * 1e300,
            "x" * rng.randint(0, 2000),
            rng.choice(WEIRD_TEXT) * rng.randint(1, 20),
            [rng.randint(0, 9)] * rng.randint(0, 50),
            {"hex": rng.choice(WEIRD_TEXT)},
            {},
        ]
    )


def hostile(rng: random.Random) -> bytes:
    """One hostile payload; the families the issue lists, weighted towards the cheap ones."""
    family = rng.choices(
        ["oversize", "deep", "unclosed", "constant", "types", "unicode", "bytes", "empty", "scalar", "valid"],
        weights=[1, 8, 6, 10, 20, 15, 8, 4, 6, 8],
    )[0]
    if family == "oversize":
        return b'{"state":"ON","x":"' + b"a" * rng.randint(65_536, 1_048_576) + b'"}'
    if family == "deep":
        depth = rng.randint(33, 5000)
        if rng.random() < 0.5:
            return b"[" * depth + b"]" * depth
        return b'{"a":' * depth + b"1" + b"}" * depth
    if family == "unclosed":
        return rng.choice([b"[", b"{", b'{"a":[']) * rng.randint(100, 100_000)
    if family == "constant":
        number = rng.choice(["NaN", "Infinity", "-Infinity", "1e999", "-1e999", "9" * rng.randint(300, 5000)])
        return f'{{"state":"ON","{rng.choice(FIELDS)}":{number}}}'.encode()
    if family == "types":
        body = {rng.choice(FIELDS): _value(rng) for _ in range(rng.randint(1, 4))}
        return json.dumps(body).encode()
    if family == "unicode":
        key = rng.choice(FIELDS + WEIRD_TEXT)
        text = "".join(chr(rng.randint(0, 0x10FFFF)) for _ in range(rng.randint(1, 40)))
        return json.dumps({key: text, rng.choice(WEIRD_TEXT): rng.choice(WEIRD_TEXT)}).encode()
    if family == "bytes":
        return bytes(rng.randint(0, 255) for _ in range(rng.randint(1, 300)))
    if family == "empty":
        return rng.choice([b"", b" ", b"\n", b"\x00"])
    if family == "scalar":
        return rng.choice([b"null", b"[]", b"1", b'"online"', b"true", b'"offline"', b"online", b"{}"])
    return json.dumps(
        rng.choice([{"state": "ON", "brightness": rng.randint(0, 254)}, {"state": "online"}, {"volume": 30}])
    ).encode()
