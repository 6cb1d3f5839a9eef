"""One brain for every room (issue 29): each room's turns reach it through a `TurnThinking` of its
own (the daemon's own microphone, each satellite's room), as `Daemon` drives it. The memory is the
home's; a notice, a repeat and a run of misses are the room's, and so is the set-up interview; a
room's turn waits at the barrier for its own room's analysis, not for another room's. The real brain
(offline thinkers, or the LLM ones against a scripted server over real HTTP), its state in the test's
own file; the agent the interview wraps is test_interview's stand-in."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncGenerator
from pathlib import Path

from tests.openai_server import ScriptedServer, Text
from tests.speech_fixtures import RealTimeSink, synthesizer
from tests.test_interview import Outside
from voiced.brain.brain import Brain
from voiced.brain.interview import QUESTIONS, InterviewAgent
from voiced.brain.setup import build_brain
from voiced.brain.store import StateStore
from voiced.brain.turns import TurnThinking
from voiced.bus import EventBus
from voiced.config import BrainConfig, Config, LlmConfig
from voiced.devices.registry import DeviceRegistry
from voiced.events import AgentText
from voiced.language.replies import say as say_line
from voiced.mouth.agent import TurnContext
from voiced.mouth.speech import SpeechOutput, SpeechProgress

KITCHEN, BEDROOM = 10_000_000, 20_000_000  # the rooms' turns, numbered apart as serve_satellites does


def room(brain: Brain, name: str) -> TurnThinking:
    """A room's thinking: its own bus (its replies' events), no voice (no filler to say)."""
    return TurnThinking(brain, None, EventBus(), filler="One moment.", room=name)


async def take_turn(
    thinking: TurnThinking,
    turn: int,
    said: str,
    reply: str,
    *,
    understood: bool = True,
    confidence: float = 1.0,
) -> TurnContext:
    """One turn as the daemon takes it: the barrier and the context, the reply, the end."""
    context = await thinking.prepare(turn, confidence)

    async def pieces() -> AsyncGenerator[str, None]:
        yield reply

    async for _piece in thinking.watch(turn, said, pieces(), lambda: understood):
        pass
    thinking.end(turn, said, reply, interrupted=False)
    return context


def noticed(context: TurnContext) -> list[str]:
    return [line for line in context.for_model if line.startswith("[notice")]


def test_what_the_kitchen_says_the_bedroom_knows_and_a_notice_stays_with_its_room(
    tmp_path: Path, registry: DeviceRegistry
) -> None:
    state_file = tmp_path / "state.sqlite"

    async def scenario() -> None:
        config = Config(brain=BrainConfig(state_file=state_file))
        brain = build_brain(config, registry, EventBus())
        kitchen, bedroom = room(brain, "kitchen"), room(brain, "bedroom")

        await take_turn(kitchen, KITCHEN + 1, "I like jazz.", "Noted.")
        assert await brain.barrier(KITCHEN + 2, "kitchen")
        # the bedroom knows what was said in the kitchen
        known = await take_turn(bedroom, BEDROOM + 1, "Play some music.", "Playing music.")
        assert "'genres': ['jazz']" in "".join(known.for_model), known.for_model
        assert not noticed(known)

        # the kitchen's mishearing: its notice is for the kitchen's next turn, not the bedroom's
        await take_turn(
            kitchen, KITCHEN + 2, "play some jess", "Sorry, I didn't catch that.", understood=False
        )
        assert await brain.barrier(KITCHEN + 3, "kitchen")
        assert brain.state.notice_room == "kitchen"
        elsewhere = await take_turn(bedroom, BEDROOM + 2, "Turn on the light in here.", "Turning it on.")
        assert not noticed(elsewhere) and elsewhere.say is None
        here = await take_turn(kitchen, KITCHEN + 3, "play some jazz", "Playing jazz.")
        assert len(noticed(here)) == 1 and "'jazz'" in noticed(here)[0]
        assert here.say is not None and "jazz" in here.say
        assert await brain.barrier(BEDROOM + 3, "bedroom") and await brain.barrier(KITCHEN + 4, "kitchen")
        after = await take_turn(bedroom, BEDROOM + 3, "thanks", "You're welcome.")
        assert not noticed(after)  # used up in the kitchen, never said in the bedroom

        # the same words in the kitchen are no repeat of the bedroom's; said again there, they are
        await take_turn(kitchen, KITCHEN + 4, "Turn on the light in here.", "Turning it on.")
        assert await brain.barrier(KITCHEN + 5, "kitchen")
        assert not [p for p in brain.state.pain_points if p.kind == "repeated"]
        await take_turn(kitchen, KITCHEN + 5, "Turn on the light in here.", "Turning it on.")
        assert await brain.barrier(KITCHEN + 6, "kitchen")
        repeats = [p.turn for p in brain.state.pain_points if p.kind == "repeated"]
        assert repeats == [KITCHEN + 5]

        # how sure the room's ear was reaches the brain with its turn
        await take_turn(bedroom, BEDROOM + 4, "Set the diffuser to the latin.", "Sorry?", confidence=0.39)
        assert await brain.barrier(BEDROOM + 5, "bedroom")
        unsure = [p.turn for p in brain.state.pain_points if p.kind == "low_confidence"]
        assert unsure == [BEDROOM + 4] and brain.state.notice_room == "bedroom"

        rooms = {(t.turn, t.room) for t in brain.state.recent_turns}  # the last few, of both rooms
        assert {name for _turn, name in rooms} == {"kitchen", "bedroom"}
        assert all(name == ("kitchen" if turn < BEDROOM else "bedroom") for turn, name in rooms), rooms
        await brain.aclose()
        assert StateStore(state_file).load() == brain.state

    asyncio.run(asyncio.wait_for(scenario(), 60))


def test_a_room_s_turn_does_not_wait_for_another_room_s_slow_analysis(
    tmp_path: Path, registry: DeviceRegistry, llm: ScriptedServer
) -> None:
    analysis = json.dumps({"preferences": {"genres": ["jazz"]}, "risk": None})
    llm.push(Text(analysis, first_delay_s=4.0), model="brain")  # the kitchen's turn, thought over slowly
    llm.push(Text(analysis), model="brain")

    async def scenario() -> None:
        config = Config(
            llm=LlmConfig(base_url=llm.base_url),
            brain=BrainConfig(state_file=tmp_path / "state.sqlite", model="brain", barrier_timeout_s=20.0),
        )
        home = EventBus()
        home.bind_loop(asyncio.get_running_loop())
        told = home.subscribe("brain-events", limit=10_000)
        brain = build_brain(config, registry, home)
        kitchen, bedroom = room(brain, "kitchen"), room(brain, "bedroom")
        await take_turn(kitchen, KITCHEN + 1, "I like jazz.", "Noted.")
        await asyncio.sleep(0.2)
        assert not await brain.settled("kitchen") and await brain.settled("bedroom")
        start = time.monotonic()
        await bedroom.prepare(BEDROOM + 1)  # its barrier: nothing of the bedroom's to wait for
        assert time.monotonic() - start < 1.0
        start = time.monotonic()
        await kitchen.prepare(KITCHEN + 2)  # the kitchen's next turn waits for the kitchen's analysis
        assert time.monotonic() - start > 2.0
        assert brain.state.preferences.genres == ["jazz"] and await brain.settled("kitchen")
        await brain.aclose()
        events = [told.get_nowait() for _ in range(told.qsize())]
        # the home's brain says whose turn each event is about
        about = {(e.kind, getattr(e, "turn", None), getattr(e, "room", None)) for e in events}
        assert ("brain_finished", KITCHEN + 1, "kitchen") in about, about
        assert ("barrier_wait", KITCHEN + 2, "kitchen") in about, about

    asyncio.run(asyncio.wait_for(scenario(), 60))


def test_the_interview_is_held_in_the_room_it_was_begun_in(tmp_path: Path, registry: DeviceRegistry) -> None:
    """Begun in the kitchen: the kitchen's answers go on with it; the bedroom's requests meanwhile are
    the bedroom's own, and the bedroom cannot stop it."""

    async def scenario() -> None:
        config = Config(brain=BrainConfig(state_file=tmp_path / "state.sqlite"))
        brain = build_brain(config, registry, EventBus())
        kitchen_agent, bedroom_agent = Outside(), Outside()
        kitchen = InterviewAgent(kitchen_agent, brain, "kitchen")
        bedroom = InterviewAgent(bedroom_agent, brain, "bedroom")

        async def say(agent: InterviewAgent, turn: int, text: str) -> str:
            return "".join([piece async for piece in agent.reply(turn, text)])

        assert say_line("interview_start", question=QUESTIONS["rooms"]) == await say(
            kitchen, KITCHEN + 1, "Let's set up my home."
        )
        assert await say(bedroom, BEDROOM + 1, "Turn on the light in here.") == "outside"
        assert await say(bedroom, BEDROOM + 2, "Stop the interview.") == "outside"
        assert brain.state.status == "Profiling" and brain.state.interview_room == "kitchen"
        answer = await say(kitchen, KITCHEN + 2, "The kitchen, the bedroom and the living room.")
        assert answer != "outside" and kitchen_agent.heard == []
        assert bedroom_agent.heard == ["Turn on the light in here.", "Stop the interview."]
        await brain.aclose()

    asyncio.run(asyncio.wait_for(scenario(), 60))


def test_a_wait_of_a_moment_is_no_reason_for_the_filler(tmp_path: Path, registry: DeviceRegistry) -> None:
    """A reply cut off by barge-in is saved as heard just as the request that cut it comes: the
    request waits at the barrier for that (milliseconds), without "One moment." first (a satellite's
    barge-in answered the filler before the request). Piper's voice, played in real time."""

    async def scenario() -> None:
        bus = EventBus()
        bus.bind_loop(asyncio.get_running_loop())
        config = Config(brain=BrainConfig(state_file=tmp_path / "state.sqlite"))
        brain = build_brain(config, registry, EventBus())
        speech = SpeechOutput(synthesizer(), RealTimeSink(), bus, sentence_silence_s=0.05, room="kitchen")
        thinking = TurnThinking(brain, speech, bus, config.brain.filler, room="kitchen")
        said = bus.subscribe("said")

        async def reply() -> AsyncGenerator[str, None]:
            yield "Turning on the kitchen light."

        turn, user = KITCHEN + 1, "Turn on the kitchen light."
        await thinking.prepare(turn)
        await speech.say(turn, thinking.watch(turn, user, reply()), SpeechProgress())
        thinking.end(turn, user, "Turning on", interrupted=True)  # talked over near its end
        assert not await brain.settled("kitchen")  # what was heard is being saved
        await thinking.prepare(KITCHEN + 2)
        assert await brain.settled("kitchen")
        texts = []
        while not said.empty():
            if isinstance(event := said.get_nowait(), AgentText):
                texts.append((event.text, event.room))
        assert texts == [("Turning on the kitchen light.", "kitchen")], texts
        assert [t.reply for t in brain.state.recent_turns] == ["Turning on"]
        await brain.aclose()

    asyncio.run(asyncio.wait_for(scenario(), 60))
