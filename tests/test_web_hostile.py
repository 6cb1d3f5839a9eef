"""Hostile bodies on every POST endpoint of the real daemon (`voiced run --text -`, devices simulated
on a real broker), over real HTTP: never a 5xx, never a traceback, and the daemon still works."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from tests.conftest import Broker
from tests.home import SimulatedHome
from tests.plans_home import TypedDaemon, plan_config

SURROGATE = "\ud800"
CONTROLS = "\x00\x07\x1b\x7f\x85"  # each becomes U+FFFD
DEEP = "[" * 8000 + "]" * 8000  # under 16 KB
HUGE = "1" * 5000
SET = "zigbee2mqtt/{}/set"


def _post(daemon: TypedDaemon, path: str, raw: str | bytes) -> httpx.Response:
    """`raw` sent as it is: httpx's `json=` cannot encode a lone surrogate, JSON's \\ud800 can."""
    headers = {"content-type": "application/json"}
    return httpx.post(f"http://127.0.0.1:{daemon.port}{path}", content=raw, headers=headers, timeout=30)


def _json(value: object) -> str:
    return json.dumps(value)  # ASCII: a lone surrogate is written "\\ud800", legal JSON


def test_hostile_bodies_on_every_post_endpoint_are_4xx_and_the_daemon_still_works(
    tmp_path: Path, broker: Broker
) -> None:
    config = plan_config(tmp_path, broker.port)
    with SimulatedHome(config, broker.port) as home:
        daemon = TypedDaemon(config, tmp_path)
        try:
            waiting = _post(
                daemon, "/api/tasks", _json({"requirement": "in 10 minutes turn off the bedroom light"})
            )
            assert waiting.status_code == 201, waiting.text
            task = waiting.json()["id"]
            endpoints = ["/api/say", "/api/vibe", "/api/mute", "/api/tasks", f"/api/tasks/{task}/confirm"]
            for path in endpoints:
                deep = _post(daemon, path, DEEP)
                assert deep.status_code == 400, (path, deep.text)
                assert "nested 8000 levels deep; at most 32" in deep.json()["error"], path
                huge = _post(daemon, path, f'{{"text": {HUGE}, "muted": {HUGE}}}')
                assert huge.status_code == 400, (path, huge.text)
                assert "a number 5000 digits long; at most 40" in huge.json()["error"], path
                broken = _post(daemon, path, b'{"text": "\xff\xfe"}')
                assert broken.status_code == 400 and "not UTF-8" in broken.json()["error"], path
                keyed = _post(daemon, path, _json({SURROGATE: SURROGATE, "muted": [SURROGATE]}))
                assert keyed.status_code == 400, (path, keyed.text)

            said = _post(
                daemon, "/api/say", _json({"text": f"{SURROGATE}{CONTROLS} turn on the kitchen light"})
            )
            assert said.status_code == 200, said.text
            assert said.json()["heard"].endswith("turn on the kitchen light")
            assert SURROGATE not in said.json()["heard"] and "\x00" not in said.json()["heard"]
            assert [c["device"] for c in said.json()["commands"]] == ["kitchen_light"], said.text
            vibe = _post(daemon, "/api/vibe", _json({"request": f"calm {SURROGATE}{CONTROLS}"}))
            assert vibe.status_code == 202, vibe.text
            wanted = f"turn on the kitchen light {SURROGATE}{CONTROLS} and play some jazz"
            planned = _post(daemon, "/api/tasks", _json({"requirement": wanted}))
            assert planned.status_code == 201, planned.text
            refused = _post(
                daemon,
                f"/api/tasks/{task}/confirm",
                _json({"approved": False, "user_notes": SURROGATE + CONTROLS}),
            )
            assert refused.status_code == 200 and refused.json()["status"] == "cancelled", refused.text
            assert _post(daemon, "/api/tasks/%ED%A0%80%00/cancel", "").status_code == 404
            for query in ("limit=%ED%A0%80", "limit=%C2%B2", "limit=%00"):
                got = httpx.get(f"http://127.0.0.1:{daemon.port}/api/turns?{query}", timeout=10)
                assert got.status_code == 400 and "'limit' must be a whole number" in got.json()["error"]

            home.published()  # what the scene and the turn above sent
            assert daemon.reply_to("turn off the kitchen light").endswith("Turning off the kitchen light.")
            listing = httpx.get(f"http://127.0.0.1:{daemon.port}/api/tasks", timeout=10)
            assert listing.status_code == 200 and task in listing.text
            assert (SET.format("kitchen_light"), {"state": "OFF"}) in home.published()
        finally:
            code = daemon.stop()
        assert code == 0, daemon.report()
        unexpected = [
            line for line in daemon.output if "Traceback" in line or ("web: " in line and " failed: " in line)
        ]
        assert not unexpected, daemon.report()
