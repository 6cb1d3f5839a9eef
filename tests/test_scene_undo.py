""" "Never mind" right after a scene takes it back: against a real Mosquitto and the device simulator.

Before, "never mind" after "goodnight" said "There's no scene being set up." and left every light
off. Now the devices the scene changed are put back as they reported themselves before it; any turn
in between makes the scene the way things are.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.conftest import Broker
from tests.openai_server import ScriptedServer
from tests.test_vibe import config_for
from tests.vibe_home import Home, reply_of
from voiced.config import LlmConfig
from voiced.devices.registry import DeviceRegistry
from voiced.mouth.agent import Agent
from voiced.mouth.hybrid import HybridAgent
from voiced.mouth.intents import LocalIntentAgent
from voiced.mouth.llm import LlmAgent
from voiced.mouth.local_agent import LocalAgent


def reported(home: Home, name: str) -> dict[str, Any]:
    return home.gateway.state_of(name) or {}


@pytest.mark.parametrize("kind", ["local", "hybrid"])
def test_never_mind_right_after_good_night_puts_the_home_back(
    broker: Broker, registry: DeviceRegistry, llm: ScriptedServer, kind: str
) -> None:
    """With an LLM beside them (hybrid), the local intents take these turns the same way."""

    async def scenario() -> None:
        async with Home(broker, registry, config_for(broker)) as home:
            intents = LocalIntentAgent(registry, home.gateway.state_of)
            agent: Agent = LocalAgent(intents, home.actions, home.vibe)
            if kind == "hybrid":
                config = LlmConfig(base_url=llm.base_url, model="chat")
                chat = LlmAgent(config, registry, home.actions, bus=home.bus)
                agent = HybridAgent(intents, chat, home.actions, home.vibe)
            watcher = home.watcher
            assert watcher is not None
            assert (await reply_of(agent, 1, "set the kitchen light to 40 percent")).startswith("Setting")
            assert await reply_of(agent, 2, "play some jazz") == "Playing some jazz."
            await home.until(lambda: reported(home, "music")["state"] == "playing", "the jazz")
            await home.until(
                lambda: reported(home, "kitchen_light").get("brightness") == 102, "the kitchen at 40 %"
            )
            before = len(watcher.commands())
            assert await reply_of(agent, 3, "goodnight") == "Good night."
            assert (await home.finished("vibe-1")).kind == "vibe_complete"
            # the watcher is a client of its own: wait until it has seen the scene's five commands
            await home.until(lambda: len(watcher.commands()[before:]) >= 5, "the scene's commands")
            assert home.simulator.state_of("kitchen_light")["state"] == "OFF"
            sent = len(watcher.commands())
            said = await reply_of(agent, 4, "never mind")
            assert said.startswith("By the way, the good night scene is ready. ")  # news first
            assert said.endswith("Okay, I put everything back as it was before the good night scene.")
            wanted = {"zigbee2mqtt/kitchen_light/set", "voiced/music/set"}
            await home.until(lambda: {c[1] for c in watcher.commands()[sent:]} >= wanted, "the commands back")
            await home.until(lambda: home.simulator.state_of("music")["state"] == "playing", "the music back")
            await home.until(lambda: home.simulator.state_of("kitchen_light")["state"] == "ON", "the light")
            assert home.simulator.state_of("kitchen_light")["brightness"] == 102
            assert home.simulator.state_of("music")["genre"] == "jazz"
            await asyncio.sleep(0.3)  # anything else sent would have reached the watcher by now
            back = [topic for _t, topic, _payload in watcher.commands()[sent:]]
            # only what the scene changed, once each: the bedroom and living room lights and the
            # diffuser were off already
            assert sorted(back) == sorted(wanted)
            # taken back once: the next "never mind" has no scene to take back
            assert await reply_of(agent, 5, "never mind") == "There's no scene being set up."

    asyncio.run(scenario())
    assert llm.requests == []  # every turn was the local intents'


def test_a_turn_between_makes_the_scene_the_way_things_are(broker: Broker, registry: DeviceRegistry) -> None:
    async def scenario() -> None:
        async with Home(broker, registry, config_for(broker)) as home:
            agent = LocalAgent(LocalIntentAgent(registry, home.gateway.state_of), home.actions, home.vibe)
            watcher = home.watcher
            assert watcher is not None
            await reply_of(agent, 1, "turn on the kitchen light")
            await home.until(lambda: reported(home, "kitchen_light")["state"] == "ON", "the kitchen on")
            before = len(watcher.commands())
            await reply_of(agent, 2, "goodnight")
            assert (await home.finished("vibe-1")).kind == "vibe_complete"
            await home.until(lambda: len(watcher.commands()[before:]) >= 5, "the scene's commands")
            await reply_of(agent, 3, "what time is it")
            sent = len(watcher.commands())
            assert await reply_of(agent, 4, "never mind") == "There's no scene being set up."
            await asyncio.sleep(0.3)  # a command would have reached the broker by now
            assert watcher.commands()[sent:] == []
            assert home.simulator.state_of("kitchen_light")["state"] == "OFF"

    asyncio.run(scenario())
