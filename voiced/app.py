"""Builds the daemon from config and runs it with a live view; models load before Ready."""

from __future__ import annotations

import asyncio
import logging
import signal
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from voiced.audio.sinks import AudioSink
from voiced.audio.sources import AudioSource
from voiced.config import Config
from voiced.console import drain_printer, print_events
from voiced.daemon import Daemon, HalfDuplexGuard
from voiced.devices.gateway import DeviceGateway
from voiced.devices.registry import DeviceRegistry
from voiced.ear.listener import Ear
from voiced.ear.whisper import WhisperTranscriber, vocabulary_prompt
from voiced.events import EventBus
from voiced.mouth.intents import LocalIntentAgent
from voiced.mouth.piper_tts import PiperSynthesizer
from voiced.mouth.speech import SpeechOutput

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class Engines:
    transcriber: WhisperTranscriber
    synthesizer: PiperSynthesizer


def load_engines(config: Config, registry: DeviceRegistry) -> Engines:
    """Load and warm up both models so the first turn is as fast as the rest."""
    transcriber = WhisperTranscriber(config.asr, config.models_dir, prompt=vocabulary_prompt(registry))
    synthesizer = PiperSynthesizer(config.tts, config.models_dir)
    transcriber.transcribe(np.zeros(16000, dtype=np.int16))
    synthesizer.synthesize("Ready.")
    return Engines(transcriber, synthesizer)


@dataclass(frozen=True)
class RunOptions:
    verbose: bool = False
    events_file: Path | None = None
    half_duplex: bool = True


async def run_daemon(
    config: Config,
    registry: DeviceRegistry,
    engines: Engines,
    source: AudioSource,
    sink: AudioSink,
    options: RunOptions,
) -> int:
    """Run until the input ends or a signal stops us; returns the number of turns taken."""
    loop = asyncio.get_running_loop()
    bus = EventBus()
    bus.bind_loop(loop)
    printer = asyncio.create_task(
        print_events(bus, verbose=options.verbose, events_file=options.events_file), name="printer"
    )
    gateway = DeviceGateway(registry, config.mqtt, bus)
    gateway.start()
    if not await gateway.wait_connected(config.mqtt.connect_timeout_s):
        _LOGGER.warning(
            "MQTT broker %s:%s not reachable yet; device commands will be refused until it is",
            config.mqtt.host,
            config.mqtt.port,
        )
    speech = SpeechOutput(engines.synthesizer, sink, bus, sentence_silence_s=config.tts.sentence_silence_s)
    guard = HalfDuplexGuard(speech) if options.half_duplex else (lambda: False)
    daemon = Daemon(
        bus=bus,
        ear=Ear(source, config.vad, engines.transcriber, bus, is_deaf=guard),
        agent=LocalIntentAgent(registry, gateway.state_of, config.agent.brightness_step_pct),
        gateway=gateway,
        speech=speech,
    )
    main = asyncio.create_task(daemon.run(), name="daemon")
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, main.cancel)
    try:
        await main
        await asyncio.sleep(0.3)  # let the last device states arrive for the live view
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise  # not ours: the caller is cancelling us
        _LOGGER.info("stopped by signal; shut down cleanly")
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        sink.close()
        gateway.stop()
        await drain_printer(printer)
    return daemon.turns_done
