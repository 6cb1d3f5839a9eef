"""Seeded hostile HTTP requests for the `http` reliability family (bench/reliability/http.py).

Bodies: deep nesting, huge numbers, lone surrogates and control characters in every string field
and key, wrong types, huge strings, invalid UTF-8, empty, non-objects, not JSON, oversize. Query
strings and path parameters: percent-encoded surrogates, overlong UTF-8, NUL, '²', huge numbers.
"""

from __future__ import annotations

import json
import random
from typing import Any
from urllib.parse import quote

# (method, path, fields it reads and their JSON kinds); {task} is a real task's id.
ENDPOINTS: list[tuple[str, str, dict[str, type]]] = [
    ("POST", "/api/say", {"text": str}),
    ("POST", "/api/vibe", {"request": str}),
    ("POST", "/api/mute", {"muted": bool}),
    ("POST", "/api/tasks", {"requirement": str}),
    ("POST", "/api/tasks/{task}/confirm", {"approved": bool, "user_notes": str}),
    ("POST", "/api/tasks/{task}/cancel", {}),
    ("DELETE", "/api/vibe", {}),
]
WORDS = ("turn on the kitchen light", "something calm", "play some jazz", "dim the bedroom light", "")
WEIRD = (
    "\ud800",
    "\udfff",
    "\udbff\udc00\udc00",
    "\x00",
    "\x1b[2J",
    "\x7f",
    "\x85",
    "\u202e",
    "\u2028",
    "\r\n",
)
QUERY_WEIRD = (
    "%ED%A0%80",
    "%C0%AF",
    "%00",
    "%C2%B2",
    "%FF",
    "%0D%0A",
    "9" * 5000,
    "-1",
    "1e9",
    "%",
    "%E2%80%AE",
)


BODY_FAMILIES = {  # name: weight
    "deep": 10,
    "huge_number": 10,
    "surrogates": 20,
    "wrong_types": 12,
    "huge_string": 6,
    "invalid_utf8": 8,
    "empty": 4,
    "non_object": 6,
    "not_json": 8,
    "oversize": 3,
}


def weird_text(rng: random.Random) -> str:
    """Words with lone surrogates and control characters mixed in."""
    parts = [rng.choice(WORDS)] + [rng.choice(WEIRD) for _ in range(rng.randint(1, 6))]
    rng.shuffle(parts)
    return " ".join(parts)


def _wrong(kind: type, rng: random.Random) -> Any:
    choices: list[Any] = [None, 0, -1, 1.5, "yes", [], {}, [weird_text(rng)], {"a": weird_text(rng)}, True]
    return rng.choice([value for value in choices if type(value) is not kind])


def _right(kind: type, rng: random.Random) -> Any:
    return rng.random() < 0.5 if kind is bool else weird_text(rng)


def _ascii_json(value: Any) -> bytes:
    return json.dumps(value).encode()  # a lone surrogate as "\ud800": legal JSON


def body(fields: dict[str, type], rng: random.Random) -> tuple[str, bytes]:
    """(the family's name, a hostile body for an endpoint reading `fields`)."""
    family = rng.choices(list(BODY_FAMILIES), weights=list(BODY_FAMILIES.values()))[0]
    names = list(fields) or ["text"]
    if family == "deep":
        depth = rng.randint(33, 8000)
        if rng.random() < 0.5:
            return family, b"[" * depth + b"]" * depth
        return family, f'{{"{names[0]}":'.encode() + b'{"a":' * min(depth, 1500) + b"1" + b"}" * (
            min(depth, 1500) + 1
        )
    if family == "huge_number":
        number = rng.choice(
            ["9" * rng.randint(41, 5000), "1" + "0" * rng.randint(40, 4000) + ".5", "-" + "7" * 4300]
        )
        return family, f'{{"{rng.choice(names)}": {number}}}'.encode()
    if family == "surrogates":
        data = {name: _right(kind, rng) for name, kind in fields.items()}
        data.update({weird_text(rng): weird_text(rng) for _ in range(rng.randint(0, 3))})
        return family, _ascii_json(data)
    if family == "wrong_types":
        return family, _ascii_json({name: _wrong(kind, rng) for name, kind in fields.items()} or {"x": None})
    if family == "huge_string":
        return family, _ascii_json({name: "a " * rng.randint(1001, 12_000) for name in names})
    if family == "invalid_utf8":
        junk = bytes(rng.randint(0x80, 0xFF) for _ in range(rng.randint(1, 20)))
        return family, f'{{"{names[0]}": "'.encode() + junk + b'"}'
    if family == "empty":
        return family, rng.choice([b"", b" ", b"\r\n\t"])
    if family == "non_object":
        return family, _ascii_json(rng.choice([[weird_text(rng)], weird_text(rng), 5, None, True, 1.5]))
    if family == "not_json":
        text = rng.choice(
            ['{"text": NaN}', '{"text": Infinity}', "{", '{"text": "a"', "\ufeff{}", "{'a': 1}", "x"]
        )
        encoding = rng.choice(["utf-8", "utf-8", "utf-16", "utf-32"])
        return family, text.encode(encoding)
    return family, _ascii_json({names[0]: "x" * rng.randint(16_385, 200_000)})  # oversize


def query(rng: random.Random, task: str) -> tuple[str, dict[str, str]]:
    """(a GET path with a hostile query string or path parameter, headers to send with it)."""
    weird = rng.choice(QUERY_WEIRD) + rng.choice(
        ["", "1", quote(weird_text(rng).encode("utf-8", "surrogatepass"))]
    )
    headers: dict[str, str] = {}
    where = rng.choice(["turns", "events", "task", "task_part", "last_event_id"])
    if where == "turns":
        return f"/api/turns?limit={weird}", headers
    if where == "events":
        return f"/api/events?last_id={rng.choice(['', task + '-'])}{weird}", headers
    if where == "last_event_id":
        headers["Last-Event-ID"] = rng.choice(["²", "x-²", "0-" + "9" * 5000, "\xff\xfe", "-"])
        return "/api/events", headers
    if where == "task":
        return f"/api/tasks/{weird}", headers
    return f"/api/tasks/{weird}/{rng.choice(['plan', 'progress'])}", headers


RAW_REQUESTS = [  # below httpx: bytes no client library would send
    b"GET /api/tasks/\xff\xfe HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /api/turns?limit=\xed\xa0\x80 HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Weird: \xff\x00\r\n\r\n",
    b"GET /api/events HTTP/1.1\r\nHost: x\r\nLast-Event-ID: \xb2\r\n\r\n",
    b"POST /api/say HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
    b"POST /api/say HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n",
    b"POST /api/say HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",  # a TLS hello
    b"GET / HTTP/9.9\r\n\r\n",
    b"\r\n\r\n\r\n",
]
