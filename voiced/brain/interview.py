"""The setup interview (seed 000 §3.3): one question at a time, guided by what the state still lacks.

"Let's set up my home" starts it. Each answer is parsed by the analyst in the background while the
next question is asked; the barrier makes sure the next turn sees that analysis. When nothing is
missing the analyst marks the state Completed and the architect writes the scenes.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator
from contextlib import aclosing

from voiced.brain.brain import Brain
from voiced.brain.state import INTERVIEW_STATUSES
from voiced.language.replies import say
from voiced.mouth.agent import NO_CONTEXT, Agent, TurnContext

QUESTIONS = {slot: say(f"interview_{slot}") for slot in ("rooms", "routine", "scents", "genres", "lights")}
START = re.compile(r"\b(?:set ?up|setup|configure)\b.*\b(?:home|house|flat|apartment)\b|\binterview me\b")
STOP = re.compile(r"\b(?:stop|cancel|end|quit)\b.*\b(?:interview|set ?up|setup|questions)\b")
WRAP_UP = say("interview_wrap_up")
ASK_AT_MOST = 2  # a question whose answers tell us nothing is asked again once, then given up
CHANGE = re.compile(
    r"\b(?:make|set) the (morning|evening|relax|relaxing)\s+(?:scene|mood)\s+"
    r"(warmer|cooler|brighter|dimmer|darker|softer)\b"
)


class InterviewAgent:
    """Wraps the main agent: during the interview the brain's questions lead; otherwise it steps aside.

    One per room (the home's brain is one): the interview is held in the room it was begun in, and
    another room's turns meanwhile are that room's own requests."""

    def __init__(self, inner: Agent, brain: Brain, room: str = "") -> None:
        """Asks only about what `brain.slots` (this home's) hold: no music question without music.
        `room`: where this agent's turns are (audio.room, or a satellite's room)."""
        self._inner = inner
        self._brain = brain
        self._room = room
        self._asked: dict[str, int] = {}  # this interview's questions: how often each was asked

    async def reply(
        self, turn: int, text: str, context: TurnContext = NO_CONTEXT
    ) -> AsyncGenerator[str, None]:
        words = text.lower()
        if START.search(words):
            slot = self._brain.begin_interview(self._room)
            self._asked = {slot: 1}
            yield say("interview_start", question=QUESTIONS[slot])
            return
        state = self._brain.state
        change = CHANGE.search(words)
        if change and state.scenes_file:
            # The analyst reads the change from these words; the architect rewrites the scenes.
            self._brain.request_change()
            yield say("scene_change", name=change.group(1), how=change.group(2))
            return
        here = state.interview_room in (None, self._room)  # None: a state saved before rooms
        if state.status in INTERVIEW_STATUSES and state.interview_slot is not None and here:
            if STOP.search(words):
                self._brain.end_interview()
                yield say("interview_stopped")
                return
            # this answer is analysed after the reply: its own question is not asked straight again
            missing = [slot for slot in self._brain.missing() if slot != state.interview_slot]
            remaining = [slot for slot in missing if self._asked.get(slot, 0) < ASK_AT_MOST]
            if remaining:
                self._brain.ask(remaining[0])
                self._asked[remaining[0]] = self._asked.get(remaining[0], 0) + 1
                yield say("interview_next", question=QUESTIONS[remaining[0]])
            elif missing:  # asked twice and still nothing: the interview ends, honestly
                self._brain.end_interview()
                yield say("interview_gave_up")
            else:
                self._brain.ask(None)
                yield WRAP_UP
            return
        async with aclosing(self._inner.reply(turn, text, context)) as pieces:
            async for piece in pieces:
                yield piece

    def spoken(self, turn: int, text: str, *, interrupted: bool) -> None:
        self._inner.spoken(turn, text, interrupted=interrupted)

    def understood(self, turn: int) -> bool:
        return self._inner.understood(turn)

    async def aclose(self) -> None:
        await self._inner.aclose()
