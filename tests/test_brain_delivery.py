"""Scenes are written and announced once per turn, however the analysis that wrote them ends."""

from __future__ import annotations

import asyncio

from voiced.brain.delivery import ScenesDelivery
from voiced.brain.state import ConversationState


class Architect:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, state: ConversationState) -> tuple[str, str]:
        self.calls += 1
        return "/tmp/scenes.yaml", "I've set up your scenes."


async def approve(_state: ConversationState) -> str | None:
    return None


def test_a_delivery_repeated_for_the_same_turn_writes_and_says_nothing_again() -> None:
    async def scenario() -> tuple[int, list[str], ConversationState]:
        said: list[str] = []

        async def say(text: str, _turn: int) -> bool:
            said.append(text)
            return True

        architect = Architect()
        delivery = ScenesDelivery(architect, say)
        before = ConversationState(session_id="s", status="Solutioning")
        done = before.model_copy(update={"status": "Completed"})
        first = await delivery.deliver(before, done, 7, approve)
        # The analysis was given up after this; the rules' analysis of turn 7 delivers again.
        again = await delivery.deliver(before, done, 7, approve)
        await asyncio.sleep(0.05)
        assert first == again
        delivery.settled(7)
        await delivery.aclose()
        return architect.calls, said, again

    calls, said, state = asyncio.run(scenario())
    assert calls == 1 and said == ["I've set up your scenes."]
    assert state.scenes_file == "/tmp/scenes.yaml" and state.interview_slot is None


def test_a_change_request_survives_an_approval_that_was_cancelled() -> None:
    async def scenario() -> int:
        architect = Architect()
        delivery = ScenesDelivery(architect, None)
        done = ConversationState(session_id="s", status="Completed")
        delivery.request_change()
        gate = asyncio.Event()

        async def slow_approve(_state: ConversationState) -> str | None:
            await gate.wait()
            return None

        given_up = asyncio.create_task(delivery.deliver(done, done, 3, slow_approve))
        await asyncio.sleep(0.05)
        given_up.cancel()
        await asyncio.wait([given_up])
        await delivery.deliver(done, done, 3, approve)  # the stand-in still sees the request
        await delivery.deliver(done, done, 4, approve)  # and it was used up there
        return architect.calls

    assert asyncio.run(scenario()) == 1
