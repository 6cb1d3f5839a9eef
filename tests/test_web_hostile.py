"""Hostile bodies on every POST endpoint of the real daemon (`voiced run --text -`, devices simulated
on a real broker), over real HTTP: never a 5xx, never a traceback, and the daemon still works. And
the last line behind them: an unexpected exception is a JSON 500 and one log line."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import httpx
import pytest

from tests.conftest import Broker, free_port
from tests.home import SimulatedHome
from tests.plans_home import TypedDaemon, plan_config
from tests.test_web import Devices, ScriptedTurns
from voiced.bus import EventBus
from voiced.config import WebConfig
from voiced.devices.registry import DeviceRegistry
from voiced.ear.mute import MuteSwitch
from voiced.web.api import Controls
from voiced.web.server import WebServer, bind

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
            endpoints.append("/api/devices/kitchen_light")
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

            scent = _post(daemon, "/api/devices/diffuser", _json({"scent": f"{SURROGATE}{CONTROLS}rose"}))
            assert scent.status_code == 400 and "unknown scent" in scent.json()["error"], scent.text
            assert "\x00" not in scent.json()["error"] and SURROGATE not in scent.json()["error"]
            nobody = _post(daemon, "/api/devices/%ED%A0%80%00", _json({"state": "on"}))
            assert nobody.status_code == 404 and "no device" in nobody.json()["error"], nobody.text

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
            for query in ("limit=%ED%A0%80", "limit=%C2%B2", "limit=%00", "limit=" + "9" * 5000):
                got = httpx.get(f"http://127.0.0.1:{daemon.port}/api/turns?{query}", timeout=10)
                assert got.status_code == 400 and "'limit' must be a whole number" in got.json()["error"]

            home.published()  # what the scene and the turn above sent
            # (a scene may be announced first; the brain may confirm the state after)
            assert "Turning off the kitchen light." in daemon.reply_to("turn off the kitchen light")
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


def test_an_unexpected_failure_is_a_json_500_and_one_log_line_without_a_traceback(
    registry: DeviceRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    def broken() -> dict[str, object]:
        raise OSError("disk on fire")

    async def main() -> None:
        bus = EventBus()
        bus.bind_loop(asyncio.get_running_loop())
        mute = MuteSwitch(bus)
        controls = Controls(
            bus=bus,
            registry=registry,
            devices=Devices(),
            take_turn=ScriptedTurns(bus),
            mute=mute.set,
            is_muted=mute,
            conversation=broken,
        )
        config = WebConfig(port=free_port())
        server = WebServer(config, controls, bind(config))
        await server.start()
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{config.port}", timeout=10) as client:
                failed = await client.get("/api/state")
                assert failed.status_code == 500
                assert failed.json() == {"error": "internal error on GET '/api/state': OSError"}
                assert (await client.get("/healthz")).json()["ok"] is True
        finally:
            await server.stop()

    with caplog.at_level(logging.INFO):
        asyncio.run(main())
    lines = [r for r in caplog.records if "failed" in r.getMessage()]
    assert [r.getMessage() for r in lines] == ["web: GET '/api/state' failed: OSError: disk on fire"]
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records]
