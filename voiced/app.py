"""Builds the daemon from config and runs it with a live view; models load before Ready."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import time
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import get_args

from voiced.assistant_state import publish_assistant_state
from voiced.audio.pcm import EAR_RATE
from voiced.audio.reference import PlaybackReference
from voiced.audio.sinks import AudioSink
from voiced.audio.sources import AudioSource
from voiced.brain.interview import InterviewAgent
from voiced.brain.setup import build_brain
from voiced.brain.turns import TurnThinking
from voiced.bus import EventBus
from voiced.config import Config, WakeWord
from voiced.console import drain_printer, print_events
from voiced.daemon import Daemon
from voiced.daemon_ear import build_ear, ends_request
from voiced.devices.actions import DeviceActions
from voiced.devices.gateway import DeviceGateway
from voiced.devices.model import MusicDevice
from voiced.devices.mpd_player import MpdPlayer
from voiced.devices.registry import DeviceRegistry
from voiced.devices.vocabulary import HomeVocabulary
from voiced.ear.asr_queue import HomeAsr
from voiced.ear.mute import MuteSwitch
from voiced.ear.typed import TypedEar, TypedTurns
from voiced.ear.utterance import Listener
from voiced.ear.wake import WakeWordChoice, wake_gate
from voiced.ear.wyoming_asr import WyomingTranscriber
from voiced.engines import Engines, foresight, judges_pauses, private_intents, second_ear
from voiced.ha_entities import HaEntities
from voiced.llm_client import open_client
from voiced.memory import give_back_after_turns
from voiced.mouth.home_changes import follow_home
from voiced.mouth.hybrid import build_agent
from voiced.mouth.intents import LocalIntentAgent
from voiced.mouth.rehearsal import familiar_replies, home_replies, rehearse
from voiced.mouth.speech import SpeechOutput
from voiced.plans.setup import build_plans
from voiced.plans.voice import PlanAgent
from voiced.satellites.room import Home
from voiced.satellites.serve import serve_satellites
from voiced.supervision import Supervision
from voiced.systemd import NotifySettings, notify_stopping, notify_systemd
from voiced.vibe.narrator import RoomVoice, RoomVoices, SpokenNarrator
from voiced.vibe.presets import preset_moods
from voiced.vibe.setup import build_vibe
from voiced.web.api import Controls
from voiced.web.server import WebServer

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunOptions:
    verbose: bool = False
    events_file: Path | None = None
    # Shared with the SpeakerSink when our voice can reach our microphone; None for file output.
    reference: PlaybackReference | None = None
    notify: NotifySettings = field(default_factory=NotifySettings)  # systemd's socket and watchdog
    web_socket: socket.socket | None = None  # bound before the models load (voiced/web/server.py bind)
    # What keeps the background tasks running; given by whoever needs to reach it (the bench).
    supervision: Supervision = field(default_factory=Supervision)


def mpd_players(registry: DeviceRegistry, config: Config) -> list[MpdPlayer]:
    """The music devices an MPD plays (`mpd: host:port` in their file), each driven by the daemon."""
    return [
        MpdPlayer(device, config.mqtt, device.mpd)
        for device in registry.by_kind("music")
        if isinstance(device, MusicDevice) and device.mpd is not None
    ]


async def run_daemon(
    config: Config,
    registry: DeviceRegistry,
    engines: Engines,
    source: AudioSource | TypedTurns,
    sink: AudioSink,
    options: RunOptions,
) -> int:
    """Run until the input ends or a signal stops us; returns the number of turns taken.

    `source`: audio for the ear, or typed turns that take its place. This is the one owner of
    what the daemon starts: everything opened here is closed here, in reverse order, once.
    """
    loop = asyncio.get_running_loop()
    bus = EventBus()
    bus.bind_loop(loop)
    async with contextlib.AsyncExitStack() as stack:
        printer = asyncio.create_task(
            print_events(bus, verbose=options.verbose, events_file=options.events_file), name="printer"
        )
        stack.push_async_callback(drain_printer, printer)
        supervision = options.supervision  # every background task below: restarted if it raises
        supervision.report_to(bus)
        stack.push_async_callback(supervision.aclose)
        room = config.audio.room or ""  # the daemon's own room, named by its turns' events
        supervision.follow("assistant-state", bus, partial(publish_assistant_state, bus, room=room))
        supervision.follow("systemd-notify", bus, lambda events: notify_systemd(events, options.notify))
        stack.callback(notify_stopping, options.notify)  # once, as the shutdown unwinds to here
        if isinstance(engines.transcriber, WyomingTranscriber):
            stack.callback(engines.transcriber.close)  # its streaming thread
        gateway = DeviceGateway(registry, config.mqtt, bus, config.safety, devices=config.devices)
        gateway.start()
        stack.callback(gateway.stop)
        for player in mpd_players(registry, config):
            player.start()
            stack.callback(player.stop)
        if not await gateway.wait_connected(config.mqtt.connect_timeout_s):
            _LOGGER.warning(
                "MQTT broker %s:%s not reachable yet; device commands will be refused until it is",
                config.mqtt.host,
                config.mqtt.port,
            )
        stack.callback(sink.close)
        client = open_client(config.llm, config.llm.total_timeout_s) if config.llm.base_url else None
        if client is not None:
            stack.push_async_callback(client.close)  # lent to the agent, the planner and the brain
        stack.callback(engines.rehearsed.close)
        ahead, ahead_follows = None, lambda: None
        if judges_pauses(config) and not isinstance(source, TypedTurns):
            ahead, ahead_follows = foresight(
                config, registry, engines.synthesizer, engines.rehearsed, room=config.audio.room
            )
            stack.callback(ahead.close)  # before the rehearsed replies' file closes
        speech = SpeechOutput(
            engines.synthesizer,
            sink,
            bus,
            sentence_silence_s=config.tts.sentence_silence_s,
            output_rate=EAR_RATE if options.reference is not None else None,
            rehearsed=engines.rehearsed,
            room=room,  # its replies' and narrations' events name the daemon's own room
            foresight=ahead,
        )
        actions = DeviceActions(
            gateway,
            bus,
            config.mqtt.ack_timeout_s,
            config.vibe.confirm_timeout_s,
            state_wait_s=config.devices.state_wait_s,
        )
        intents = LocalIntentAgent(
            registry,
            gateway.state_of,
            config.agent.brightness_step_pct,
            room=config.audio.room,
            scent_limit=config.safety.scent_max_intensity,
            # with an LLM, a mood is its to compose; the presets' words are the local agent's own
            moods=preset_moods(config.vibe.presets_file) if config.agent_kind == "local" else {},
        )
        reconsider, second_follows = second_ear(config, registry, engines, lambda: intents.waiting)
        if config.devices.discovery:  # discovered devices come and go: the understanding follows
            hear = engines.transcriber

            def ear_words() -> None:
                if hear is not None:
                    hear.hear_home(HomeVocabulary.of(registry))
                second_follows()
                ahead_follows()

            supervision.follow(
                "discovery", bus, lambda changes: follow_home(bus, changes, registry, intents, ear_words)
            )
            stack.push_async_callback(supervision.stop, "discovery")
        voices = RoomVoices(RoomVoice("the daemon's own speaker", speech, bus, lambda: daemon.busy))
        narrator = SpokenNarrator(voices, config.vibe.narrate_wait_s)
        scenes_file = config.vibe.checkpoint_file or config.brain.state_file.with_name("voiced-scenes.sqlite")
        scenes_file.parent.mkdir(parents=True, exist_ok=True)
        vibe = build_vibe(
            config, registry, actions, bus, narrate=narrator, client=client, checkpoint=scenes_file
        )
        # its turns' commands name its room; the scenes', the plans' and the web's are no room's
        agent = build_agent(
            config, registry, actions.in_room(room), intents, vibe=vibe, bus=bus, client=client
        )
        plans = (
            build_plans(config, registry, actions, bus, intents, say=narrator, client=client)
            if config.plans.enabled
            else None
        )
        if plans is not None:
            fallback = config.agent_kind != "local"
            agent = PlanAgent(agent, plans, time.time, llm_fallback=fallback)
        brain = None
        if config.brain.enabled:
            brain = build_brain(
                config, registry, bus, vibe=vibe, say=narrator, client=client, supervision=supervision
            )
            stack.push_async_callback(brain.aclose)
        thinking = TurnThinking(brain, speech, bus, config.brain.filler, room) if brain is not None else None
        if brain is not None:
            agent = InterviewAgent(agent, brain, room)
        brain_wait_s = config.brain.barrier_timeout_s if brain is not None else None
        mute = MuteSwitch(bus)
        mute.set(config.wake.muted)
        # one Whisper queue for the daemon's ear and every satellite's room, taken room by room
        home_asr = HomeAsr(engines.transcriber) if engines.transcriber is not None else None
        wake = None
        if not isinstance(source, TypedTurns):
            wake = wake_gate(config.wake.word, config, bus, busy=lambda: daemon.busy or speech.speaking)
        ear: Listener = (
            TypedEar(source, bus, brain_wait_s=brain_wait_s)
            if isinstance(source, TypedTurns)
            else build_ear(
                config,
                engines,
                source,
                bus,
                speech,
                options.reference,
                stack,
                ends_request(config, intents, ahead.foresee if ahead is not None else None),
                mute,
                wake,
                reconsider,
                home_asr,
            )
        )
        daemon = Daemon(
            bus=bus,
            ear=ear,
            agent=agent,
            speech=speech,
            echo_db=config.audio.echo_unexplained_db,
            thinking=thinking,
            room=room,
        )
        # After the daemon exists: a resumed scene or plan may speak. The daemon closes the agent,
        # and so the scenes, as it stops; this closes them if it never ran (closing twice is fine).
        stack.push_async_callback(vibe.aclose)
        await vibe.open()  # resumes the scene a restart cut off, from its checkpoint
        if plans is not None:
            stack.push_async_callback(plans.engine.aclose)  # before the gateway stops, after the web
            await plans.engine.start()  # resumes unfinished plans from their checkpoints
        if config.satellites and engines.transcriber is not None:  # each in its room, after the scenes
            home = Home(config, engines, registry, actions, bus, vibe, client)
            home = replace(
                home,
                ends_request=partial(ends_request, config),
                supervision=supervision,
                rehearsed=speech.rehearsed,  # a room plays the replies rehearsed here
                asr=home_asr,
                brain=brain,  # the home's memory: every room's turns reach it
                plans=plans,  # one engine and ledger: a room's requests for later are the home's plans
                voices=voices,  # its turns' lines outside a reply (the brain's, the scenes'): said there
            )
            await stack.enter_async_context(serve_satellites(home, config.satellites))
        if options.web_socket is not None:
            controls = Controls(
                bus=bus,
                registry=registry,
                devices=gateway,
                take_turn=daemon.take_turn,
                mute=mute.set,
                is_muted=mute,
                conversation=lambda: brain.state.model_dump(mode="json") if brain is not None else None,
                vibe=vibe,
                plans=plans,
                supervision=supervision,
                actions=actions,
            )
            web = WebServer(config.web, controls, options.web_socket)
            await web.start()
            stack.push_async_callback(web.stop)
        if config.homeassistant.discovery:
            choice = WakeWordChoice(wake, get_args(WakeWord)) if wake is not None else None
            entities = HaEntities(
                config.homeassistant,
                config.mqtt,
                bus,
                mute=mute.set,
                is_muted=mute,
                wake=choice,
                room=config.audio.room,
                supervision=supervision,
            )
            await entities.start()
            stack.push_async_callback(entities.stop)
        if config.tts.rehearse != "none":
            await asyncio.to_thread(speech.warm, familiar_replies(registry))
        if config.agent_kind != "llm" and config.tts.rehearse == "likely":  # the rest, while nobody talks
            replies = private_intents(config, registry, home_replies)
            supervision.follow("rehearsal", bus, lambda events: rehearse(events, speech.keep, replies))
            stack.push_async_callback(supervision.stop, "rehearsal")
        if config.memory.give_back_after_turn:
            supervision.follow("memory", bus, give_back_after_turns)
            stack.push_async_callback(supervision.stop, "memory")
        main = asyncio.create_task(daemon.run(), name="daemon")
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, main.cancel)
            stack.callback(loop.remove_signal_handler, sig)
        loop.add_signal_handler(signal.SIGUSR1, mute.toggle)
        stack.callback(loop.remove_signal_handler, signal.SIGUSR1)
        try:
            await main  # the daemon closes the agent (and so the scenes) as it stops
            await asyncio.sleep(0.3)  # let the last device states arrive for the live view
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # not ours: the caller is cancelling us
            _LOGGER.info("stopped by signal; shut down cleanly")
        return daemon.turns_done
