"""POST /api/devices/{name}: the page's controls through the agents' own device tools, on a real
broker with the device simulator, over real HTTP. Each answer is the device's confirmed state,
or a 4xx/5xx naming what is wrong; nothing reaches the broker for a bad call."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx

from tests.conftest import Broker, free_port
from tests.vibe_home import Home
from voiced.config import Config, WebConfig
from voiced.devices.actions import DeviceActions
from voiced.devices.registry import DeviceRegistry
from voiced.ear.mute import MuteSwitch
from voiced.web.api import Controls
from voiced.web.server import WebServer, bind

CONFIRM_S = 1.5


@asynccontextmanager
async def served(home: Home, registry: DeviceRegistry) -> AsyncIterator[httpx.AsyncClient]:
    mute = MuteSwitch(home.bus)
    controls = Controls(
        bus=home.bus,
        registry=registry,
        devices=home.gateway,
        take_turn=lambda text: 0,
        mute=mute.set,
        is_muted=mute,
        conversation=lambda: None,
        actions=DeviceActions(home.gateway, home.bus, 2.0, CONFIRM_S),
    )
    config = WebConfig(port=free_port())
    server = WebServer(config, controls, bind(config))
    await server.start()
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{config.port}", timeout=10) as client:
            yield client
    finally:
        await asyncio.wait_for(server.stop(), 10)


def run(
    broker: Broker,
    registry: DeviceRegistry,
    scenario: Callable[[httpx.AsyncClient, Home], Awaitable[None]],
    **simulator: Any,
) -> None:
    async def main() -> None:
        home = Home(broker, registry, Config(mqtt=broker.mqtt_config()), simulator)
        async with home, served(home, registry) as client:
            await scenario(client, home)

    asyncio.run(asyncio.wait_for(main(), 90))


def sent_to(home: Home, device: str) -> list[dict[str, Any]]:
    assert home.watcher is not None
    return [
        json.loads(payload)
        for _, topic, payload in home.watcher.commands()
        if topic.endswith(f"/{device}/set")
    ]


def test_controls_send_through_the_tools_and_answer_with_the_confirmed_state(
    broker: Broker, registry: DeviceRegistry
) -> None:
    async def scenario(client: httpx.AsyncClient, home: Home) -> None:
        dimmed = await client.post("/api/devices/kitchen_light", json={"state": "on", "brightness_pct": 40})
        assert dimmed.status_code == 200, dimmed.text
        body = dimmed.json()
        assert body["sent"] == {"state": "ON", "brightness": 102}  # 40 % of 254, as the voice sends it
        assert body["state"]["brightness"] == 102 and body["view"]["brightness_pct"] == 40
        assert body["confirmed"] == "Kitchen light says: on · 40 % · neutral white"  # its 300 mireds
        # The watcher is a client of its own: what it saw may arrive after the bulb's answer.
        await home.until(lambda: sent_to(home, "kitchen_light"), "the watcher to see the command")
        assert sent_to(home, "kitchen_light") == [{"state": "ON", "brightness": 102}]

        clamped = (await client.post("/api/devices/kitchen_light", json={"brightness_pct": 150})).json()
        assert (
            clamped["notes"] == ["brightness_pct 150 clamped to 100"]
            and clamped["view"]["brightness_pct"] == 100
        )

        blue = (
            await client.post("/api/devices/living_room_light", json={"state": "on", "color": "blue"})
        ).json()
        assert blue["state"]["color_mode"] == "xy" and "x" in blue["state"]["color"]  # as a bulb reports it
        assert blue["view"]["colour_name"] == "blue" and blue["view"]["colour"] == "#0000ff"
        warm = (await client.post("/api/devices/living_room_light", json={"color_temp": "warm"})).json()
        assert warm["view"]["warmth"] == "warm" and "colour_name" not in warm["view"]  # the old blue is gone
        assert warm["confirmed"] == "Living room light says: on · 50 % · warm white"

        scent = (await client.post("/api/devices/diffuser", json={"state": "on", "scent": "citrus"})).json()
        assert scent["view"]["summary"].startswith("on · citrus")
        music = await client.post(
            "/api/devices/music", json={"tool": "play_music", "action": "play", "volume": 30}
        )
        assert music.status_code == 200, music.text
        assert music.json()["view"]["playing"] == "playing" and music.json()["view"]["volume_pct"] == 30
        paused = (await client.post("/api/devices/music", json={"action": "pause"})).json()
        assert paused["view"]["summary"].startswith("paused")

    run(broker, registry, scenario)


def test_bad_calls_are_4xx_naming_what_is_wrong_and_send_nothing(
    broker: Broker, registry: DeviceRegistry
) -> None:
    async def scenario(client: httpx.AsyncClient, home: Home) -> None:
        cases: list[tuple[str, Any, int, str]] = [
            (
                "kitchen_light",
                {"brightness_pct": "bright"},
                400,
                "brightness_pct: Input should be a valid number",
            ),
            ("kitchen_light", {"state": "on", "volume": 3}, 400, "volume: Extra inputs are not permitted"),
            ("kitchen_light", {}, 400, "nothing to change on 'kitchen_light'"),
            (
                "kitchen_light",
                {"tool": "play_music", "action": "play"},
                400,
                "its tool is set_light, not 'play_music'",
            ),
            (
                "kitchen_light",
                {"device": "bedroom_light", "state": "on"},
                400,
                "the path names kitchen_light",
            ),
            ("kitchen_light", {"color": "plaid"}, 400, "unknown color 'plaid'"),
            ("diffuser", {"scent": "rose"}, 400, "unknown scent 'rose' for diffuser (has: lavender"),
            ("music", {"action": "rewind"}, 400, "action: Input should be 'play', 'pause' or 'stop'"),
            ("garage_door", {"state": "on"}, 404, "no device 'garage_door' (devices: bedroom_light"),
        ]
        for device, body, status, message in cases:
            answer = await client.post(f"/api/devices/{device}", json=body)
            assert answer.status_code == status, (device, body, answer.text)
            assert message in answer.json()["error"], (device, body, answer.json())
        not_json = await client.post("/api/devices/kitchen_light", content=b"{on")
        assert not_json.status_code == 400 and "not valid JSON" in not_json.json()["error"]
        wrong_method = await client.get("/api/devices/kitchen_light")
        assert wrong_method.status_code == 405 and "GET is not allowed" in wrong_method.json()["error"]
        await asyncio.sleep(0.3)  # anything published would have reached the watcher by now
        assert home.watcher is not None and home.watcher.commands() == []

    run(broker, registry, scenario)


def test_an_offline_device_is_409_a_silent_one_504_and_a_lost_broker_503(
    broker: Broker, registry: DeviceRegistry
) -> None:
    async def scenario(client: httpx.AsyncClient, home: Home) -> None:
        offline = await client.post("/api/devices/bedroom_light", json={"state": "on"})
        assert (
            offline.status_code == 409 and "bedroom light is offline; nothing sent" in offline.json()["error"]
        )
        silent = await client.post("/api/devices/kitchen_light", json={"state": "on"})
        assert silent.status_code == 504, silent.text
        assert f"Kitchen light did not confirm within {CONFIRM_S:g} s" in silent.json()["error"]
        await home.until(lambda: sent_to(home, "kitchen_light"), "the watcher to see the command")
        assert sent_to(home, "kitchen_light") == [{"state": "ON"}]  # sent, never confirmed
        broker.stop()
        await home.until(lambda: not home.gateway.connected, "the gateway to notice the broker is gone")
        lost = await client.post("/api/devices/diffuser", json={"state": "on"})
        assert lost.status_code == 503 and "broker" in lost.json()["error"].lower(), lost.text

    run(broker, registry, scenario, offline=["bedroom_light"], silent=["kitchen_light"])
