"""Whether the local intents would act on words the ear heard, asked of a private copy of them (its
own conversation, no device touched): what lets the ear decide to hear a turn again (a second ear,
voiced/ear/second_opinion.py) before the turn is answered."""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Sequence

from voiced.devices.model import MusicSet
from voiced.mouth.agent import AgentReply
from voiced.mouth.intents import CONDITIONAL, LATER, LocalIntentAgent
from voiced.mouth.understanding.replies import searches

# Declined for its form, not its words: a misheard "and" or "in" reads as a time or a condition
# ("kitchen at 40 in lounge at 70", "…, fuser, intensity to 70%" heard with an "if" reading).
_DECLINED_FOR_FORM = frozenset((CONDITIONAL, LATER))
# What the private copy made of a reading: its reply, whether it waits for an answer, and the
# question it asks back (the words it is about, the options' words)
_Answer = tuple[AgentReply, bool, tuple[str, tuple[str, ...]] | None]


class DryRun:
    def __init__(self, make: Callable[[], LocalIntentAgent]) -> None:
        """`make`: builds the private copy (blocking, ~1 s when the grammar is not compiled yet); it
        is built on first use, on the thread that asks. One question at a time: a withdrawn
        transcription's thread may still be asking when the next one starts."""
        self._make = make
        self._agent: LocalIntentAgent | None = None
        self._home = 0  # which home the devices are: a copy built for an older one is not kept
        self._lock = threading.Lock()
        self._answers: dict[tuple[object, ...], _Answer] = {}  # this turn's, by reading

    def new_turn(self) -> None:
        """A turn's audio is heard anew: the devices' states may have changed since the last answers
        (a withdrawn turn's thread may still add some: they are keyed by their words)."""
        with self._lock:
            self._answers.clear()

    def home_changed(self) -> None:
        """Devices came or went (on the event loop): the next question builds a copy that knows them."""
        self._home += 1
        self._agent = None

    def acts(
        self,
        text: str,
        doubtful: Collection[str] = (),
        alternatives: Sequence[str] = (),
        *,
        searching: bool = True,
    ) -> bool:
        """In a fresh conversation: understood, or refused as a thing this home has nothing like ("I
        can't turn on the oven": an answer, not a mishearing); nothing missed; no question or
        read-back; not declined as a request for later or on a condition (blocking, ~3-10 ms).
        `searching=False`: nor a search for a title (free text: any mishearing is one)."""
        reply, waiting, _question = self._understood(text, doubtful, alternatives)
        if not searching and any(map(searches, reply.commands)):
            return False
        return not reply.missed and not waiting and reply.text not in _DECLINED_FOR_FORM

    def prepare(self) -> None:
        """Build the private copy now (blocking, ~1 s when the grammar is not compiled yet)."""
        with self._lock:
            self._fresh()

    def reply(self, text: str) -> str | None:
        """What the intents would answer words taken as heard, in a fresh conversation, when they
        would act on them (`acts`); None otherwise (blocking, ~3-10 ms)."""
        reply, waiting, _question = self._understood(text, (), ())
        if reply.missed or waiting or not reply.commands or reply.text in _DECLINED_FOR_FORM:
            return None
        return reply.text

    def asked(
        self, text: str, doubtful: Collection[str] = (), alternatives: Sequence[str] = ()
    ) -> tuple[str, tuple[str, ...]] | None:
        """The question the intents would ask back between readings of `text`: the words it is about
        and the options' words ("the room", ("the bedroom", "the living room")); None: they would not
        ask one (blocking, ~3-10 ms)."""
        return self._understood(text, doubtful, alternatives)[2]

    def searched(self, text: str) -> str | None:
        """The title the intents would search for in `text`, its words taken as heard (None: the
        request searches for none) (blocking, ~3-10 ms)."""
        reply = self._understood(text, (), ())[0]
        return next((c.query for c in reply.commands if isinstance(c, MusicSet) and c.query), None)

    def _understood(self, text: str, doubtful: Collection[str], alternatives: Sequence[str]) -> _Answer:
        """What the private copy makes of a reading in a fresh conversation; the answers are kept
        until `new_turn`, for the ear's steps ask of the same readings one after another."""
        key = (self._home, text, tuple(doubtful), tuple(alternatives))
        with self._lock:
            if key in self._answers:
                return self._answers[key]
            agent = self._fresh()
            reply = agent.understand(text, doubtful, alternatives)
            question = agent.question
            asked = None if question is None else (question.heard, tuple(o.text for o in question.options))
            answer = (reply, agent.waiting, asked)
            self._answers[key] = answer
        return answer

    def _fresh(self) -> LocalIntentAgent:
        """The private copy in a fresh conversation (under the lock)."""
        agent, home = self._agent, self._home
        if agent is None:
            agent = self._make()
            if home == self._home:
                self._agent = agent
        agent.forget()
        return agent
