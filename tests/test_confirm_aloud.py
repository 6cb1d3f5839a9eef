"""A repeated request or a failed device: the next reply waits for the device's own report and says it.

The brain asks for it (the judge's notice carries `confirm`); the local path and the hybrid's local
answers say their first sentence at once and the device's word after it. Against a real Mosquitto
and the device simulator.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from tests.conftest import Broker
from tests.openai_server import ScriptedServer, Text
from tests.speech_fixtures import RealTimeSink, synthesizer
from tests.vibe_home import Home
from voiced.brain.analyst import OfflineAnalyst, interview_slots
from voiced.brain.judge import OfflineJudge
from voiced.brain.setup import build_brain
from voiced.brain.state import ConversationState, TurnRecord
from voiced.bus import EventBus
from voiced.config import BrainConfig, Config, LlmConfig
from voiced.devices.actions import DeviceActions
from voiced.devices.registry import DeviceRegistry
from voiced.devices.vocabulary import HomeVocabulary
from voiced.events import AgentText, CommandRefused, Event, TtsStarted
from voiced.mouth.agent import Agent, TurnContext
from voiced.mouth.hybrid import HybridAgent
from voiced.mouth.intents import LocalIntentAgent
from voiced.mouth.llm import LlmAgent
from voiced.mouth.local_agent import LocalAgent
from voiced.mouth.speech import SpeechOutput, SpeechProgress

CONFIRM = TurnContext(confirm=True)


async def timed_pieces(agent: Agent, turn: int, text: str, context: TurnContext) -> list[tuple[float, str]]:
    start = time.monotonic()
    return [(time.monotonic() - start, piece) async for piece in agent.reply(turn, text, context)]


def local(home: Home, registry: DeviceRegistry, actions: DeviceActions) -> LocalAgent:
    return LocalAgent(LocalIntentAgent(registry, home.gateway.state_of), actions, home.vibe)


def test_asked_to_confirm_the_reply_speaks_first_then_says_what_the_device_reports(
    broker: Broker, registry: DeviceRegistry
) -> None:
    async def scenario() -> tuple[list[tuple[float, str]], list[tuple[float, str]]]:
        config = Config(mqtt=broker.mqtt_config("voiced-confirm"))
        async with Home(broker, registry, config, simulator_options={"delay_s": 0.4}) as home:
            agent = local(home, registry, DeviceActions(home.gateway, home.bus, confirm_timeout_s=3.0))
            confirmed = await timed_pieces(agent, 1, "Turn on the kitchen light.", CONFIRM)
            plain = await timed_pieces(agent, 2, "Turn off the kitchen light.", TurnContext())
            return confirmed, plain

    confirmed, plain = asyncio.run(scenario())
    assert [piece for _t, piece in confirmed] == [
        "Turning on the kitchen light.\n",
        "The kitchen light says it's on.",
    ]
    (first_t, _), (second_t, _) = confirmed
    assert first_t < 0.3 < 0.4 <= second_t < 2.0  # the first words do not wait for the device
    assert [piece for _t, piece in plain] == ["Turning off the kitchen light."]
    assert plain[0][0] < 0.3


def test_say_that_again_repeats_the_last_reply(broker: Broker, registry: DeviceRegistry) -> None:
    async def scenario() -> list[str]:
        config = Config(mqtt=broker.mqtt_config("voiced-repeat"))
        async with Home(broker, registry, config) as home:
            agent = local(home, registry, DeviceActions(home.gateway, home.bus, confirm_timeout_s=3.0))
            said = []
            for turn, text in enumerate(["Turn on the kitchen light.", "say that again", "pardon"], 1):
                said.append("".join([piece async for piece in agent.reply(turn, text)]))
            return said

    assert asyncio.run(scenario()) == [
        "Turning on the kitchen light.",
        "I said: Turning on the kitchen light.",
        "I said: Turning on the kitchen light.",
    ]


def test_a_device_that_never_reports_back_is_not_claimed_and_the_first_words_do_not_wait_for_it(
    broker: Broker, registry: DeviceRegistry
) -> None:
    async def scenario() -> tuple[list[tuple[float, Event]], float]:
        config = Config(mqtt=broker.mqtt_config("voiced-confirm"))
        async with Home(broker, registry, config, simulator_options={"silent": ["kitchen_light"]}) as home:
            agent = local(home, registry, DeviceActions(home.gateway, home.bus, confirm_timeout_s=3.0))
            speech = SpeechOutput(synthesizer(), RealTimeSink(), home.bus, sentence_silence_s=0.1)
            start = time.monotonic()
            await speech.say(4, agent.reply(4, "Turn on the kitchen light.", CONFIRM), SpeechProgress())
            await home.until(lambda: home.of("command_refused"), "the refusal on the bus")
            return [(e.t - start, e) for e in home.events if e.t >= start], start

    timed, _start = asyncio.run(scenario())
    said = [e.text for _t, e in timed if isinstance(e, AgentText)]
    assert said == [
        "Turning on the kitchen light.",
        "But the kitchen light hasn't reported back, so I can't confirm it.",
    ]
    started = next(t for t, e in timed if isinstance(e, TtsStarted))
    assert started < 1.5  # the first sentence plays while the light is waited for (3 s)
    refused = [(t, e) for t, e in timed if isinstance(e, CommandRefused)]
    assert len(refused) == 1 and 3.0 <= refused[0][0] < 4.5
    event = refused[0][1]
    assert event.turn == 4 and event.device == "kitchen_light"
    assert event.reason == "did not confirm within 3 s (no state report since the command)"


def test_the_hybrid_agent_confirms_its_local_answers_and_the_model_remembers_what_was_said(
    broker: Broker, registry: DeviceRegistry, llm: ScriptedServer
) -> None:
    llm.push(Text("It is on, as the light itself reported."))

    async def scenario() -> None:
        config = Config(mqtt=broker.mqtt_config("voiced-confirm"))
        async with Home(broker, registry, config) as home:
            actions = DeviceActions(home.gateway, home.bus, confirm_timeout_s=3.0)
            model = LlmAgent(LlmConfig(base_url=llm.base_url), registry, actions)
            agent = HybridAgent(LocalIntentAgent(registry, home.gateway.state_of), model, actions, home.vibe)
            said = [p async for p in agent.reply(1, "Turn on the kitchen light.", CONFIRM)]
            assert said == ["Turning on the kitchen light.\n", "The kitchen light says it's on."]
            [p async for p in agent.reply(2, "Is it really on?")]
            await agent.aclose()

    asyncio.run(scenario())
    history = [str(m.get("content")) for m in llm.requests[0]["messages"] if m["role"] == "assistant"]
    assert history == ["Turning on the kitchen light. The kitchen light says it's on."]


def test_the_judge_asks_for_confirmation_after_a_repeat_but_not_after_a_misunderstanding() -> None:
    vocabulary = HomeVocabulary(scents=(), genres=("jazz",), rooms=("kitchen",), devices=("kitchen_light",))
    slots = interview_slots({"light"})
    analyst, judge = OfflineAnalyst(vocabulary, max_turns=10, slots=slots), OfflineJudge(slots=slots)

    async def notices() -> list[bool | None]:
        state = ConversationState(session_id="s")
        seen: list[bool | None] = []
        for turn, user, understood in (
            (1, "Turn on the kitchen light.", True),
            (2, "Turn on the kitchen light.", True),  # said again: did it work?
            (3, "blorp the flarn", False),
            (4, "blorp the flarn", False),  # not understood twice: nothing to confirm
        ):
            state, flags = await analyst.analyse(
                state, TurnRecord(turn=turn, user=user, understood=understood)
            )
            notice = await judge.judge(state, flags)
            seen.append(None if notice is None else notice.confirm)
        return seen

    assert asyncio.run(notices()) == [None, True, False, False]


def test_the_brain_hands_the_confirmation_to_the_next_turn_only(
    tmp_path: Path, registry: DeviceRegistry
) -> None:
    async def contexts() -> list[bool]:
        config = Config(brain=BrainConfig(state_file=tmp_path / "state.sqlite"))
        brain = build_brain(config, registry, EventBus())
        seen = []
        for turn in (1, 2):
            brain.finished(TurnRecord(turn=turn, user="Turn on the kitchen light.", reply="Turning it on."))
            assert await brain.barrier(turn + 1)
            seen.append(brain.context(turn + 1).confirm)
        seen.append(brain.context(4).confirm)  # used up
        await brain.aclose()
        return seen

    assert asyncio.run(contexts()) == [False, True, False]
