"""What each `voiced` subcommand does, once the config is parsed."""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import logging
import signal
import sys
import tempfile
from pathlib import Path

from voiced.audio.reference import PlaybackReference
from voiced.audio.sinks import AudioSink, AudioSinkError, SpeakerSink, WavFileSink, has_speaker
from voiced.audio.sources import (
    AudioSource,
    AudioSourceError,
    MicrophoneSource,
    WavFileSource,
    has_microphone,
)
from voiced.bus import EventBus
from voiced.config import Config
from voiced.devices.gateway import DeviceGateway
from voiced.devices.registry import DeviceRegistry
from voiced.devices.simulator import DeviceSimulator, bridge_already_online
from voiced.ear.typed import TypedTurns, TypedTurnsError
from voiced.errors import DeviceError

EXIT_AUDIO = 3
EXIT_BROKER = 1
EXIT_SATELLITE = 1  # a satellite did not answer
SATELLITE_PROBE_S = 3.0


NO_MICROPHONE = "set audio.input_device to a microphone, or use --input FILE.wav or --text FILE"


def _fail(message: str, code: int) -> int:
    print(f"voiced: {message}", file=sys.stderr)
    return code


def _check_output_path(path: Path) -> str | None:
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        return f"cannot write {path}: folder {folder} does not exist"
    if path.is_dir():
        return f"cannot write {path}: it is a directory"
    return None


def _typed_turns(path: Path) -> TypedTurns:
    """`-` is standard input, read as it comes; a file is read and checked at once."""
    if str(path) == "-":
        return TypedTurns.from_stream(io.FileIO(sys.stdin.fileno(), "rb", closefd=False))
    return TypedTurns.from_file(path)


def run(args: argparse.Namespace, config: Config, registry: DeviceRegistry) -> int:
    from voiced.app import RunOptions, run_daemon  # ~1.5 s of imports only these need
    from voiced.engines import load_engines

    if args.new_session:
        config = config.model_copy(update={"brain": config.brain.model_copy(update={"new_session": True})})
    # Every device and file is checked before the models load, so mistakes fail in a second.
    # Echo handling only makes sense when our voice can reach our microphone.
    typed = args.text is not None
    reference = PlaybackReference() if not args.input and not typed and not args.output else None
    try:
        source: AudioSource | TypedTurns
        if typed:
            source = _typed_turns(args.text)
        elif args.input:
            source = WavFileSource(args.input, realtime=not args.fast)
        else:
            source = MicrophoneSource(config.audio.input_device, reference)
    except (AudioSourceError, TypedTurnsError) as exc:
        hint = f"; {NO_MICROPHONE}" if not args.input and not typed else ""
        return _fail(f"{exc}{hint}", EXIT_AUDIO)
    if not args.input and not typed:
        found, detail = has_microphone(config.audio.input_device)
        if not found:
            where = f"audio.input_device={config.audio.input_device!r}"
            return _fail(f"no usable microphone ({where}): {detail}; {NO_MICROPHONE}", EXIT_AUDIO)
    if args.output:
        if problem := _check_output_path(args.output):
            return _fail(problem, EXIT_AUDIO)
    else:
        found, detail = has_speaker(config.audio.output_device)
        if not found:
            where = f"audio.output_device={config.audio.output_device!r}"
            return _fail(
                f"no usable speaker ({where}): {detail}; use --output FILE.wav to write replies to a file",
                EXIT_AUDIO,
            )
    web_socket, page = None, ""
    if config.web.port:
        from voiced.web.server import bind

        web_socket = bind(config.web)  # a taken port is a ConfigError (exit 2) before the models load
        host = f"[{config.web.host}]" if ":" in config.web.host else config.web.host
        page = f" (then the web page: http://{host}:{config.web.port}/)"
    print(f"loading models…{page}", file=sys.stderr, flush=True)
    # typed turns need no Whisper; the satellites' rooms do
    engines = load_engines(config, registry, whisper=not typed or bool(config.satellites))
    try:
        sink: AudioSink = (
            WavFileSink(args.output, engines.synthesizer.sample_rate)
            if args.output
            else SpeakerSink(config.audio.output_device, reference)
        )
        options = RunOptions(
            verbose=args.verbose,
            events_file=args.events,
            reference=reference,
            notify=args.notify,
            web_socket=web_socket,
        )
        turns = asyncio.run(run_daemon(config, registry, engines, source, sink, options))
    except (AudioSourceError, AudioSinkError, TypedTurnsError) as exc:
        return _fail(str(exc), EXIT_AUDIO)
    if args.input and turns == 0:
        print(f"no speech heard in {args.input}", flush=True)
    if isinstance(source, TypedTurns) and turns == 0:
        print(f"no typed turns in {source.name}", flush=True)
    if isinstance(sink, WavFileSink):
        print(f"spoken replies written to {args.output} ({sink.seconds_written:.1f} s)", flush=True)
    return 0


def demo(args: argparse.Namespace, config: Config, registry: DeviceRegistry) -> int:
    from voiced.app import RunOptions, run_daemon
    from voiced.demo import DEMO_SCRIPT, write_script_wav
    from voiced.engines import load_engines

    if problem := _check_output_path(args.output):
        return _fail(problem, EXIT_AUDIO)
    print("loading models…", file=sys.stderr, flush=True)
    engines = load_engines(config, registry)
    sink = WavFileSink(args.output, engines.synthesizer.sample_rate)
    with tempfile.TemporaryDirectory(prefix="voiced-demo-") as tmp:
        # A demo's talk is not the user's conversation: its state lives and dies with the demo.
        brain = config.brain.model_copy(update={"state_file": Path(tmp) / "demo-state.sqlite"})
        config = config.model_copy(update={"brain": brain})
        spoken = Path(tmp) / "user.wav"
        seconds = write_script_wav(engines.synthesizer, DEMO_SCRIPT, spoken)
        print(f"demo: playing {len(DEMO_SCRIPT)} spoken requests ({seconds:.0f} s) into the ear", flush=True)
        source = WavFileSource(spoken, realtime=not args.fast)
        options = RunOptions(verbose=args.verbose, events_file=args.events)
        asyncio.run(run_daemon(config, registry, engines, source, sink, options))
    print(f"demo: spoken replies written to {args.output} ({sink.seconds_written:.1f} s)", flush=True)
    return 0


def simulate(args: argparse.Namespace, config: Config, registry: DeviceRegistry) -> int:
    where = f"{config.mqtt.host}:{config.mqtt.port}"
    for name in [*args.silent, *args.offline]:
        try:
            registry.get(name)
        except DeviceError as exc:
            return _fail(f"simulate: {exc}", 2)

    async def serve() -> int:
        if await bridge_already_online(config.mqtt):
            return _fail(
                f"simulate: a Zigbee2MQTT bridge already says online on {where}: that is a real home "
                "(or another simulator); refusing to play devices there",
                2,
            )
        # a music device with its own MPD is played by the daemon on MPD, not pretended here
        played = DeviceRegistry([d for d in registry if getattr(d, "mpd", None) is None])
        simulator = DeviceSimulator(
            played,
            config.mqtt,
            delay_s=args.delay_ms / 1000,
            silent=args.silent,
            offline=args.offline,
        )
        simulator.start()
        if not await simulator.wait_connected(config.mqtt.connect_timeout_s):
            print(f"simulator: waiting for the MQTT broker at {where}…", flush=True)
        print(f"simulator: playing {len(registry)} devices on {where}; Ctrl-C stops", flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        try:
            await stop.wait()
        finally:
            simulator.stop()
        return 0

    logging.getLogger("voiced.devices.simulator").setLevel(logging.INFO)
    return asyncio.run(serve())


def devices(args: argparse.Namespace, config: Config, registry: DeviceRegistry) -> int:
    async def collect() -> int:
        gateway = DeviceGateway(registry, config.mqtt, EventBus(), devices=config.devices)
        gateway.start()
        try:
            if not await gateway.wait_connected(config.mqtt.connect_timeout_s):
                where = f"{config.mqtt.host}:{config.mqtt.port}"
                hint = "is the broker running there? (mqtt.host and mqtt.port in the config)"
                message = f"MQTT broker {where} not reachable; no device states to show; {hint}"
                return _fail(message, EXIT_BROKER)
            # Retained states and discovery configs arrive right after subscribing; Zigbee2MQTT's
            # states answer our `/get`, and a discovered device's answer comes after its config.
            await asyncio.sleep(1.5)
            for device in registry:
                state = gateway.state_of(device.name)
                shown = json.dumps(state, separators=(",", ":")) if state is not None else "(no state yet)"
                heard = gateway.availability(device.name)
                online = "unknown" if heard is None else "online" if heard else "offline"
                source = registry.source_of(device.name)
                row = f"{device.name:<20} {device.kind:<9} {online:<8} {device.command_topic:<34} {shown}"
                print(f"{row}  [{source}]")
            return 0
        finally:
            gateway.stop()

    return asyncio.run(collect())


def satellites(args: argparse.Namespace, config: Config, registry: DeviceRegistry) -> int:
    """Each configured satellite asked to describe itself: up (and what it is) or why not."""
    from voiced.satellites.probe import probe_all

    if not config.satellites:
        print("no satellites configured (satellites: in the config file)")
        return 0
    probes = asyncio.run(probe_all(config.satellites, SATELLITE_PROBE_S))
    for found in probes:
        print(found.row())
    return 0 if all(found.software is not None for found in probes) else EXIT_SATELLITE


def check_audio(args: argparse.Namespace, config: Config) -> int:
    """The microphone and speaker of audio.input_device and audio.output_device (defaults if no config)."""
    mic_ok, mic = has_microphone(config.audio.input_device)
    speaker_ok, speaker = has_speaker(config.audio.output_device)
    print(f"microphone: {'ok' if mic_ok else 'not available'} ({mic})")
    print(f"speaker:    {'ok' if speaker_ok else 'not available'} ({speaker})")
    if not mic_ok:
        print(f"voiced: no microphone: {NO_MICROPHONE}", file=sys.stderr)
    return 0 if mic_ok else EXIT_AUDIO


def state(args: argparse.Namespace, config: Config, registry: DeviceRegistry) -> int:
    from voiced.brain.store import StateStore

    path = config.brain.state_file
    if not path.exists():  # a directory in its place is StateStore's ConfigError (exit 2)
        return _fail(f"no conversation state yet: {path} does not exist (voiced run creates it)", 1)
    current = StateStore(path).load()
    if current is None:
        return _fail(f"no conversation state in {path}", 1)
    print(current.model_dump_json(indent=2))
    return 0
