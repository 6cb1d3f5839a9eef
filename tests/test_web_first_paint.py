"""What a page gets before anything changes: the assistant's state said before the web server
started, and again after the replay ring has moved past it; the page's code and icon without the
token; the state and a device's words in the page's own events."""

from __future__ import annotations

import asyncio

import httpx

from tests.conftest import free_port
from tests.test_web import Devices, ScriptedTurns, sse_events
from voiced.bus import EventBus
from voiced.config import WebConfig
from voiced.devices.registry import DeviceRegistry
from voiced.ear.mute import MuteSwitch
from voiced.events import AssistantState, CommandSent, DeviceStateChanged, Transcript
from voiced.web.api import Controls
from voiced.web.hub import EventHub
from voiced.web.server import WebServer, bind

TOKEN = "s3cret-s3cret-s3cret"


def test_the_state_said_before_the_web_started_is_on_the_page_and_first_in_the_replay(
    registry: DeviceRegistry,
) -> None:
    async def main() -> None:
        bus = EventBus()
        bus.bind_loop(asyncio.get_running_loop())
        bus.publish(AssistantState(state="idle"))  # as the daemon does, long before the web is up
        mute = MuteSwitch(bus)
        controls = Controls(
            bus=bus,
            registry=registry,
            devices=Devices(),
            take_turn=ScriptedTurns(bus),
            mute=mute.set,
            is_muted=mute,
            conversation=lambda: None,
        )
        config = WebConfig(host="0.0.0.0", port=free_port(), token=TOKEN)
        server = WebServer(config, controls, bind(config))
        await server.start()
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{config.port}", timeout=10) as client:
                page = await client.get(f"/?access_token={TOKEN}")
                assert '<span id="mode" class="badge mode" data-mode="idle"' in page.text
                assert "connecting" not in page.text and "<!--assistant-mode-->" not in page.text
                # The page's code, style and icon are no secret: a browser fetches them without the token.
                for path in ("/static/app.js", "/static/devices.js", "/static/app.css", "/favicon.ico"):
                    assert (await client.get(path)).status_code == 200, path
                icon = await client.get("/favicon.ico")
                assert icon.headers["content-type"] == "image/svg+xml" and icon.text.startswith("<svg")
                assert (await client.get("/api/devices")).status_code == 401  # the data still is
                bus.publish(
                    DeviceStateChanged(device="kitchen_light", state={"state": "ON", "brightness": 102})
                )
                bus.publish(CommandSent(turn=3, device="kitchen_light", topic="t", payload='{"state":"OFF"}'))
                await asyncio.sleep(0.2)  # the hub has read them
                headers = {"Authorization": f"Bearer {TOKEN}"}
                async with client.stream("GET", "/api/events?last_id=0", headers=headers) as stream:
                    events = await asyncio.wait_for(sse_events(stream, server.hub.seen), 5)
        finally:
            await asyncio.wait_for(server.stop(), 10)
        assert (events[0][1], events[0][2]["state"]) == ("assistant_state", "idle")
        by_kind = {name: data for _, name, data in events}
        assert by_kind["device_state"]["view"]["summary"] == "on · 40 %"
        assert by_kind["command_sent"]["words"] == "Kitchen light: off"

    asyncio.run(asyncio.wait_for(main(), 30))


def test_the_current_state_is_replayed_after_the_ring_has_moved_past_it_but_never_twice() -> None:
    async def main() -> None:
        bus = EventBus()
        bus.bind_loop(asyncio.get_running_loop())
        hub = EventHub(bus, [], ring_size=5)
        hub.take(AssistantState(state="listening"))
        for n in range(1, 9):
            hub.take(Transcript(turn=n, text=f"line {n}"))
        live, missed = hub.subscribe("0")
        assert [s.name for s in missed] == ["assistant_state"] + ["transcript"] * 5
        assert missed[0].seq == 1 and [s.seq for s in missed[1:]] == [5, 6, 7, 8, 9]
        hub.unsubscribe(live)
        live, missed = hub.subscribe(f"{hub.boot}-7")  # it was seen before the ring moved on
        assert [s.seq for s in missed] == [8, 9]
        hub.unsubscribe(live)
        assert hub.current("assistant_state") is not None
        assert hub.current("assistant_state")["state"] == "listening"  # type: ignore[index]
        hub.close_all()

    asyncio.run(main())
