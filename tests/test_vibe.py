"""The vibe agent against a real Mosquitto and the device simulator: scenes, confirmation, cancellation."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.conftest import Broker
from tests.openai_server import ScriptedServer, Text, Tools, call
from tests.vibe_home import Home, reply_of, write_presets
from voiced.config import Config, LlmConfig, VibeConfig
from voiced.devices.registry import DeviceRegistry
from voiced.mouth.hybrid import HybridAgent
from voiced.mouth.intents import LocalIntentAgent
from voiced.mouth.llm import LlmAgent
from voiced.mouth.local_agent import LocalAgent
from voiced.vibe.messages import Failed

RELAX_COMMANDS = {
    ("zigbee2mqtt/living_room_light/set", '{"state":"ON","brightness":76,"color_temp":454}'),
    ("zigbee2mqtt/diffuser/set", '{"state":"ON","scent":"lavender","intensity":40}'),
    ("voiced/music/set", '{"action":"play","genre":"ambient","volume":30}'),
}


def config_for(broker: Broker, **vibe: object) -> Config:
    return Config(mqtt=broker.mqtt_config("voiced-vibe"), vibe=VibeConfig.model_validate(vibe))


def test_a_scene_drives_devices_in_parallel_confirms_them_and_is_mentioned_next_turn(
    broker: Broker, registry: DeviceRegistry
) -> None:
    async def scenario() -> None:
        delay = 0.4  # each device reports its new state this long after a command
        home = Home(broker, registry, config_for(broker), simulator_options={"delay_s": delay})
        async with home:
            agent = LocalAgent(LocalIntentAgent(registry, home.gateway.state_of), home.actions, home.vibe)
            said = await reply_of(agent, 1, "Help me relax.")
            assert said == "Okay, time to relax."  # at once, while the scene is still running
            assert home.vibe.running == "vibe-1"
            done = await home.finished("vibe-1")
            assert done.kind == "vibe_complete" and done.plan["name"] == "relax"
            sent = {(topic, payload) for _t, topic, payload in home.watcher.commands()}
            assert sent == RELAX_COMMANDS
            times = [t for t, _topic, _payload in home.watcher.commands()]
            assert max(times) - min(times) < delay  # in parallel: all out before the first confirmation
            ends = home.of("vibe_tool_end", "vibe-1")
            assert len(ends) == 3 and all(
                e.result.startswith("ok: ") and "confirmed" in e.result for e in ends
            )
            assert [e.tool for e in home.of("vibe_tool_start", "vibe-1")] == [
                "set_light",
                "set_scent",
                "play_music",
            ]
            assert home.simulator.state_of("music")["state"] == "playing"
            # The next turn starts with the news.
            said = await reply_of(agent, 2, "turn on the kitchen light")
            assert said == "By the way, the relax scene is ready. Turning on the kitchen light."
            assert await reply_of(agent, 3, "turn off the kitchen light") == "Turning off the kitchen light."

    asyncio.run(scenario())


def test_a_second_scene_cancels_the_first_and_nothing_of_the_first_is_sent_after(
    broker: Broker, registry: DeviceRegistry, tmp_path: Path
) -> None:
    presets = write_presets(
        tmp_path / "scenes.yaml",
        """
slow:
  keywords: [slow]
  steps:
    - {tool: set_light, device: living_room_light, state: "on", brightness_pct: 10}
    - {tool: set_light, device: living_room_light, brightness_pct: 20}
    - {tool: set_light, device: living_room_light, brightness_pct: 30}
    - {tool: play_music, action: play, genre: blues, volume: 11}
    - {tool: play_music, volume: 12}
fast:
  keywords: [fast]
  steps:
    - {tool: set_light, device: kitchen_light, state: "on", brightness_pct: 90}
""",
    )

    async def scenario() -> None:
        config = config_for(broker, presets_file=presets, default_preset="fast")
        async with Home(broker, registry, config, simulator_options={"delay_s": 0.6}) as home:
            await home.vibe.start("slow", turn=1)
            await home.until(
                lambda: len(home.watcher.commands()) >= 2, "the first commands of the slow scene"
            )
            answer = await home.vibe.start("fast", turn=2)
            assert "cancelled scene vibe-1" in answer
            cancelled = await home.finished("vibe-1")
            assert cancelled.kind == "vibe_cancelled"
            done = await home.finished("vibe-2")
            assert done.kind == "vibe_complete"
            await asyncio.sleep(1.5)  # time for any straggler of the first scene to show up
            late = [e for e in home.of("command_sent", "vibe-1") if e.t > cancelled.t]
            assert late == []
            payloads = [(topic, payload) for _t, topic, payload in home.watcher.commands()]
            assert ("zigbee2mqtt/living_room_light/set", '{"brightness":51}') not in payloads
            assert ("zigbee2mqtt/living_room_light/set", '{"brightness":76}') not in payloads
            assert ("voiced/music/set", '{"volume":12}') not in payloads
            assert ("zigbee2mqtt/kitchen_light/set", '{"state":"ON","brightness":229}') in payloads
            kinds = [type(m).__name__ for m in home.vibe.poll_messages()]
            assert kinds == ["Cancelled", "Success"]

    asyncio.run(scenario())


def test_a_device_that_never_confirms_fails_its_step_by_name_and_the_rest_applies(
    broker: Broker, registry: DeviceRegistry
) -> None:
    async def scenario() -> None:
        config = config_for(broker, confirm_timeout_s=1.0)
        async with Home(broker, registry, config, simulator_options={"silent": ["music"]}) as home:
            await home.vibe.start("relax", turn=1)
            done = await home.finished("vibe-1")
            assert done.kind == "vibe_error"
            assert "music did not confirm within 1 s" in done.error
            results = {e.tool: e.result for e in home.of("vibe_tool_end", "vibe-1")}
            assert results["set_light"].startswith("ok: living room light confirmed")
            assert results["set_scent"].startswith("ok: diffuser confirmed")
            assert results["play_music"].startswith("error: music did not confirm")
            assert home.simulator.state_of("diffuser")["scent"] == "lavender"
            (message,) = home.vibe.poll_messages()
            assert isinstance(message, Failed) and message.applied == ["living_room_light", "diffuser"]
            assert message.told  # said aloud at once, not left for the next turn
            assert home.narrations == [
                "Sorry, the scene is only partly set: the music couldn't be set. "
                "The living room light and the diffuser did change."
            ]

    asyncio.run(scenario())


def test_the_llm_starts_a_scene_the_planner_corrects_itself_and_the_news_reaches_the_next_turn(
    broker: Broker, registry: DeviceRegistry, llm: ScriptedServer
) -> None:
    llm.push(
        Tools((call("call_vibe_agent", request="a rainy afternoon in Paris"),)),
        Text("Setting up a rainy Paris afternoon."),
        Text("It is ready."),
    )
    llm.push(
        Tools(
            (
                call("set_light", device="living_room_light", state="on", brightness_pct=140, color="orange"),
                call("set_light", device="garage_light", state="on"),
                call("play_music", device="music", action="play", genre="jazz", volume=25),
                call("narrate", text="Rain on the windows, jazz in the air."),
            )
        ),
        Tools((call("set_scent", device="diffuser", state="on", scent="sandalwood", intensity=30),)),
        model="vibe-planner",
    )

    async def scenario() -> None:
        config = Config(
            mqtt=broker.mqtt_config("voiced-vibe"),
            llm=LlmConfig(base_url=llm.base_url, model="chat"),
            vibe=VibeConfig(planner_model="vibe-planner"),
        )
        async with Home(broker, registry, config) as home:
            intents = LocalIntentAgent(registry, home.gateway.state_of)
            agent = HybridAgent(
                intents,
                LlmAgent(config.llm, registry, home.actions, vibe=home.vibe, bus=home.bus),
                home.actions,
                home.vibe,
            )
            said = await reply_of(agent, 1, "I miss Paris in the rain")
            assert said == "Setting up a rainy Paris afternoon."
            done = await home.finished("vibe-1")
            assert done.kind == "vibe_complete", done
            steps = [(s["tool"], s["input"].get("device")) for s in done.plan["steps"]]
            assert ("set_light", "garage_light") not in steps
            assert ("set_scent", "diffuser") in steps  # the correction round's call
            payloads = {(topic, payload) for _t, topic, payload in home.watcher.commands()}
            assert (
                "zigbee2mqtt/living_room_light/set",
                '{"state":"ON","brightness":254,"color":{"hex":"#FFA500"}}',
            ) in payloads
            assert not any("garage" in topic for topic, _p in payloads)
            assert home.narrations == ["Rain on the windows, jazz in the air."]
            correction = [r for r in llm.requests if r["model"] == "vibe-planner"][1]["messages"]
            refused = [
                m["content"] for m in correction if m["role"] == "tool" and m["content"].startswith("error")
            ]
            assert refused == [
                "error: unknown light device 'garage_light' (declared: bedroom_light, kitchen_light, "
                "living_room_light); correct this call"
            ]
            master = [e.tool for e in home.of("agent_tool")]
            assert master == ["call_vibe_agent"]
            # The next turn: the finished scene is news for the model, before the user's words.
            assert await reply_of(agent, 2, "how does it look?") == "It is ready."
            last = [r for r in llm.requests if r["model"] == "chat"][-1]["messages"]
            news = [m["content"] for m in last if m["role"] == "system" and m["content"].startswith("[news")]
            assert len(news) == 1 and "'a rainy afternoon in Paris' (vibe-1) is ready" in news[0]
            assert last[-1] == {"role": "user", "content": "how does it look?"}

    asyncio.run(scenario())


def test_never_mind_cancels_the_running_scene(broker: Broker, registry: DeviceRegistry) -> None:
    async def scenario() -> None:
        async with Home(
            broker, registry, config_for(broker), simulator_options={"silent": ["music"]}
        ) as home:
            agent = LocalAgent(LocalIntentAgent(registry, home.gateway.state_of), home.actions, home.vibe)
            await reply_of(agent, 1, "something for a dinner party")
            await home.until(lambda: home.of("vibe_tool_start", "vibe-1"), "the scene to start")
            # A step checks the broker answers before it publishes: wait for its first command.
            await home.until(lambda: home.watcher.commands(), "the scene's first command")
            sent = len(home.watcher.commands())
            # right after it: stopped, and what it had changed put back (voiced/mouth/scene_undo.py)
            said = await reply_of(agent, 2, "never mind")
            assert said == "Okay, I stopped the scene and put everything back as it was.", said
            assert (await home.finished("vibe-1")).kind == "vibe_cancelled"
            assert home.watcher.commands()[sent:]  # the scene had changed something: put back
            every = ("living_room_light", "kitchen_light", "bedroom_light", "diffuser")
            await home.until(
                lambda: all(home.simulator.state_of(name)["state"] == "OFF" for name in every),
                "every device off again, as before the scene",
            )
            assert await reply_of(agent, 3, "stop the scene") == "There's no scene being set up."
            assert json.loads(home.watcher.commands()[0][2])  # the scene had begun

    asyncio.run(scenario())


def test_never_mind_puts_back_a_change_sent_but_not_yet_reported(
    broker: Broker, registry: DeviceRegistry
) -> None:
    """Devices that report 2 s after a command: the scene's first change is on its way, not yet
    in any report, when "never mind" comes; it is put back all the same."""

    async def scenario() -> None:
        async with Home(broker, registry, config_for(broker), simulator_options={"delay_s": 2.0}) as home:
            agent = LocalAgent(LocalIntentAgent(registry, home.gateway.state_of), home.actions, home.vibe)
            every = ("living_room_light", "kitchen_light", "bedroom_light", "diffuser")
            before = {name: home.simulator.state_of(name)["state"] for name in every}
            await reply_of(agent, 1, "something for a dinner party")
            await home.until(lambda: home.watcher.commands(), "the scene's first command")
            said = await reply_of(agent, 2, "never mind")
            assert said == "Okay, I stopped the scene and put everything back as it was.", said
            await asyncio.sleep(2.5)  # every report is in by now, the scene's and the putting back's
            await home.until(
                lambda: {name: home.simulator.state_of(name)["state"] for name in every} == before,
                "every device as before the scene",
            )

    asyncio.run(scenario())


def test_a_silent_device_already_in_the_asked_state_is_not_taken_as_confirmed(
    broker: Broker, registry: DeviceRegistry
) -> None:
    from voiced.devices.model import MusicSet

    async def scenario() -> None:
        async with Home(
            broker, registry, config_for(broker), simulator_options={"silent": ["music"]}
        ) as home:
            # silent to commands, but its retained state comes in as the gateway subscribes
            await home.until(lambda: home.gateway.state_of("music") is not None, "the music's retained state")
            assert home.gateway.state_of("music") == {"state": "stopped", "genre": None, "volume": 50}
            same = MusicSet(device="music", action="stop", volume=50)
            result = await home.actions.execute_confirmed(
                1, same, task_id="t", ack_timeout=2, confirm_timeout=0.5
            )
            assert not result.ok and "no state report since the command" in result.message
            # A device that does report confirms the same request at once.
            kitchen = home.gateway.state_of("kitchen_light")
            assert kitchen is not None and kitchen["state"] == "OFF"
            from voiced.devices.model import LightSet

            off = LightSet(device="kitchen_light", state="OFF")
            result = await home.actions.execute_confirmed(
                2, off, task_id="t", ack_timeout=2, confirm_timeout=2
            )
            assert result.ok, result.message

    asyncio.run(scenario())
