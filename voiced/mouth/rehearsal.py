"""Replies rehearsed ahead of time: the audio of what this home's requests are answered with.

A local reply is a fixed sentence for a device and a value ("Dimming the living room light.",
"Setting the diffuser to lavender."), and piper needs ~70-130 ms for one. The replies to the
requests people make most are found by asking a private copy of the local intents (its own
conversation, no device touched), then synthesized one at a time while nobody is talking to
us, so that when the request comes its first audio needs no synthesis.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from voiced.bus import Subscription
from voiced.devices.registry import DeviceRegistry
from voiced.devices.vocabulary import HomeVocabulary
from voiced.events import (
    AssistantMode,
    AssistantState,
    BargeInIgnored,
    Event,
    HomeLearned,
    ReplyResumed,
    SpeechStarted,
    TtsStopped,
)
from voiced.language.replies import say
from voiced.mouth.intents import LocalIntentAgent
from voiced.mouth.sentences import SentenceSplitter
from voiced.mouth.understanding.replies import NOT_UNDERSTOOD

_LOGGER = logging.getLogger(__name__)
# Synthesis takes the cores for ~0.1 s: never while someone speaks to us (over our reply too) or
# waits for an answer.
QUIET: frozenset[AssistantMode] = frozenset({"idle", "speaking", "muted"})
ROUND_PERCENTS = tuple(range(10, 101, 10))  # what people say far more often than 37 %


def familiar_replies(registry: DeviceRegistry) -> list[str]:
    """The replies said most, synthesized before the first turn."""
    names = [device.name.replace("_", " ") for device in registry]
    turning = [say("device_turning", state=state, device=name) for name in names for state in ("on", "off")]
    return [*turning, NOT_UNDERSTOOD]


def likely_requests(registry: DeviceRegistry) -> list[str]:
    """What people ask of this home's devices, the most said first."""

    def spoken(kind: str) -> list[str]:
        return [device.name.replace("_", " ") for device in registry.by_kind(kind)]

    lights, diffusers, music = spoken("light"), spoken("diffuser"), spoken("music")
    words = HomeVocabulary.of(registry)
    requests = [f"turn {verb} the {name}" for name in (*lights, *diffusers, *music) for verb in ("on", "off")]
    if lights:
        requests += ["turn off all the lights", "turn on all the lights"]
    requests += ["turn everything off"]
    requests += [f"{verb} the {name}" for name in lights for verb in ("dim", "brighten")]
    for name in music:
        requests += [f"{verb} the {name}" for verb in ("pause", "resume", "stop")]
        requests += [f"turn the {name} {way}" for way in ("up", "down")]
        requests += ["next song", "previous song"]
    requests += [f"set the {name} to {scent}" for name in diffusers for scent in words.scents]
    requests += [f"play some {genre}" for _ in music[:1] for genre in words.genres]
    requests += [f"make the {name} {tone}" for name in lights for tone in ("warm", "cool")]
    requests += [f"turn the {name} {colour}" for name in lights for colour in words.colours]
    for pct in ROUND_PERCENTS:
        requests += [f"set the {name} to {pct} percent" for name in lights]
        requests += [f"set the {name} intensity to {pct} percent" for name in diffusers]
        requests += [f"set the volume to {pct} percent" for _ in music[:1]]
    return requests


def likely_replies(agent: LocalIntentAgent, requests: Iterable[str]) -> Iterator[str]:
    """The sentences `agent` answers `requests` with, each once, in order, as they are asked for
    (~3 ms each, on the caller's thread, which the grammar is used from).

    `agent` must be a private one: each request is understood in a fresh conversation."""
    said: set[str] = set()
    for request in requests:
        agent.forget()
        reply = agent.understand(request)
        if not reply.understood or not reply.commands:
            continue
        splitter = SentenceSplitter()
        for sentence in [*splitter.feed(reply.text), *splitter.flush()]:
            if sentence not in said:
                said.add(sentence)
                yield sentence


def rehearsal_agent(
    registry: DeviceRegistry, brightness_step_pct: int, *, room: str | None, scent_limit: int
) -> LocalIntentAgent:
    """A private copy of the local intents: its own conversation, no device state (blocking: it
    shares the daemon's compiled grammar when the home has not changed, else compiles, ~1 s)."""
    return LocalIntentAgent(
        registry, lambda _name: None, brightness_step_pct, room=room, scent_limit=scent_limit
    )


@dataclass
class Quiet:
    """Whether nobody is talking to us or waiting for our answer, from the bus's events (pure)."""

    mode: AssistantMode = "idle"  # started before the ear: nobody has spoken yet
    talked_over: bool = False  # speech over our reply, not judged yet (the mode stays "speaking")

    def hear(self, event: Event) -> None:
        if isinstance(event, AssistantState):
            self.mode, self.talked_over = event.state, False
        elif isinstance(event, SpeechStarted):
            self.talked_over = True
        elif isinstance(event, (BargeInIgnored, ReplyResumed, TtsStopped)):
            self.talked_over = False

    @property
    def now(self) -> bool:
        return self.mode in QUIET and not self.talked_over


def home_replies(
    registry: DeviceRegistry, brightness_step_pct: int, *, room: str | None, scent_limit: int
) -> Iterator[str]:
    """The replies to this home's `likely_requests` (blocking: builds a `rehearsal_agent`; the
    iterator then understands one request at a time on the caller's thread)."""
    agent = rehearsal_agent(registry, brightness_step_pct, room=room, scent_limit=scent_limit)
    return likely_replies(agent, likely_requests(registry))


async def rehearse(
    events: Subscription, keep: Callable[[str], bool], replies: Callable[[], Iterator[str]]
) -> None:
    """Synthesize the sentences `replies()` makes (`keep`, blocking, run off the loop; True when it
    synthesized one) one at a time, each only while `Quiet`; the next is found only then too. When
    the home is learned anew (discovered devices, HomeLearned) the list is made again and what is
    not kept yet is rehearsed. Runs until cancelled; supervised (a failure is logged and it starts
    over; what is not rehearsed yet is synthesized when said)."""
    quiet = Quiet()
    sentences: Iterator[str] | None = None
    stale = True  # the list is made at start
    done = 0
    started = time.monotonic()
    while True:
        while not events.empty() or not quiet.now or (sentences is None and not stale):
            event = await events.get()
            quiet.hear(event)
            stale = stale or isinstance(event, HomeLearned)
        if stale or sentences is None:
            sentences, stale, started = await asyncio.to_thread(replies), False, time.monotonic()
            continue  # that took a while: look at the events again first
        sentence = next(sentences, None)
        if sentence is None:
            _LOGGER.info("%d replies rehearsed in %.1f s", done, time.monotonic() - started)
            sentences, done = None, 0
            continue
        done += bool(await asyncio.to_thread(keep, sentence))
