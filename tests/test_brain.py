"""The brain in-process: the notice reaches the next reply's model context, the barrier waits and times
out against a scripted LLM over real HTTP, invalid structured output is not applied."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncGenerator
from pathlib import Path

import pytest

from tests.openai_server import ScriptedServer, Text
from voiced.brain.brain import Brain
from voiced.brain.setup import build_brain
from voiced.brain.state import TurnRecord
from voiced.brain.store import StateStore
from voiced.bus import EventBus
from voiced.config import BrainConfig, Config, LlmConfig
from voiced.devices.registry import DeviceRegistry
from voiced.events import CommandSent
from voiced.mouth.llm import LlmAgent

ANALYSIS = json.dumps({"preferences": {"genres": ["jazz"]}, "risk": None})


def brain_for(
    tmp_path: Path, registry: DeviceRegistry, bus: EventBus, **brain: object
) -> tuple[Brain, Config]:
    config = Config(brain=BrainConfig.model_validate({"state_file": tmp_path / "state.sqlite", **brain}))
    return build_brain(config, registry, bus), config


def test_a_notice_from_turn_n_is_in_the_models_context_in_turn_n_plus_1_and_then_gone(
    tmp_path: Path, registry: DeviceRegistry, llm: ScriptedServer
) -> None:
    llm.push(Text("Did you mean jazz?"), Text("Here is some jazz."))

    async def scenario() -> None:
        bus = EventBus()
        brain, _config = brain_for(tmp_path, registry, bus)
        agent = LlmAgent(LlmConfig(base_url=llm.base_url), registry, actions=None)  # type: ignore[arg-type]
        brain.finished(
            TurnRecord(turn=1, user="play some jess", reply="Sorry, I didn't catch that.", understood=False)
        )
        assert await brain.barrier(2)
        for turn, text in ((2, "I meant jazz"), (3, "thanks")):
            context = brain.context(turn)
            "".join([piece async for piece in agent.reply(turn, text, context=context.for_model)])
            brain.finished(TurnRecord(turn=turn, user=text, reply="..."))
            assert await brain.barrier(turn + 1)
        await brain.aclose()
        await agent.aclose()

    asyncio.run(scenario())
    notices = [
        [m["content"] for m in request["messages"] if m["content"] and m["content"].startswith("[notice")]
        for request in llm.requests
    ]
    assert len(notices) == 2
    assert notices[0] == [
        "[notice for this reply] Last turn 'jess' was probably a mishearing of 'jazz': "
        "if the user repeats it, read it as 'jazz'."
    ]
    assert notices[1] == []  # used once, then gone
    assert any("[what we know] status Conversation" in m["content"] for m in llm.requests[1]["messages"])


def test_the_barrier_waits_for_a_slow_analyst_and_gives_up_on_one_past_its_limit(
    tmp_path: Path, registry: DeviceRegistry, llm: ScriptedServer
) -> None:
    llm.push(Text(ANALYSIS, first_delay_s=2.0), model="brain")
    llm.push(Text(ANALYSIS, first_delay_s=40.0), model="brain")
    llm.push(Text(ANALYSIS), model="brain")

    async def scenario() -> None:
        bus = EventBus()
        events = bus.subscribe()
        config = Config(
            llm=LlmConfig(base_url=llm.base_url),
            brain=BrainConfig(state_file=tmp_path / "state.sqlite", model="brain", barrier_timeout_s=3.0),
        )
        brain = build_brain(config, registry, bus)
        brain.finished(TurnRecord(turn=1, user="play some jazz", reply="Playing jazz."))
        start = time.monotonic()
        assert await brain.barrier(2)  # waits for the 2 s analysis
        waited = time.monotonic() - start
        assert 1.5 < waited < 3.0
        assert brain.state.processed_turns == 1 and brain.state.preferences.genres == ["jazz"]
        brain.finished(TurnRecord(turn=2, user="louder", reply="Turning the music up."))
        start = time.monotonic()
        assert not await brain.barrier(3)  # the 40 s analysis is given up at 3 s
        assert 2.9 < time.monotonic() - start < 4.5
        # The model's word on turn 2 is lost, but the rules' analysis of it stands in.
        assert brain.state.processed_turns == 2
        assert [t.user for t in brain.state.recent_turns] == ["play some jazz", "louder"]
        assert brain.state.preferences.genres == ["jazz"]  # the last good state is built on
        brain.finished(TurnRecord(turn=3, user="thanks", reply="You're welcome."))
        assert await brain.barrier(4)
        assert brain.state.processed_turns == 3
        kinds = []
        while not events.empty():
            event = events.get_nowait()
            kinds.append((event.kind, getattr(event, "timed_out", None)))
        assert ("barrier_wait", True) in kinds and ("barrier_wait", False) in kinds
        await brain.aclose()

    asyncio.run(scenario())


def test_invalid_structured_output_is_not_applied(
    tmp_path: Path, registry: DeviceRegistry, llm: ScriptedServer, caplog: pytest.LogCaptureFixture
) -> None:
    llm.push(Text('{"preferences": {"genres": "not a list"}, "surprise": 1}'), model="brain")

    async def scenario() -> None:
        config = Config(
            llm=LlmConfig(base_url=llm.base_url),
            brain=BrainConfig(state_file=tmp_path / "s.sqlite", model="brain"),
        )
        brain = build_brain(config, registry, EventBus())
        brain.finished(TurnRecord(turn=1, user="set the diffuser to lavender", reply="Setting it."))
        assert await brain.barrier(2)
        # The rules' analysis stands; the model's invalid answer changed nothing.
        assert brain.state.processed_turns == 1 and brain.state.preferences.genres == []
        assert brain.state.preferences.scents == ["lavender"]
        await brain.aclose()

    with caplog.at_level(logging.WARNING):
        asyncio.run(scenario())
    assert "brain analyst: invalid output, not applied" in caplog.text


def test_a_reply_cut_off_by_barge_in_is_recorded_as_heard_without_corrupting_the_state(
    tmp_path: Path, registry: DeviceRegistry
) -> None:
    from voiced.brain.turns import TurnThinking

    async def reply() -> AsyncGenerator[str, None]:
        yield "The first sentence was heard. "
        await asyncio.sleep(10)  # the barge-in lands here
        yield "This one never was."

    async def scenario() -> None:
        bus = EventBus()
        brain, _config = brain_for(tmp_path, registry, bus)
        thinking = TurnThinking(brain, None, bus, filler="One moment.")
        pieces = thinking.watch(1, "tell me a long story", reply())
        assert await anext(pieces) == "The first sentence was heard. "
        consumer = asyncio.create_task(anext(pieces))
        await asyncio.sleep(0.05)
        consumer.cancel()  # what the barge-in lane does to the turn
        await asyncio.wait([consumer])
        await pieces.aclose()
        thinking.end(1, "tell me a long story", "The first sentence was heard.", interrupted=True)
        thinking.end(1, "tell me a long story", "again", interrupted=True)  # recorded once only
        assert await brain.barrier(2)
        state = brain.state
        assert state.processed_turns == 1
        (turn,) = state.recent_turns
        assert turn.interrupted and turn.reply == "The first sentence was heard."
        assert [p.kind for p in state.pain_points] == ["interrupted"]
        reloaded = StateStore(tmp_path / "state.sqlite").load()
        assert reloaded == state
        await brain.aclose()

    asyncio.run(scenario())


def test_a_reply_analysed_whole_then_cut_off_is_amended_to_what_was_heard(
    tmp_path: Path, registry: DeviceRegistry
) -> None:
    from voiced.brain.turns import TurnThinking

    async def reply() -> AsyncGenerator[str, None]:
        yield "Turning on the kitchen light. And here is a long story about it."

    async def scenario() -> None:
        bus = EventBus()
        brain, _config = brain_for(tmp_path, registry, bus)
        thinking = TurnThinking(brain, None, bus, filler="One moment.")
        said = [piece async for piece in thinking.watch(1, "kitchen light on", reply())]
        assert said  # the whole reply was produced, and the brain started on it
        thinking.end(1, "kitchen light on", "Turning on the kitchen light.", interrupted=True)
        thinking.end(1, "kitchen light on", "Turning on the kitchen light.", interrupted=True)
        assert await brain.barrier(2) and await brain.barrier(2)
        (turn,) = brain.state.recent_turns
        assert turn.interrupted and turn.reply == "Turning on the kitchen light."
        assert [p.kind for p in brain.state.pain_points] == ["interrupted"]
        assert StateStore(tmp_path / "state.sqlite").load() == brain.state
        await brain.aclose()

    asyncio.run(scenario())


def test_a_cut_off_turn_whose_slow_analysis_is_given_up_is_recorded_as_heard_and_nothing_runs_on(
    tmp_path: Path, registry: DeviceRegistry, llm: ScriptedServer
) -> None:
    llm.push(Text(ANALYSIS), model="brain")
    llm.push(Text(ANALYSIS, first_delay_s=40.0), model="brain")
    llm.push(Text(ANALYSIS), model="brain")

    async def scenario() -> None:
        config = Config(
            llm=LlmConfig(base_url=llm.base_url),
            brain=BrainConfig(state_file=tmp_path / "state.sqlite", model="brain", barrier_timeout_s=2.0),
        )
        brain = build_brain(config, registry, EventBus())
        brain.finished(TurnRecord(turn=1, user="play some jazz", reply="Playing jazz."))
        assert await brain.barrier(2)
        brain.finished(TurnRecord(turn=2, user="tell me a story", reply="Once upon a time. The end."))
        await asyncio.sleep(0.2)  # the model is thinking about turn 2 (for 40 s)
        brain.amend(2, "Once upon a time.")  # the user talked over it
        assert not await brain.barrier(3)
        turns = {t.turn: t for t in brain.state.recent_turns}
        assert sorted(turns) == [1, 2] and turns[2].interrupted and turns[2].reply == "Once upon a time."
        assert [p.kind for p in brain.state.pain_points] == ["interrupted"]
        brain.finished(TurnRecord(turn=3, user="thanks", reply="You're welcome."))
        assert await brain.barrier(4)
        await asyncio.sleep(0.5)  # nothing given up may still be running to overwrite turn 3
        assert [t.turn for t in brain.state.recent_turns] == [1, 2, 3]
        assert brain.state.processed_turns == 3
        assert StateStore(tmp_path / "state.sqlite").load() == brain.state
        await brain.aclose()

    asyncio.run(scenario())


def test_a_plain_text_command_payload_is_analysed_and_the_next_turn_does_not_wait(
    tmp_path: Path, registry: DeviceRegistry
) -> None:
    """Tasmota's payload is "ON", not JSON: the turn is analysed all the same (it used to die in
    json.loads, and the barrier of the next turn waited out its limit)."""

    async def scenario() -> None:
        bus = EventBus()
        bus.bind_loop(asyncio.get_running_loop())
        brain, _config = brain_for(tmp_path, registry, bus)
        bus.publish(CommandSent(turn=1, device="coffee_machine", topic="tasmota/cmnd/POWER", payload="ON"))
        bus.publish(
            CommandSent(turn=1, device="diffuser", topic="z2m/diffuser/set", payload='{"scent": "lavender"}')
        )
        await asyncio.sleep(0)
        brain.finished(TurnRecord(turn=1, user="turn on the coffee machine and lavender", reply="Done."))
        start = time.monotonic()
        assert await brain.barrier(2)
        assert time.monotonic() - start < 2.0
        assert brain.state.processed_turns == 1 and brain.state.preferences.scents == ["lavender"]
        await brain.aclose()

    asyncio.run(scenario())
