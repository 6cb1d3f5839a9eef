"""A relative change on a device that never reported its state: it asks (`/get`), waits at most
`devices.state_wait_s`, then acts on an assumption and says what it set, instead of two seconds of
silence. Real broker, the device simulator with the living room light silent."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from tests.conftest import Broker
from tests.vibe_home import Home, reply_of
from voiced.config import Config
from voiced.devices.actions import DeviceActions
from voiced.devices.registry import DeviceRegistry
from voiced.mouth.intents import LocalIntentAgent
from voiced.mouth.local_agent import LocalAgent

STATE_WAIT_S = 0.3


def test_dimming_a_light_that_never_reported_says_what_it_assumed(
    tmp_path: Path, registry: DeviceRegistry
) -> None:
    broker = Broker(tmp_path)
    broker.start()

    async def scenario() -> tuple[str, float, list[tuple[float, str, str]]]:
        config = Config(mqtt=broker.mqtt_config("voiced-unknown"))
        async with Home(
            broker,
            registry,
            config,
            simulator_options={"silent": ["living_room_light"], "uncached": ["living_room_light"]},
        ) as home:
            assert home.gateway.state_of("living_room_light") is None
            actions = DeviceActions(home.gateway, home.bus, state_wait_s=STATE_WAIT_S)
            agent = LocalAgent(LocalIntentAgent(registry, home.gateway.state_of), actions, home.vibe)
            started = time.monotonic()
            said = await asyncio.wait_for(reply_of(agent, 1, "Dim the living room light."), timeout=15)
            assert home.watcher is not None
            await home.until(
                lambda: home.watcher is not None and home.watcher.commands(started), "the command"
            )
            sent = [c for c in home.watcher.commands(started) if "living_room" in c[1]]
            return said, started, sent

    try:
        said, started, sent = asyncio.run(scenario())
    finally:
        broker.stop()
    assert "I didn't hear where it was, so I set the living room light to" in said, said
    (when, _topic, payload), *_ = sent
    assert '"brightness"' in payload, payload
    # asked, waited the budget, then sent: the old wait was two seconds (margin for a busy machine)
    assert when - started < STATE_WAIT_S + 1.2, when - started


def test_a_device_that_never_answered_its_state_is_not_waited_for_again(
    tmp_path: Path, registry: DeviceRegistry
) -> None:
    """Asked at connect and silent since, longer ago than the budget: asked again, not waited for;
    asked less than the budget ago, it is still waited for."""
    broker = Broker(tmp_path)
    broker.start()
    now = [0.0]
    budget_s = 30.0  # a wait for it would show; not waiting takes milliseconds

    async def scenario() -> tuple[list[str], float, list[str], float]:
        config = Config(mqtt=broker.mqtt_config("voiced-deaf"))
        options = {"silent": ["living_room_light"], "uncached": ["living_room_light"]}
        async with Home(broker, registry, config, simulator_options=options, clock=lambda: now[0]) as home:
            assert home.gateway.state_of("living_room_light") is None
            started = time.monotonic()  # the ask at connect was "just now": waited for
            recent = await asyncio.wait_for(home.gateway.refresh(["living_room_light"], 1.0), 20)
            recent_s = time.monotonic() - started
            now[0] = budget_s + 1  # now it was longer ago than the budget
            started = time.monotonic()
            deaf = await asyncio.wait_for(home.gateway.refresh(["living_room_light"], budget_s), 20)
            return recent, recent_s, deaf, time.monotonic() - started

    try:
        recent, recent_s, deaf, deaf_s = asyncio.run(scenario())
    finally:
        broker.stop()
    assert recent == ["living_room_light"] and recent_s >= 0.9, (recent, recent_s)
    assert deaf == ["living_room_light"]
    assert deaf_s < budget_s / 3, deaf_s
