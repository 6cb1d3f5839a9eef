"""After two misses in a row the next reply offers an example request this home can do (issue 28),
with no language model too: the offline judge's notice carries it as words, and the local path says
them first. The brain, its analyst and judge, the local agent, the device simulator over a real
Mosquitto and piper's voice are the real ones."""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path

from tests.conftest import Broker
from tests.speech_fixtures import RealTimeSink, synthesizer
from tests.vibe_home import Home
from voiced.brain.analyst import OfflineAnalyst
from voiced.brain.judge import OfflineJudge, example_device
from voiced.brain.setup import build_brain, home_slots
from voiced.brain.state import ConversationState, TurnRecord
from voiced.brain.turns import TurnThinking
from voiced.config import BrainConfig, Config
from voiced.devices.registry import DeviceRegistry
from voiced.devices.vocabulary import HomeVocabulary
from voiced.mouth.intents import LocalIntentAgent
from voiced.mouth.local_agent import LocalAgent
from voiced.mouth.speech import SpeechOutput, SpeechProgress

EXAMPLE = "When I don't understand, try a request like: turn on the bedroom light."
MISSES = ("blorp the flarn", "wibble the wobble", "frobnicate the doohickey")


def test_the_example_is_a_device_of_this_home_lights_first(registry: DeviceRegistry) -> None:
    assert example_device(registry) == "bedroom_light"  # the first light, though the diffuser is first
    music_only = DeviceRegistry([device for device in registry if device.kind == "music"])
    assert example_device(music_only) == "music"
    assert example_device(DeviceRegistry([])) is None


def test_the_judge_says_an_example_after_the_second_miss_in_a_row_only(registry: DeviceRegistry) -> None:
    slots = home_slots(registry)
    analyst = OfflineAnalyst(HomeVocabulary.of(registry), max_turns=10, slots=slots)
    turns = [
        ("blorp the flarn", False),  # one miss: its reply said so, nothing more
        ("turn on the kitchen light", True),
        ("wibble the wobble", False),  # a miss after a turn understood
        ("frobnicate the doohickey", False),  # the second in a row
        ("zorp", False),  # the third: the example was just said
    ]

    async def spoken_notices(judge: OfflineJudge) -> list[str | None]:
        state, said = ConversationState(session_id="s"), []
        for turn, (user, understood) in enumerate(turns, 1):
            record = TurnRecord(turn=turn, user=user, understood=understood)
            state, flags = await analyst.analyse(state, record)
            notice = await judge.judge(state, flags)
            said.append(None if notice is None else notice.say)
        return said

    assert asyncio.run(spoken_notices(OfflineJudge(slots=slots, registry=registry))) == [
        None,
        None,
        None,
        EXAMPLE,
        None,
    ]
    # without the home's devices, no example is made up
    assert asyncio.run(spoken_notices(OfflineJudge(slots=slots))) == [None] * 5


def test_the_same_words_missed_twice_get_an_example_of_this_home_not_a_list_of_kinds(
    registry: DeviceRegistry,
) -> None:
    slots = home_slots(registry)
    analyst = OfflineAnalyst(HomeVocabulary.of(registry), max_turns=10, slots=slots)

    async def said_after_the_same_miss_twice(judge: OfflineJudge) -> str | None:
        state, notice = ConversationState(session_id="s"), None
        for turn in (1, 2):
            record = TurnRecord(turn=turn, user="blorp the flarn", understood=False)
            state, flags = await analyst.analyse(state, record)
            notice = await judge.judge(state, flags)
        return None if notice is None else notice.say

    said = asyncio.run(said_after_the_same_miss_twice(OfflineJudge(slots=slots, registry=registry)))
    assert said == "Sorry, I still didn't get that. Try a request like: turn on the bedroom light."
    music_only = DeviceRegistry([device for device in registry if device.kind == "music"])
    said = asyncio.run(said_after_the_same_miss_twice(OfflineJudge(slots=slots, registry=music_only)))
    assert said == "Sorry, I still didn't get that. Try a request like: turn on the music."
    bare = asyncio.run(said_after_the_same_miss_twice(OfflineJudge(slots=slots)))
    assert bare == "Sorry, I still didn't get that."  # no diffuser or scene named that may not be here


def test_after_two_misses_the_next_reply_speaks_the_example_and_the_example_works(
    tmp_path: Path, broker: Broker, registry: DeviceRegistry
) -> None:
    """Turn by turn as the daemon takes them: the brain's barrier and context, the local agent's
    reply, spoken by the speech output, then the brain's analysis of what was said."""

    async def session() -> list[list[str]]:
        config = Config(
            mqtt=broker.mqtt_config("voiced-miss"), brain=BrainConfig(state_file=tmp_path / "s.sqlite")
        )
        async with Home(broker, registry, config) as home:
            brain = build_brain(config, registry, home.bus)
            thinking = TurnThinking(brain, None, home.bus, config.brain.filler)
            agent = LocalAgent(LocalIntentAgent(registry, home.gateway.state_of), home.actions, home.vibe)
            speech = SpeechOutput(synthesizer(), RealTimeSink(), home.bus, sentence_silence_s=0.05)
            heard = []
            for turn, text in enumerate([*MISSES, "turn on the bedroom light"], 1):
                context = await thinking.prepare(turn)
                understood = functools.partial(agent.understood, turn)
                pieces = thinking.watch(turn, text, agent.reply(turn, text, context), understood)
                progress = SpeechProgress()
                await speech.say(turn, pieces, progress, understood)
                thinking.end(turn, text, progress.text, interrupted=False)
                heard.append(progress.played)
            await home.until(  # the simulated light reports it, as a real one would
                lambda: (home.gateway.state_of("bedroom_light") or {}).get("state") == "ON", "the light on"
            )
            await brain.aclose()
            return heard

    heard = asyncio.run(session())
    missed = "Sorry, I didn't catch that."
    assert heard[:2] == [[missed], [missed]]  # one miss, then a second: nothing offered yet
    assert heard[2] == [EXAMPLE, missed]  # after two in a row, the example first, spoken
    assert heard[3] == ["Turning on the bedroom light."]  # what was offered is a request this home does
