"""The `llm` reliability family's cases: broken endpoints, hostile tool calls, damaged state files."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path
from typing import Any

from tests.openai_server import Call, Hang, Paced, Step, Text, Tools
from voiced.brain.store import StateStore

MB = 1024 * 1024

_SENTENCE = "Sure thing."


def reply_stalls() -> list[tuple[str, Step, str | None]]:
    """(name, step, the sentence heard before the apology, if any)."""
    line = "The light is on and the music is playing softly now."
    return [
        ("hang", Hang(), None),
        ("stall-after-one-token", Text(line, stall_after=1), None),
        ("stall-after-a-sentence", Text(f"{_SENTENCE} {line}", stall_after=4), _SENTENCE),
        ("token-every-2s", Text(line, token_delay_s=2.0), None),
        ("byte-every-2s", Paced(Text(line), byte_delay_s=2.0), None),
        ("headers-then-silence", Paced(Text(line), limit_bytes=300, then="stall"), None),
        ("drop-mid-stream", Text(line, cut_after=3), None),
        ("drop-mid-headers", Paced(Text(line), limit_bytes=40), None),
    ]


def planner_stalls() -> list[tuple[str, Step]]:
    scene = Tools((Call("narrate", '{"text": "Relax."}'),))
    return [
        ("hang", Hang()),
        ("byte-every-2s", Paced(scene, byte_delay_s=2.0)),
        ("headers-then-silence", Paced(scene, limit_bytes=200, then="stall")),
        ("drop-mid-body", Paced(scene, limit_bytes=250)),
    ]


_NAMES = [
    "bedroom_light",
    "living_room_light",
    "diffuser",
    "music",
    "/",
    "#",
    "+",
    "$SYS/x",
    "../x",
    "bed\x00room",
    "bedroom_l\u0456ght",
    "bedroom light\nFORGED",
    "\u202ebedroom",
    "",
    " ",
]
_VALUES: list[Any] = [
    "²",
    "٣٠٠",
    "on",
    "off",
    "warm",
    "NaN",
    -1,
    0,
    1e308,
    -0.0,
    3.5,
    True,
    None,
    [],
    {},
    "\x1b[31m",
    "a" * 300,
    "\ud800",
    10**40,
    "#FF00GG",
    "red",
]
_FIELDS = [
    "device",
    "state",
    "brightness_pct",
    "color",
    "color_temp",
    "scent",
    "intensity",
    "duration_min",
    "action",
    "genre",
    "volume",
    "tracks",
    "text",
    "extra",
]
_TOOLS = [
    "set_light",
    "set_scent",
    "play_music",
    "narrate",
    "get_environment",
    "set_light\nFORGED",
    "x" * 200,
]


def hostile_arguments(rng: random.Random) -> tuple[str, str]:
    """One tool call a hostile or broken model might send: (name, raw JSON arguments)."""
    tool = rng.choice(_TOOLS[:4]) if rng.random() < 0.9 else rng.choice(_TOOLS)
    fields: dict[str, Any] = {"device": rng.choice(_NAMES)}
    for _ in range(rng.randint(0, 3)):
        fields[rng.choice(_FIELDS)] = rng.choice(_VALUES)
    text = json.dumps(fields)
    kind = rng.randrange(10)
    if kind == 0:  # a number of thousands of digits, past or under Python's limit
        return tool, text[
            :-1
        ] + f', "{rng.choice(_FIELDS[2:])}": {"9" * rng.choice([800, 4000, 5000, 20000])}}}'
    if kind == 1:  # nesting, up to 100,000 deep
        depth = rng.choice([50, 900, 3000, 100_000])
        return tool, '{"device": ' + "[" * depth + "]" * depth + "}"
    if kind == 2:  # big, sometimes 10 MB
        size = rng.choice([9000, 100_000, MB, 10 * MB]) if rng.random() < 0.3 else 9000
        return tool, json.dumps({**fields, "device": "x" * size})
    if kind == 3:  # broken JSON: cut, or bytes
        return tool, text[: rng.randrange(len(text))] if rng.random() < 0.5 else rng.randbytes(40).decode(
            "latin-1"
        )
    if kind == 4:
        return tool, rng.choice(["[]", "null", "1", '"x"', "", "{}", '{"device": Infinity}', "1e99999"])
    return tool, text


def state_damage(rng: random.Random, path: Path) -> str:
    """Damage a real state file at `path` one way; returns the way's name."""
    ways = ["truncated", "page", "header", "schema", "view", "junk-body", "zero", "text", "directory"]
    way = rng.choice(ways)
    if way in ("truncated", "page", "header", "junk-body"):
        store = StateStore(path)
        state = store.open_session(new=False)
        for number in range(rng.randint(5, 40)):
            store.save(state.model_copy(update={"session_id": f"s{number}", "compressed_memory": "x" * 2000}))
        with sqlite3.connect(path) as db:
            db.execute("pragma wal_checkpoint(truncate)")
            if way == "junk-body":
                body = rng.choice(["{", "[" * 5000, "9" * 5000, "null", '{"session_id": 1}'])
                db.execute("update states set body = ?", (body,))
        data = bytearray(path.read_bytes())
        if way == "truncated":
            data = data[: rng.randrange(1, len(data))]
        elif way == "page":
            page = rng.randrange(1, max(2, len(data) // 4096))
            data[page * 4096 : (page + 1) * 4096] = rng.randbytes(4096)
        elif way == "header":
            data[: rng.randint(1, 100)] = rng.randbytes(100)[: rng.randint(1, 100)]
        path.write_bytes(bytes(data))
    elif way in ("schema", "view"):
        with sqlite3.connect(path) as db:
            if way == "schema":
                db.execute("create table states (id integer primary key, payload blob)")
            else:
                db.execute("create view states as select 'a' as session_id, '{}' as body, 'x' as updated")
    elif way == "zero":
        path.write_bytes(b"")
    elif way == "text":
        path.write_bytes(rng.randbytes(rng.randint(1, 20_000)))
    else:
        path.mkdir()
    return way
