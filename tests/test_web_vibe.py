"""POST/DELETE /api/vibe through the real scene agent, devices simulated on a real broker."""

from __future__ import annotations

import asyncio

import httpx

from tests.conftest import Broker, free_port
from tests.test_web import sse_events
from tests.vibe_home import Home
from voiced.config import Config, WebConfig
from voiced.devices.registry import DeviceRegistry
from voiced.ear.mute import MuteSwitch
from voiced.web.api import Controls
from voiced.web.server import WebServer, bind


def test_a_scene_starts_and_is_cancelled_from_the_web(broker: Broker, registry: DeviceRegistry) -> None:
    async def scenario() -> None:
        async with Home(broker, registry, Config(mqtt=broker.mqtt_config())) as home:
            mute = MuteSwitch(home.bus)
            controls = Controls(
                bus=home.bus,
                registry=registry,
                devices=home.gateway,
                take_turn=lambda text: 0,
                mute=mute.set,
                is_muted=mute,
                conversation=lambda: None,
                vibe=home.vibe,
            )
            config = WebConfig(port=free_port())
            server = WebServer(config, controls, bind(config))
            await server.start()
            try:
                base = f"http://127.0.0.1:{config.port}"
                async with httpx.AsyncClient(base_url=base, timeout=10) as client:
                    bad = await client.post("/api/vibe", json={"request": 5})
                    assert bad.status_code == 400 and "'request' must be a string" in bad.json()["error"]
                    started = await client.post("/api/vibe", json={"request": "something calm for reading"})
                    assert started.status_code == 202, started.text
                    assert "vibe-1" in started.json()["result"]
                    cancelled = await client.delete("/api/vibe")
                    assert cancelled.status_code == 200
                    assert cancelled.json()["result"] in ("cancelled scene vibe-1", "no scene was running")
                    again = await client.post("/api/vibe", json={"request": "something calm for reading"})
                    assert "vibe-2" in again.json()["result"]
                    finished = await home.finished("vibe-2")
                    assert finished.kind == "vibe_complete"
                    assert (await client.delete("/api/vibe")).json()["result"] == "no scene was running"
                    await asyncio.sleep(0.2)  # the hub has read the bus
                    async with client.stream("GET", "/api/events?last_id=0") as stream:
                        replayed = await asyncio.wait_for(sse_events(stream, server.hub.seen), 5)
                    names = [name for _, name, _ in replayed]
                    for kind in ("vibe_started", "vibe_tool_start", "vibe_tool_end", "vibe_complete"):
                        assert kind in names, kind
                    thoughts = [data.get("thought", "") for _, _, data in replayed]
                    assert any(line.startswith("[VIBE] vibe-2 complete") for line in thoughts)
            finally:
                await asyncio.wait_for(server.stop(), 10)

    asyncio.run(asyncio.wait_for(scenario(), 60))
