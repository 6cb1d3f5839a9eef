"""A frozen broker (SIGSTOP) must never deliver a command late, and the reply must say it was not sent.

Against a real Mosquitto: it is frozen, a spoken command is carried out, and the broker is resumed
after longer than the command expiry; a subscriber must never see the command.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

from tests.conftest import Broker
from tests.vibe_home import Home, reply_of
from voiced.config import Config
from voiced.devices.actions import DeviceActions
from voiced.devices.registry import DeviceRegistry
from voiced.mouth.intents import LocalIntentAgent
from voiced.mouth.local_agent import NO_BROKER_REPLY, LocalAgent

EXPIRY_S = 1


class FreezableBroker(Broker):
    def signal(self, number: signal.Signals) -> None:
        assert self._proc is not None
        os.kill(self._proc.pid, number)


def test_a_frozen_broker_gets_no_command_and_the_reply_says_nothing_was_changed(
    tmp_path: Path, registry: DeviceRegistry
) -> None:
    broker = FreezableBroker(tmp_path)
    broker.start()

    async def scenario() -> tuple[str, float, list[str], int]:
        mqtt = broker.mqtt_config("voiced-frozen").model_copy(
            update={"command_expiry_s": EXPIRY_S, "ack_timeout_s": 1.0}
        )
        async with Home(broker, registry, Config(mqtt=mqtt)) as home:
            actions = DeviceActions(home.gateway, home.bus, ack_timeout_s=1.0)
            agent = LocalAgent(LocalIntentAgent(registry, home.gateway.state_of), actions, home.vibe)
            assert home.watcher is not None
            broker.signal(signal.SIGSTOP)
            try:
                start = time.monotonic()
                said = await asyncio.wait_for(reply_of(agent, 1, "Turn on the kitchen light."), timeout=10)
                took = time.monotonic() - start
                await asyncio.sleep(EXPIRY_S + 2.0)  # frozen for longer than the expiry
            finally:
                broker.signal(signal.SIGCONT)
            # Resumed: anything the broker held would arrive now.
            await asyncio.sleep(2.0)
            late = [payload for _t, topic, payload in home.watcher.commands() if "kitchen" in topic]
            refused = len(home.of("command_refused"))
            return said, took, late, refused

    try:
        said, took, late, refused = asyncio.run(scenario())
    finally:
        broker.stop()
    assert said == NO_BROKER_REPLY
    assert took < 3.0  # answered within about the acknowledgement timeout
    assert late == []
    assert refused == 1
