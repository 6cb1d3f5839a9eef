"""The LLM agent over real HTTP (a scripted OpenAI-compatible server) and a real Mosquitto broker."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import aclosing, asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

import openai
import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from tests.conftest import Broker, free_port
from tests.openai_server import Call, HttpError, Raw, ScriptedServer, Text, Tools, call
from voiced.bus import EventBus, Subscription
from voiced.config import Config, LlmConfig, MqttConfig
from voiced.devices.actions import DeviceActions
from voiced.devices.gateway import DeviceGateway
from voiced.devices.registry import DeviceRegistry
from voiced.events import CommandSent
from voiced.mouth.agent import Agent
from voiced.mouth.hybrid import (
    LOST_THREAD_APOLOGY,
    UNAVAILABLE_APOLOGY,
    ApologizingAgent,
    HybridAgent,
    build_agent,
)
from voiced.mouth.intents import LocalIntentAgent
from voiced.mouth.llm import LlmAgent, LlmUnavailable
from voiced.mouth.local_agent import LocalAgent

WAIT_S = 10.0
_A = TypeVar("_A")


class Watcher:
    """A paho client on the real broker recording every command payload, byte for byte."""

    def __init__(self, port: int) -> None:
        self.messages: list[tuple[str, str]] = []
        self._changed = threading.Condition()
        self._client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        self._client.on_message = self._on_message
        subscribed = threading.Event()
        self._client.on_subscribe = lambda *_args: subscribed.set()
        self._client.connect("127.0.0.1", port)
        self._client.loop_start()
        self._client.subscribe([("zigbee2mqtt/+/set", 1), ("voiced/+/set", 1)])
        assert subscribed.wait(5), "no SUBACK from the broker"

    def _on_message(self, _client: Any, _userdata: Any, message: mqtt.MQTTMessage) -> None:
        with self._changed:
            self.messages.append((message.topic, message.payload.decode()))
            self._changed.notify_all()

    def wait_for(self, count: int, timeout: float = 5.0) -> list[tuple[str, str]]:
        with self._changed:
            self._changed.wait_for(lambda: len(self.messages) >= count, timeout)
            return list(self.messages)

    def publish_state(self, topic: str, payload: bytes) -> None:
        """Retained, like Zigbee2MQTT: the gateway gets it even if it subscribes a moment later."""
        self._client.publish(topic, payload, qos=1, retain=True).wait_for_publish(5)

    def close(self) -> None:
        self._client.disconnect()
        self._client.loop_stop()


@pytest.fixture
def server(llm: ScriptedServer) -> ScriptedServer:
    """The shared scripted server (conftest), under this module's name for it."""
    return llm


@pytest.fixture
def watcher(broker: Broker) -> Iterator[Watcher]:
    watch = Watcher(broker.port)
    try:
        yield watch
    finally:
        watch.close()


@dataclass
class Home:
    registry: DeviceRegistry
    gateway: DeviceGateway
    actions: DeviceActions
    events: Subscription
    agents: list[Any] = field(default_factory=list)  # closed when the home is

    def llm(self, config: LlmConfig, **options: Any) -> LlmAgent:
        return self.adopt(LlmAgent(config, self.registry, self.actions, **options))

    def adopt(self, agent: _A) -> _A:
        self.agents.append(agent)
        return agent

    def sent(self) -> list[CommandSent]:
        found: list[CommandSent] = []
        while not self.events.empty():
            event = self.events.get_nowait()
            if isinstance(event, CommandSent):
                found.append(event)
        return found


@asynccontextmanager
async def home(registry: DeviceRegistry, broker: Broker | None = None) -> AsyncIterator[Home]:
    """Gateway + actions + bus; connected to the real broker when one is given."""
    bus = EventBus()
    bus.bind_loop(asyncio.get_running_loop())
    events = bus.subscribe()
    mqtt_config = MqttConfig(port=free_port()) if broker is None else broker.mqtt_config("llm-test")
    gateway = DeviceGateway(registry, mqtt_config, bus)
    if broker is not None:
        gateway.start()
        assert await gateway.wait_connected(5)
    house = Home(registry, gateway, DeviceActions(gateway, bus), events)
    try:
        yield house
    finally:
        for agent in house.agents:
            if hasattr(agent, "aclose"):  # LocalAgent holds no connections
                await agent.aclose()
        gateway.stop()


def llm_config(url: str, **overrides: Any) -> LlmConfig:
    values: dict[str, Any] = {
        "base_url": url,
        "model": "scripted",
        "connect_timeout_s": 2.0,
        "first_token_timeout_s": 3.0,
        "total_timeout_s": 10.0,
    }
    return LlmConfig.model_validate({**values, **overrides})


async def collect(agent: Agent, turn: int, text: str) -> list[str]:
    async def run() -> list[str]:
        return [piece async for piece in agent.reply(turn, text)]

    return await asyncio.wait_for(run(), WAIT_S)


def tool_messages(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def test_tool_call_publishes_the_exact_payload_and_the_result_reaches_the_model(
    registry: DeviceRegistry, broker: Broker, watcher: Watcher, server: ScriptedServer
) -> None:
    server.push(
        Tools((call("set_light", device="bedroom_light", state="on", brightness_pct=50),)),
        Text("The bedroom light is on. It is at half brightness."),
    )

    async def scenario() -> list[str]:
        async with home(registry, broker) as house:
            agent = house.llm(llm_config(server.base_url))
            pieces = await collect(agent, 1, "bedroom light to half please")
            assert [(e.topic, e.payload) for e in house.sent()] == [
                ("zigbee2mqtt/bedroom_light/set", '{"state":"ON","brightness":127}')
            ]
            return pieces

    pieces = asyncio.run(scenario())
    assert "".join(pieces) == "The bedroom light is on. It is at half brightness."
    # streamed as it comes, a whole sentence at a time
    assert pieces == ["The bedroom light is on.", " It is at half brightness."]
    assert watcher.wait_for(1) == [("zigbee2mqtt/bedroom_light/set", '{"state":"ON","brightness":127}')]
    first, second = server.requests
    assert first["stream"] is True
    assert first["messages"][0]["role"] == "system"
    assert first["messages"][1:] == [{"role": "user", "content": "bedroom light to half please"}]
    light_tool = next(t for t in first["tools"] if t["function"]["name"] == "set_light")
    assert light_tool["function"]["parameters"]["properties"]["device"]["enum"] == [
        "bedroom_light",
        "kitchen_light",
        "living_room_light",
    ]
    assert {t["function"]["name"] for t in first["tools"]} == {
        "set_light",
        "set_scent",
        "play_music",
        "get_environment",
        "call_vibe_agent",
        "reset_vibe",
    }
    assistant = second["messages"][2]
    assert assistant["tool_calls"][0]["function"] == {
        "name": "set_light",
        "arguments": '{"device": "bedroom_light", "state": "on", "brightness_pct": 50}',
    }
    assert tool_messages(second) == ['ok: sent {"state":"ON","brightness":127} to bedroom_light']
    assert second["messages"][3]["tool_call_id"] == assistant["tool_calls"][0]["id"]


def test_several_tool_calls_in_one_round_all_publish_in_order(
    registry: DeviceRegistry, broker: Broker, watcher: Watcher, server: ScriptedServer
) -> None:
    server.push(
        Tools(
            (
                call("set_light", device="kitchen_light", state="off"),
                call("set_scent", device="diffuser", state="on", scent="lavender", intensity=40),
                call("play_music", device="music", action="play", genre="jazz", volume=30),
            ),
            text="Setting the mood.",
        ),
        Text("All set."),
    )

    async def scenario() -> list[str]:
        async with home(registry, broker) as house:
            agent = house.llm(llm_config(server.base_url))
            return await collect(agent, 1, "make it cosy")

    assert "".join(asyncio.run(scenario())) == "Setting the mood. All set."
    assert watcher.wait_for(3) == [
        ("zigbee2mqtt/kitchen_light/set", '{"state":"OFF"}'),
        ("zigbee2mqtt/diffuser/set", '{"state":"ON","scent":"lavender","intensity":40}'),
        ("voiced/music/set", '{"action":"play","genre":"jazz","volume":30}'),
    ]
    results = tool_messages(server.requests[1])
    assert len(results) == 3 and all(r.startswith("ok: sent") for r in results)
    ids = [c["id"] for c in server.requests[1]["messages"][2]["tool_calls"]]
    assert [m["tool_call_id"] for m in server.requests[1]["messages"][3:6]] == ids


def test_unknown_device_is_refused_and_the_models_correction_works(
    registry: DeviceRegistry, broker: Broker, watcher: Watcher, server: ScriptedServer
) -> None:
    server.push(
        Tools((call("set_light", device="garage_light", state="on"),)),
        Tools((call("set_light", device="kitchen_light", state="on"),)),
        Text("The kitchen light is on."),
    )

    async def scenario() -> None:
        async with home(registry, broker) as house:
            agent = house.llm(llm_config(server.base_url))
            assert "".join(await collect(agent, 1, "garage light on")) == "The kitchen light is on."

    asyncio.run(scenario())
    refusal = tool_messages(server.requests[1])[0]
    assert "unknown light device 'garage_light'" in refusal
    assert "bedroom_light, kitchen_light, living_room_light" in refusal
    assert refusal.endswith("nothing was sent")
    # only the corrected command ever reached the broker (same publisher, so order is kept)
    assert watcher.wait_for(1) == [("zigbee2mqtt/kitchen_light/set", '{"state":"ON"}')]
    assert tool_messages(server.requests[2])[1].startswith("ok: sent")


def test_out_of_range_values_are_clamped_and_reported(
    registry: DeviceRegistry, broker: Broker, watcher: Watcher, server: ScriptedServer
) -> None:
    server.push(
        Tools(
            (
                call("set_light", device="bedroom_light", state="on", brightness_pct=150, color_temp=900),
                call("play_music", device="music", volume=-5),
            )
        ),
        Text("Done."),
    )

    async def scenario() -> None:
        async with home(registry, broker) as house:
            agent = house.llm(llm_config(server.base_url))
            await collect(agent, 1, "max brightness")

    asyncio.run(scenario())
    assert watcher.wait_for(2) == [
        ("zigbee2mqtt/bedroom_light/set", '{"state":"ON","brightness":254,"color_temp":500}'),
        ("voiced/music/set", '{"volume":0}'),
    ]
    light, music = tool_messages(server.requests[1])
    assert "brightness_pct 150 clamped to 100" in light and "color_temp 900 clamped to 500" in light
    assert "volume -5 clamped to 0" in music


def test_malformed_arguments_wrong_types_and_unknown_scents_publish_nothing(
    registry: DeviceRegistry, broker: Broker, watcher: Watcher, server: ScriptedServer
) -> None:
    server.push(
        Tools(
            (
                Call("set_light", '{"device": "bedroom_light", "state": '),
                call("set_light", device="bedroom_light", brightness_pct="very bright"),
                call("set_scent", device="diffuser", scent="garlic"),
                call("set_light", device="bedroom_light", state="on", colour="red"),
                call("open_garage"),
            )
        ),
        Tools((call("set_scent", device="diffuser", state="on", scent="citrus"),)),
        Text("Citrus it is."),
    )

    async def scenario() -> None:
        async with home(registry, broker) as house:
            agent = house.llm(llm_config(server.base_url))
            assert "".join(await collect(agent, 1, "something")) == "Citrus it is."

    asyncio.run(scenario())
    assert watcher.wait_for(1) == [("zigbee2mqtt/diffuser/set", '{"state":"ON","scent":"citrus"}')]
    bad_json, bad_type, bad_scent, bad_name, bad_tool = tool_messages(server.requests[1])
    assert bad_json.startswith("error: the arguments are not valid JSON")
    assert "brightness_pct: Input should be a valid number" in bad_type
    assert "unknown scent 'garlic'" in bad_scent and "lavender" in bad_scent
    assert "colour: Extra inputs are not permitted" in bad_name
    assert "unknown tool 'open_garage'" in bad_tool
    assert all(m.endswith("nothing was sent") for m in tool_messages(server.requests[1]))
    # the malformed JSON is not replayed to the server, which might choke re-parsing it
    assert server.requests[1]["messages"][2]["tool_calls"][0]["function"]["arguments"] == "{}"


def test_environment_and_scene_hooks_answer_without_publishing(
    registry: DeviceRegistry, broker: Broker, watcher: Watcher, server: ScriptedServer
) -> None:
    server.push(
        Tools((call("get_environment"), call("call_vibe_agent", request="cosy"), call("reset_vibe"))),
        Text("It is evening."),
    )

    async def scenario() -> None:
        async with home(registry, broker) as house:
            await asyncio.to_thread(
                watcher.publish_state, "zigbee2mqtt/kitchen_light", b'{"state":"ON","brightness":10}'
            )
            deadline = time.monotonic() + 5
            while house.gateway.state_of("kitchen_light") is None and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            assert house.gateway.state_of("kitchen_light") is not None
            agent = house.llm(llm_config(server.base_url), clock=lambda: datetime(2024, 5, 1, 21, 4))
            await collect(agent, 1, "what's going on")
            assert house.sent() == []

    asyncio.run(scenario())
    environment, vibe, reset = tool_messages(server.requests[1])
    state = json.loads(environment)
    assert state["local_time"] == "Wednesday 2024-05-01 21:04" and state["part_of_day"] == "evening"
    assert state["devices"]["kitchen_light"] == {"state": "ON", "brightness": 10}
    assert state["devices"]["bedroom_light"] == "unknown"
    assert "scenes are not available here" in vibe
    assert reset.startswith("ok")
    assert watcher.wait_for(1, timeout=0.3) == []


def test_slow_first_token_raises_llm_unavailable_quickly(
    registry: DeviceRegistry, server: ScriptedServer
) -> None:
    server.push(Text("Too late.", first_delay_s=5))
    config = llm_config(server.base_url, first_token_timeout_s=0.5)

    async def scenario() -> float:
        async with home(registry) as house:
            agent = house.llm(config)
            started = time.monotonic()
            with pytest.raises(LlmUnavailable, match="within the timeout"):
                await collect(agent, 1, "hello")
            return time.monotonic() - started

    assert asyncio.run(scenario()) < config.first_token_timeout_s + 1.0


@pytest.mark.parametrize(
    "step, reason",
    [
        (HttpError(500), "HTTP 500"),
        (HttpError(503), "HTTP 503"),
        (Raw(b"data: {this is not json\n\n"), "garbled stream"),
        (Raw(b'data: {"unexpected": true}\n\n'), "malformed stream chunk"),
        (Raw(b"data: [DONE]\n\n"), "no text"),
        (None, "connection to"),
    ],
    ids=["http-500", "http-503", "not-json", "not-a-chunk", "empty", "refused"],
)
def test_endpoint_failures_raise_before_anything_is_yielded(
    registry: DeviceRegistry, server: ScriptedServer, step: HttpError | Raw | None, reason: str
) -> None:
    url = server.base_url if step is not None else f"http://127.0.0.1:{free_port()}/v1"
    if step is not None:
        server.push(step)

    async def scenario() -> list[str]:
        pieces: list[str] = []
        async with home(registry) as house:
            agent = house.llm(llm_config(url))
            with pytest.raises(LlmUnavailable, match=reason):
                async for piece in agent.reply(1, "hello"):
                    pieces.append(piece)
        return pieces

    assert asyncio.run(asyncio.wait_for(scenario(), WAIT_S)) == []
    assert len(server.requests) == (1 if step is not None else 0)  # no retries


def test_failure_mid_stream_stops_and_raises(registry: DeviceRegistry, server: ScriptedServer) -> None:
    server.push(Text("One, two. Three four five.", cut_after=3))

    async def scenario() -> list[str]:
        pieces: list[str] = []
        async with home(registry) as house:
            agent = house.llm(llm_config(server.base_url))
            with pytest.raises(LlmUnavailable):
                async for piece in agent.reply(1, "count"):
                    pieces.append(piece)
        return pieces

    # The whole sentence was passed on; half of the next one never is.
    assert asyncio.run(asyncio.wait_for(scenario(), WAIT_S)) == ["One, two."]


def test_tool_rounds_are_bounded(registry: DeviceRegistry, broker: Broker, server: ScriptedServer) -> None:
    loop_call = Tools((call("set_light", device="bedroom_light", state="on"),))
    server.push(loop_call, loop_call, loop_call)

    async def scenario() -> None:
        async with home(registry, broker) as house:
            agent = house.llm(llm_config(server.base_url, max_tool_rounds=1))
            with pytest.raises(LlmUnavailable, match="no text"):
                await collect(agent, 1, "on")
            assert len(house.sent()) == 1  # the second round's calls were not executed

    asyncio.run(scenario())
    assert [r["tool_choice"] for r in server.requests] == ["auto", "none"]


def test_hybrid_local_first_llm_for_the_rest_and_apologies(
    registry: DeviceRegistry, broker: Broker, watcher: Watcher, server: ScriptedServer
) -> None:
    async def scenario() -> None:
        async with home(registry, broker) as house:
            local = LocalIntentAgent(registry, house.gateway.state_of)
            llm = house.llm(llm_config(server.base_url))
            agent = HybridAgent(local, llm, house.actions)
            local_reply = await collect(agent, 1, "turn on the bedroom light")
            assert len(local_reply) == 1 and local_reply[0]
            assert server.requests == []  # the local path never asks the model

            server.push(Text("Why did the lamp go to school? To get brighter."))
            assert "".join(await collect(agent, 2, "tell me a joke")).startswith("Why did the lamp")
            history = server.requests[0]["messages"]
            assert history[1:3] == [
                {"role": "user", "content": "turn on the bedroom light"},
                {"role": "assistant", "content": local_reply[0]},
            ]

            server.push(HttpError(500))
            assert await collect(agent, 3, "what is the meaning of life") == [UNAVAILABLE_APOLOGY]
            server.push(Text("Well, it all started long ago. It was a dark night.", cut_after=8))
            pieces = await collect(agent, 4, "tell me a story")
            assert pieces == ["Well, it all started long ago.", LOST_THREAD_APOLOGY]
            server.push(Text("The light is a funny story.", cut_after=1))
            assert await collect(agent, 5, "another one") == [UNAVAILABLE_APOLOGY]  # not "The Sorry, …"

    asyncio.run(scenario())
    assert watcher.wait_for(1) == [("zigbee2mqtt/bedroom_light/set", '{"state":"ON"}')]


def test_build_agent_chooses_by_kind_and_llm_only_still_apologizes(registry: DeviceRegistry) -> None:
    closed = f"http://127.0.0.1:{free_port()}/v1"

    async def scenario() -> None:
        async with home(registry) as house:
            intents = LocalIntentAgent(registry, house.gateway.state_of)
            kinds = {
                "local": (Config(), LocalAgent),
                "llm": (
                    Config.model_validate({"agent": {"kind": "llm"}, "llm": {"base_url": closed}}),
                    ApologizingAgent,
                ),
                "hybrid": (Config.model_validate({"llm": {"base_url": closed}}), HybridAgent),
            }
            for config, expected in kinds.values():
                built = house.adopt(build_agent(config, registry, house.actions, intents))
                assert isinstance(built, expected)
            llm_only = house.adopt(build_agent(kinds["llm"][0], registry, house.actions, intents))
            assert await collect(llm_only, 1, "hello") == [UNAVAILABLE_APOLOGY]

    asyncio.run(scenario())


def test_history_is_bounded_to_max_history_turns(registry: DeviceRegistry, server: ScriptedServer) -> None:
    server.push(*(Text(f"Answer {n}.") for n in range(1, 5)))

    async def scenario() -> None:
        async with home(registry) as house:
            agent = house.llm(llm_config(server.base_url, max_history_turns=2))
            for turn in range(1, 5):
                await collect(agent, turn, f"Question {turn}?")

    asyncio.run(scenario())
    assert [m["content"] for m in server.requests[3]["messages"][1:]] == [
        "Question 2?",
        "Answer 2.",
        "Question 3?",
        "Answer 3.",
        "Question 4?",
    ]
    assert server.requests[3]["messages"][0]["role"] == "system"


def test_interrupted_reply_is_truncated_in_the_next_requests_history(
    registry: DeviceRegistry, server: ScriptedServer
) -> None:
    server.push(Text("The quick brown fox jumps over the lazy dog."), Text("Sure."))

    async def scenario() -> None:
        async with home(registry) as house:
            agent = house.llm(llm_config(server.base_url))
            await collect(agent, 1, "say the pangram")
            agent.spoken(1, "The quick brown", interrupted=True)
            await collect(agent, 2, "stop")

    asyncio.run(scenario())
    assert server.requests[1]["messages"][1:] == [
        {"role": "user", "content": "say the pangram"},
        {"role": "assistant", "content": "The quick brown [interrupted]"},
        {"role": "user", "content": "stop"},
    ]


def test_cancelling_the_consumer_closes_the_stream_promptly(
    registry: DeviceRegistry, server: ScriptedServer
) -> None:
    server.push(Text("Word. " * 200, token_delay_s=0.05), Text("Okay."))

    async def scenario() -> float:
        async with home(registry) as house:
            agent = house.llm(llm_config(server.base_url))
            pieces: list[str] = []

            async def consume() -> None:
                async for piece in agent.reply(1, "talk for a long time"):
                    pieces.append(piece)

            task = asyncio.create_task(consume())
            deadline = time.monotonic() + 5
            while len(pieces) < 3 and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            assert len(pieces) >= 3
            started = time.monotonic()
            task.cancel()
            done, _ = await asyncio.wait({task}, timeout=1.0)
            elapsed = time.monotonic() - started
            assert task in done and task.cancelled()
            assert await asyncio.to_thread(server.wait_aborted, 1, 3.0), "server never saw the close"
            agent.spoken(1, "Word. Word.", interrupted=True)
            assert "".join(await collect(agent, 2, "never mind")) == "Okay."
            return elapsed

    assert asyncio.run(scenario()) < 1.0
    assert server.requests[1]["messages"][2] == {
        "role": "assistant",
        "content": "Word. Word. [interrupted]",
    }


def test_closing_a_paused_reply_closes_the_stream_through_the_hybrid_wrappers(
    registry: DeviceRegistry, server: ScriptedServer
) -> None:
    """Barge-in may land while the consumer is busy (speaking), not inside the agent: aclosing still works."""
    server.push(Text("Word. " * 200, token_delay_s=0.05))

    async def scenario() -> None:
        async with home(registry) as house:
            local = LocalIntentAgent(registry, house.gateway.state_of)
            agent = house.adopt(HybridAgent(local, house.llm(llm_config(server.base_url)), house.actions))
            started = asyncio.Event()

            async def speak_while_streaming() -> None:
                async with aclosing(agent.reply(1, "tell me everything")) as pieces:
                    async for _piece in pieces:
                        started.set()
                        await asyncio.sleep(10)  # "playing" the first piece

            task = asyncio.create_task(speak_while_streaming())
            await asyncio.wait_for(started.wait(), 5)
            task.cancel()
            done, _ = await asyncio.wait({task}, timeout=1.0)
            assert task in done and task.cancelled()
            assert await asyncio.to_thread(server.wait_aborted, 1, 3.0), "server never saw the close"

    asyncio.run(scenario())


def test_scripted_server_also_answers_non_streaming_requests(server: ScriptedServer) -> None:
    server.push(Text("Plain answer."), Tools((call("reset_vibe"),)))

    async def scenario() -> None:
        async with openai.AsyncOpenAI(
            base_url=server.base_url, api_key="not-needed", max_retries=0
        ) as client:
            messages: list[Any] = [{"role": "user", "content": "hi"}]
            text = await asyncio.wait_for(
                client.chat.completions.create(model="m", messages=messages), WAIT_S
            )
            assert text.choices[0].message.content == "Plain answer."
            tools = await asyncio.wait_for(
                client.chat.completions.create(model="m", messages=messages), WAIT_S
            )
            assert tools.choices[0].finish_reason == "tool_calls"
            assert tools.choices[0].message.tool_calls is not None

    asyncio.run(scenario())
    assert [r.get("stream") for r in server.requests] == [None, None]
