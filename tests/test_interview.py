"""The set-up interview in a home that is not the demo's (issue 28): it asks only about what the home
has and it ends. The brain, its store, the offline analyst and judge and the interview are the real
ones, in-process; the agent the interview wraps is a stand-in that must never be reached mid-interview."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncGenerator
from pathlib import Path

from voiced.brain.analyst import interview_slots
from voiced.brain.interview import QUESTIONS, WRAP_UP, InterviewAgent
from voiced.brain.setup import build_brain
from voiced.brain.state import TurnRecord
from voiced.bus import EventBus
from voiced.config import BrainConfig, Config
from voiced.devices.registry import DeviceRegistry
from voiced.language.replies import say
from voiced.mouth.agent import NO_CONTEXT, TurnContext


class Outside:
    """The agent the interview steps aside for: what reached it, answered with a fixed line."""

    def __init__(self) -> None:
        self.heard: list[str] = []

    async def reply(
        self, turn: int, text: str, context: TurnContext = NO_CONTEXT
    ) -> AsyncGenerator[str, None]:
        self.heard.append(text)
        yield "outside"

    def spoken(self, turn: int, text: str, *, interrupted: bool) -> None:
        return None

    def understood(self, turn: int) -> bool:
        return True

    async def aclose(self) -> None:
        return None


Conversation = tuple[list[str], dict[str, object], list[str]]


def converse(tmp_path: Path, registry: DeviceRegistry, said: list[str]) -> Conversation:
    """Each line said in turn, as the daemon does it: the barrier, the reply, then the brain's
    analysis. The replies, the brain's state after the last, and what the wrapped agent was given."""

    async def scenario() -> Conversation:
        config = Config(brain=BrainConfig(state_file=tmp_path / "state.sqlite"))
        brain = build_brain(config, registry, EventBus())
        inner = Outside()
        agent = InterviewAgent(inner, brain)
        replies = []
        for turn, text in enumerate(said, 1):
            assert await brain.barrier(turn)
            reply = "".join([piece async for piece in agent.reply(turn, text)])
            replies.append(reply)
            brain.finished(TurnRecord(turn=turn, user=text, reply=reply))
        assert await brain.barrier(len(said) + 1)
        state = brain.state.model_dump(mode="json")
        await brain.aclose()
        return replies, state, inner.heard

    return asyncio.run(scenario())


def only(registry: DeviceRegistry, kind: str) -> DeviceRegistry:
    return DeviceRegistry([d for d in registry if d.kind == kind])


def test_the_interview_asks_only_about_what_the_home_has() -> None:
    assert interview_slots({"light"}) == ("rooms", "routine", "lights")
    assert interview_slots({"light", "music"}) == ("rooms", "routine", "genres", "lights")
    assert interview_slots({"music", "diffuser"}) == ("rooms", "routine", "scents", "genres")
    assert interview_slots({"light", "diffuser", "music"}) == (
        "rooms",
        "routine",
        "scents",
        "genres",
        "lights",
    )


def test_a_lights_only_home_is_set_up_without_scents_or_music(
    tmp_path: Path, registry: DeviceRegistry
) -> None:
    replies, state, outside = converse(
        tmp_path,
        only(registry, "light"),
        [
            "Let's set up my home",
            "The kitchen and the bedroom.",
            "I get up at seven and go to bed at eleven.",
            "Warm and dim in the evening.",
        ],
    )
    assert replies == [
        f"Let's set up your home. {QUESTIONS['rooms']}",
        f"Got it. {QUESTIONS['routine']}",
        f"Got it. {QUESTIONS['lights']}",
        WRAP_UP,
    ]
    assert state["status"] == "Completed" and state["completeness_score"] == 100
    assert state["interview_slot"] is None and outside == []


def test_answers_that_tell_it_nothing_end_the_interview(tmp_path: Path, registry: DeviceRegistry) -> None:
    """The demo's home, every answer unreadable: each question is asked twice at most, then it stops."""
    slots = interview_slots({d.kind for d in registry})
    said = ["Let's set up my home", *["I don't know."] * (2 * len(slots)), "Turn on the kitchen light."]
    replies, state, outside = converse(tmp_path, registry, said)
    ended = replies.index(say("interview_gave_up"))
    asked = Counter(reply.split(". ", 1)[1] for reply in replies[:ended])
    assert set(asked) == {QUESTIONS[slot] for slot in slots} and max(asked.values()) == 2
    assert replies[ended + 1 :] == ["outside"] * len(outside)  # the interview is over: turns go on
    assert outside[-1] == "Turn on the kitchen light."
    assert state["status"] == "Conversation" and state["interview_slot"] is None
