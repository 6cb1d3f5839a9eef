"""Hostile tool calls from the model: superscript digits, numbers of thousands of digits, nesting
100,000 deep, 10 MB of arguments, control characters. Each is a ToolError the model can read, short
and escaped; nothing is published; no later request carries the megabytes; no log line is forged."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import openai
import pytest

from tests.conftest import Broker
from tests.openai_server import Call, ScriptedServer, Text, Tools, call
from tests.test_llm_agent import Watcher, collect, home, llm_config
from voiced.config import LlmConfig, VibeConfig
from voiced.devices.registry import DeviceRegistry
from voiced.devices.tools import MAX_ARGUMENT_CHARS, DeviceTools, ToolError
from voiced.vibe.llm_planner import LlmPlanner
from voiced.vibe.plan import VibeStep
from voiced.vibe.presets import PresetPlanner

MB = 1024 * 1024
LONGEST_ERROR = 400  # what the model reads back: an excerpt, never the argument
DIGITS_5000 = "9" * 5000


def light(**fields: Any) -> str:
    return json.dumps({"device": "bedroom_light", **fields})


HOSTILE = {
    "superscript-color-temp": light(color_temp="²"),
    "arabic-indic-digits": light(color_temp="٣٠٠"),
    "5000-digit-brightness": light()[:-1] + f', "brightness_pct": {DIGITS_5000}}}',
    "5000-digit-color-temp": light()[:-1] + f', "color_temp": {DIGITS_5000}}}',
    "5000-digit-string": light(color_temp=DIGITS_5000),
    "5000-digit-exponent": light()[:-1] + ', "brightness_pct": 1e5000}',
    "nested-100000": '{"device": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "nested-3000": '{"device": ' + "[" * 3000 + "]" * 3000 + "}",
    "10-mb-device": light(device="x" * (10 * MB)),
    "control-chars": json.dumps({"device": "bed\nroom\x1b[31m\u202e", "state": "on"}),
    "nan": light()[:-1] + ', "brightness_pct": NaN}',
    "not-an-object": "[1, 2, 3]",
}


@pytest.mark.parametrize("arguments", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_arguments_are_a_short_tool_error(registry: DeviceRegistry, arguments: str) -> None:
    with pytest.raises(ToolError) as raised:
        DeviceTools(registry).command("set_light", arguments, [])
    message = str(raised.value)
    assert len(message) < LONGEST_ERROR
    assert not any(ord(char) < 32 or char == "\u202e" for char in message)


def test_a_huge_but_legal_number_is_clamped_and_reported(registry: DeviceRegistry) -> None:
    notes: list[str] = []
    command = DeviceTools(registry).command(
        "set_light", light()[:-1] + f', "color_temp": {"9" * 4000}}}', notes
    )
    assert command.model_dump(exclude_none=True)["color_temp"] == 500  # the light's warmest
    assert notes == ["color_temp (a huge number) clamped to 500"]


def test_the_agent_answers_hostile_calls_without_publishing_or_carrying_megabytes(
    registry: DeviceRegistry,
    broker: Broker,
    llm: ScriptedServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    hostile = Tools(
        (
            Call("set_light", light(device="x" * (10 * MB)), piece=MB),
            Call("set_light", HOSTILE["superscript-color-temp"]),
            Call("set_light", HOSTILE["nested-3000"]),
            Call("set_light", HOSTILE["control-chars"]),
            Call("set_light\nFORGED log line", "{}"),
        )
    )
    llm.push(hostile, Text("I could not do that."), Text("Okay."))
    caplog.set_level(logging.INFO)
    watcher = Watcher(broker.port)

    async def scenario() -> tuple[list[str], list[str]]:
        async with home(registry, broker) as house:
            agent = house.llm(llm_config(llm.base_url))
            first = await collect(agent, 1, "do something odd")
            second = await collect(agent, 2, "never mind")
            assert house.sent() == []
            return first, second

    try:
        first, second = asyncio.run(scenario())
        assert watcher.wait_for(1, timeout=0.5) == []  # nothing reached the broker
    finally:
        watcher.close()
    assert first == ["I could not do that."] and second == ["Okay."]
    results = [m["content"] for m in llm.requests[1]["messages"] if m["role"] == "tool"]
    assert len(results) == 5
    assert all(r.startswith("error: ") and len(r) < LONGEST_ERROR for r in results)
    assert f"over {MAX_ARGUMENT_CHARS} characters" in results[0]
    assert "color_temp" in results[1] and "nested 3001 levels deep" in results[2]
    # Every later request is small: the 10 MB argument was neither echoed nor kept.
    for request in llm.requests[1:]:
        assert len(json.dumps(request)) < 20_000
    lines = [record.getMessage() for record in caplog.records]
    assert not any("\n" in line or "\x1b" in line or "\u202e" in line for line in lines)
    assert any("FORGED" in line for line in lines)  # logged, escaped, on one line


def planner(registry: DeviceRegistry, url: str) -> LlmPlanner:
    client = openai.AsyncOpenAI(base_url=url, api_key="not-needed", max_retries=0)
    presets = PresetPlanner(None, registry, "relax")
    return LlmPlanner(LlmConfig(base_url=url, model="scripted"), VibeConfig(), registry, presets, client)


def test_the_planner_runs_a_resent_valid_step_once_and_replays_no_megabytes(
    registry: DeviceRegistry, llm: ScriptedServer
) -> None:
    valid = call("set_light", device="living_room_light", state="on", brightness_pct=30)
    llm.push(
        Tools((valid, call("set_scent", device="diffuser", scent="gunpowder"), Call("play_music", "x" * MB))),
        Tools((valid, call("set_scent", device="diffuser", scent="lavender"))),
    )

    async def scenario() -> Any:
        plans = planner(registry, llm.base_url)
        try:
            return await asyncio.wait_for(plans.plan("help me relax"), 15)
        finally:
            await plans.aclose()

    plan = asyncio.run(scenario())
    assert plan.source == "llm"
    assert plan.steps == (
        VibeStep(tool="set_light", input=json.loads(valid.arguments)),
        VibeStep(tool="set_scent", input={"device": "diffuser", "scent": "lavender"}),
    )
    correction = llm.requests[1]
    assert len(json.dumps(correction)) < 20_000
    refused = [m["content"] for m in correction["messages"] if m["role"] == "tool"]
    assert refused[0] == "ok" and "gunpowder" in refused[1] and "over 8192 characters" in refused[2]
