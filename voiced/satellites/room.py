"""One satellite's room: its own ear, turns, dialogue and voice; the home's devices and engines shared.

The room runs the daemon's own turn loop (`Daemon`) on a bus of its own, so its turn numbers,
its replies and its barge-in lane (or half-duplex guard) never meet another room's. Its ear is
the daemon's ear (VAD, endpointing, Whisper, and with `echo: cancel` the echo handling) on the
satellite's stream; its understanding is a `LocalIntentAgent` whose *here* is the satellite's
room; its replies are synthesized once and sent to this satellite only. Its finished turns go to the
home's one brain as the daemon's own do (voiced/brain/turns.py), with its room: the memory is the
home's, the barrier and the notices the room's. What a person or another part needs to know is
relayed (voiced/satellites/relay.py): to the satellite, and to the home's bus as room events. Its
commands go to the home's bus themselves, naming its room; its requests for later are the home's
plans (one engine, one ledger), planned with its understanding and read back here. With discovery,
its understanding learns the devices found after start, as the daemon's own does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from functools import partial
from types import TracebackType
from typing import TYPE_CHECKING

from voiced.assistant_state import publish_assistant_state
from voiced.audio.pcm import EAR_RATE
from voiced.audio.reference import PlaybackReference
from voiced.brain.brain import Brain
from voiced.brain.interview import InterviewAgent
from voiced.brain.turns import TurnThinking
from voiced.bus import EventBus
from voiced.config import Config
from voiced.config_satellites import SatelliteConfig
from voiced.daemon import Daemon, HalfDuplexGuard
from voiced.devices.actions import DeviceActions
from voiced.devices.registry import DeviceRegistry
from voiced.ear.asr_home import HomeAsr
from voiced.ear.bargein import GuardSettings
from voiced.ear.end_of_turn import Pause
from voiced.ear.frontend import echo_front
from voiced.ear.listener import Ear
from voiced.ear.utterance import Heard
from voiced.ear.wake import wake_gate
from voiced.engines import Engines, foresight, judges_pauses
from voiced.memory import give_back, give_back_after_turns
from voiced.mouth.agent import NO_CONTEXT, Agent, TurnContext
from voiced.mouth.home_changes import follow_home
from voiced.mouth.hybrid import build_agent
from voiced.mouth.intents import LocalIntentAgent
from voiced.mouth.speech import Rehearsed, SpeechOutput
from voiced.mouth.vibe_control import VibeControl
from voiced.plans.setup import Plans
from voiced.plans.voice import PlanAgent
from voiced.satellites.audio import SatelliteMicrophone, SatelliteSpeaker
from voiced.satellites.link import DEFAULT_TIMING, LinkTiming, SatelliteLink
from voiced.satellites.relay import relay
from voiced.supervision import Supervision
from voiced.vibe.narrator import RoomVoice, RoomVoices
from voiced.vibe.presets import preset_moods

if TYPE_CHECKING:
    import openai

_LOGGER = logging.getLogger(__name__)
# The turns of the n-th satellite's room are numbered from (n + 1) * ROOM_TURNS: far above the
# local ear's and the web's typed turns (daemon.OUTSIDE_TURN_BASE), and apart from each other.
ROOM_TURNS = 10_000_000


@dataclass(frozen=True)
class Home:
    """What every room shares: the home's devices, engines, scenes and bus."""

    config: Config
    engines: Engines
    registry: DeviceRegistry
    actions: DeviceActions
    bus: EventBus
    vibe: VibeControl | None = None
    client: openai.AsyncOpenAI | None = None
    # Whether words heard at a pause are a whole request (app.ends_request), per room's intents, and
    # where those words go to have their reply synthesized ahead (the room's own Foresight)
    ends_request: Callable[
        [LocalIntentAgent, Callable[[str], None] | None], Callable[[Heard], Pause] | None
    ] = lambda _intents, _foresee: None
    # what keeps the rooms' turns and relays running (restarted if they raise): the daemon's
    supervision: Supervision = field(default_factory=Supervision)
    # the replies synthesized ahead of time, shared by every room's speaker (the daemon's)
    rehearsed: Rehearsed | None = None
    # the Whisper queue every room shares with the daemon's ear, taken room by room (asr_home.py);
    # None: each room a queue of its own
    asr: HomeAsr | None = None
    # the home's one brain (its memory, preferences, interview), which every room's turns reach
    brain: Brain | None = None
    # the home's plans (one engine, one ledger): a room plans with its own understanding and sends
    # its steps for now naming its room
    plans: Plans | None = None
    # where the lines outside a reply are said (the scenes', the brain's): each room's, for its turns
    voices: RoomVoices | None = None


class BorrowedAgent:
    """A room's agent, which closes nothing: the scenes and the LLM client are the home's."""

    def __init__(self, agent: Agent) -> None:
        self._agent = agent

    def reply(self, turn: int, text: str, context: TurnContext = NO_CONTEXT) -> AsyncGenerator[str, None]:
        return self._agent.reply(turn, text, context)

    def spoken(self, turn: int, text: str, *, interrupted: bool) -> None:
        self._agent.spoken(turn, text, interrupted=interrupted)

    def understood(self, turn: int) -> bool:
        return self._agent.understood(turn)

    async def aclose(self) -> None:
        return None


class SatelliteRoom:
    def __init__(
        self, satellite: SatelliteConfig, home: Home, *, first_turn: int, timing: LinkTiming = DEFAULT_TIMING
    ) -> None:
        """`first_turn`: the room's turns are numbered after it, apart from every other room's
        (the next ROOM_TURNS - 1 numbers are its)."""
        self.satellite = satellite
        self._home = home
        self._first_turn = first_turn
        self._bus = EventBus()  # the room's own: its turns, its voice
        # what we send it, paired with what it hears: our echo told from a voice (echo: cancel)
        self._reference = PlaybackReference() if satellite.echo == "cancel" else None
        self._microphone = SatelliteMicrophone(self._reference)
        self.link = SatelliteLink(
            satellite,
            home.bus,
            on_audio=self._microphone.feed,
            on_audio_end=self._microphone.end_of_stream,
            timing=timing,
        )
        self._stack = contextlib.AsyncExitStack()
        self._turns = f"room-{satellite.name}-turns"  # the supervised tasks' names
        self._relayed = f"room-{satellite.name}-relay"
        self._memory = f"room-{satellite.name}-memory"
        self._state = f"room-{satellite.name}-state"
        self._learning = f"room-{satellite.name}-learning"

    async def __aenter__(self) -> SatelliteRoom:
        self._bus.bind_loop(asyncio.get_running_loop())
        try:
            await self._start()
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def _start(self) -> None:
        """The room's parts, started; what must be stopped or closed goes on its stack."""
        home, config = self._home, self._home.config
        transcriber = home.engines.transcriber
        if transcriber is None:
            raise ValueError("a satellite's room needs Whisper: load the engines with whisper=True")
        changes = None
        if config.devices.discovery:  # before the room learns the home: a device found meanwhile is next
            changes = home.bus.subscribe(self._learning)
            self._stack.callback(home.bus.unsubscribe, changes)
        intents = await asyncio.to_thread(self._intents)  # its grammar takes a second to learn
        rehearsed = Rehearsed() if home.rehearsed is None else home.rehearsed
        ahead, ahead_follows = None, None
        if judges_pauses(config):  # its replies synthesized while its ear waits, with its own "here"
            synthesizer = home.engines.synthesizer
            ahead, ahead_follows = foresight(
                config, home.registry, synthesizer, rehearsed, room=self.satellite.room
            )
            self._stack.callback(ahead.close)
        speech = SpeechOutput(
            home.engines.synthesizer,
            SatelliteSpeaker(self.link, self._reference),
            self._bus,
            sentence_silence_s=config.tts.sentence_silence_s,
            output_rate=None if self._reference is None else EAR_RATE,  # the reference's rate
            rehearsed=rehearsed,
            room=self.satellite.room,  # its events on the room's bus name it
            foresight=ahead,
        )
        room = self.satellite.room
        actions = home.actions.in_room(room)  # its commands name its room (the scenes stay the home's)
        agent: Agent = build_agent(
            config, home.registry, actions, intents, vibe=home.vibe, bus=self._bus, client=home.client
        )
        if home.plans is not None:  # as the daemon's own turns: a request for later is read back here
            plans = home.plans.in_room(intents, actions)
            agent = PlanAgent(agent, plans, time.time, llm_fallback=config.agent_kind != "local")
        thinking = None
        if home.brain is not None:  # as the daemon's own turns: the brain's word before, its analysis after
            thinking = TurnThinking(home.brain, speech, self._bus, config.brain.filler, room=room)
            agent = InterviewAgent(agent, home.brain, room)
        tidy = config.memory.give_back_after_turn  # after each Whisper job and each turn, as the local room
        # its window stays open through a turn and its reply
        wake = wake_gate(self.satellite.wake_word, config, self._bus, lambda: daemon.busy or speech.speaking)
        hear = partial(
            Ear,
            self._microphone,
            config.vad,
            transcriber,
            self._bus,
            judge=home.ends_request(intents, ahead.foresee if ahead is not None else None),
            wake=wake,
            first_turn=self._first_turn,
            tidy=give_back if tidy else None,
            home_asr=home.asr,
            asr_room=f"satellite {self.satellite.name}",
            room=room,
        )
        if self._reference is None:  # it hears the satellite's speaker: deaf while that plays
            ear = hear(is_deaf=HalfDuplexGuard(speech))
        else:  # it tells our echo from a voice by what we sent, as the daemon's own microphone does
            audio = config.audio
            front = echo_front(self._reference, config.vad, audio)
            self._stack.callback(front.close)
            ear = hear(
                front=front,
                is_playing=lambda: speech.speaking or front.playing,
                guard=GuardSettings(frame_ms=config.vad.frame_ms, confirm_ms=audio.barge_in_confirm_ms),
                echo_db=audio.echo_unexplained_db,
            )
        echo_db = config.audio.echo_unexplained_db
        daemon = Daemon(
            bus=self._bus,
            ear=ear,
            agent=BorrowedAgent(agent),
            speech=speech,
            echo_db=echo_db,
            thinking=thinking,
            room=room,
        )
        await self._stack.enter_async_context(self.link)
        supervision = home.supervision
        told = partial(relay, link=self.link, home_bus=home.bus, satellite=self.satellite)
        supervision.follow(self._relayed, self._bus, told)
        self._stack.push_async_callback(supervision.stop, self._relayed)
        supervision.follow(self._state, self._bus, partial(publish_assistant_state, self._bus, room=room))
        self._stack.push_async_callback(supervision.stop, self._state)
        if tidy:
            supervision.follow(self._memory, self._bus, give_back_after_turns)
            self._stack.push_async_callback(supervision.stop, self._memory)
        if changes is not None:  # devices discovered come and go: its understanding follows, as the
            # daemon's own does (app.py); the ear's words are the home's Whisper's, made anew there
            learn = partial(follow_home, self._bus, changes, home.registry, intents, ahead_follows)
            supervision.start(self._learning, learn)  # HomeLearned on its bus: room_learned at home
            self._stack.push_async_callback(supervision.stop, self._learning)
        if home.voices is not None:  # a line for one of its turns (a scene's, the interview's end): here
            where = f"satellite {self.satellite.name} ({room})"
            voice = RoomVoice(where, speech, self._bus, lambda: daemon.busy, lambda: self.link.connected)
            turns = range(self._first_turn + 1, self._first_turn + ROOM_TURNS)
            self._stack.enter_context(home.voices.serving(turns, voice))
        supervision.start(self._turns, daemon.run)
        self._stack.push_async_callback(supervision.stop, self._turns)  # first to stop

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self._stack.aclose()  # the turns, the relay, then the link

    def _intents(self) -> LocalIntentAgent:
        home, config = self._home, self._home.config
        return LocalIntentAgent(
            home.registry,
            home.actions.state_of,
            config.agent.brightness_step_pct,
            room=self.satellite.room,
            scent_limit=config.safety.scent_max_intensity,
            moods=preset_moods(config.vibe.presets_file) if config.agent_kind == "local" else {},
        )
