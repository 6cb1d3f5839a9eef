"""The `voiced` command line."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

from voiced.config import Config, load_all
from voiced.devices.registry import DeviceRegistry
from voiced.errors import ConfigError

EXIT_CONFIG = 2
EXIT_AUDIO = 3
_LOGGER = logging.getLogger("voiced")


def _default_config() -> Path | None:
    path = Path("config.yaml")
    return path if path.is_file() else None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="voiced", description="Offline voice assistant for the smart home")
    parser.add_argument("-c", "--config", type=Path, default=None, help="config file (default ./config.yaml)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every event as it happens")
    parser.add_argument("--log-level", default="WARNING", help="logging level (default WARNING)")
    # The same options after the subcommand (`voiced run -v`); SUPPRESS keeps the top-level value.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-c", "--config", type=Path, default=argparse.SUPPRESS)
    common.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS)
    common.add_argument("--log-level", default=argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", parents=[common], help="listen and answer (microphone → speaker by default)")
    run.add_argument("--input", type=Path, help="a WAV file to use as the microphone")
    run.add_argument("--output", type=Path, help="write spoken replies to this WAV file")
    run.add_argument("--fast", action="store_true", help="read --input as fast as possible")
    run.add_argument("--events", type=Path, help="write every event as JSON lines to this file")

    demo = sub.add_parser(
        "demo", parents=[common], help="a scripted spoken conversation through the real ear"
    )
    demo.add_argument("--output", type=Path, default=Path("demo-replies.wav"))
    demo.add_argument("--fast", action="store_true", help="do not pace the audio in real time")
    demo.add_argument("--events", type=Path)

    sub.add_parser("simulate", parents=[common], help="play every device in devices/ on the MQTT broker")
    check = sub.add_parser(
        "check-config", parents=[common], help="validate a config file and its device files"
    )
    check.add_argument("file", type=Path, nargs="?")
    sub.add_parser("devices", parents=[common], help="list devices and their last known state")
    sub.add_parser("check-audio", parents=[common], help="exit 0 if a microphone can be opened")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    config_path = getattr(args, "file", None) or args.config or _default_config()
    try:
        config, registry = load_all(config_path, os.environ)
    except ConfigError as exc:
        print(f"voiced: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    if args.command == "check-config":
        print(f"{config_path or 'defaults'}: OK ({len(registry)} devices from {config.devices_dir})")
        return 0
    handler = {
        "run": _run,
        "demo": _demo,
        "simulate": _simulate,
        "devices": _devices,
        "check-audio": _check_audio,
    }[args.command]
    try:
        return handler(args, config, registry)
    except ConfigError as exc:
        print(f"voiced: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except KeyboardInterrupt:
        return 130


def _run(args: argparse.Namespace, config: Config, registry: DeviceRegistry) -> int:
    from voiced.app import RunOptions, load_engines, run_daemon
    from voiced.audio.sinks import AudioSink, AudioSinkError, SpeakerSink, WavFileSink
    from voiced.audio.sources import (
        AudioSource,
        AudioSourceError,
        MicrophoneSource,
        WavFileSource,
        has_microphone,
    )

    if not args.input:
        found, detail = has_microphone(config.audio.input_device)
        if not found:
            print(
                f"voiced: no usable microphone (audio.input_device={config.audio.input_device!r}): {detail}",
                file=sys.stderr,
            )
            return EXIT_AUDIO
    try:
        source: AudioSource = (
            WavFileSource(args.input, realtime=not args.fast)
            if args.input
            else MicrophoneSource(config.audio.input_device)
        )
    except AudioSourceError as exc:
        print(f"voiced: {exc}", file=sys.stderr)
        return EXIT_AUDIO
    sink: AudioSink = WavFileSink(args.output) if args.output else SpeakerSink(config.audio.output_device)
    # Half duplex only makes sense when our voice can reach our microphone.
    half_duplex = config.audio.half_duplex and not args.input and not args.output
    print("loading models…", file=sys.stderr, flush=True)
    engines = load_engines(config, registry)
    options = RunOptions(verbose=args.verbose, events_file=args.events, half_duplex=half_duplex)
    try:
        return asyncio.run(run_daemon(config, registry, engines, source, sink, options))
    except (AudioSourceError, AudioSinkError) as exc:
        print(f"voiced: {exc}", file=sys.stderr)
        return EXIT_AUDIO


def _demo(args: argparse.Namespace, config: Config, registry: DeviceRegistry) -> int:
    from voiced.app import RunOptions, load_engines, run_daemon
    from voiced.audio.sinks import WavFileSink
    from voiced.audio.sources import WavFileSource
    from voiced.demo import DEMO_SCRIPT, write_script_wav

    print("loading models…", file=sys.stderr, flush=True)
    engines = load_engines(config, registry)
    with tempfile.TemporaryDirectory(prefix="voiced-demo-") as tmp:
        spoken = Path(tmp) / "user.wav"
        seconds = write_script_wav(engines.synthesizer, DEMO_SCRIPT, spoken)
        print(f"demo: playing {len(DEMO_SCRIPT)} spoken requests ({seconds:.0f} s) into the ear", flush=True)
        source = WavFileSource(spoken, realtime=not args.fast)
        sink = WavFileSink(args.output)
        options = RunOptions(verbose=args.verbose, events_file=args.events, half_duplex=False)
        code = asyncio.run(run_daemon(config, registry, engines, source, sink, options))
    print(f"demo: spoken replies written to {args.output} ({sink.seconds_written:.1f} s)", flush=True)
    return code


def _simulate(args: argparse.Namespace, config: Config, registry: DeviceRegistry) -> int:
    from voiced.devices.simulator import DeviceSimulator

    async def serve() -> None:
        simulator = DeviceSimulator(registry, config.mqtt)
        simulator.start()
        if not await simulator.wait_connected(config.mqtt.connect_timeout_s):
            print(f"simulator: waiting for MQTT broker {config.mqtt.host}:{config.mqtt.port}…", flush=True)
        print(
            f"simulator: playing {len(registry)} devices on {config.mqtt.host}:{config.mqtt.port}", flush=True
        )
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        try:
            await stop.wait()
        finally:
            simulator.stop()

    logging.getLogger("voiced.devices.simulator").setLevel(logging.INFO)
    asyncio.run(serve())
    return 0


def _devices(args: argparse.Namespace, config: Config, registry: DeviceRegistry) -> int:
    from voiced.devices.gateway import DeviceGateway
    from voiced.events import EventBus

    async def collect() -> int:
        gateway = DeviceGateway(registry, config.mqtt, EventBus())
        gateway.start()
        try:
            reachable = await gateway.wait_connected(config.mqtt.connect_timeout_s)
            if reachable:
                await asyncio.sleep(1.0)  # retained states arrive right after subscribing
            for device in registry:
                state = gateway.state_of(device.name)
                shown = state if state is not None else "(no state reported)"
                print(f"{device.name:<20} {device.kind:<9} {device.command_topic:<34} {shown}")
            if not reachable:
                print(f"MQTT broker {config.mqtt.host}:{config.mqtt.port} not reachable", file=sys.stderr)
                return 1
            return 0
        finally:
            gateway.stop()

    return asyncio.run(collect())


def _check_audio(args: argparse.Namespace, config: Config, registry: DeviceRegistry) -> int:
    from voiced.audio.sources import has_microphone

    started = time.monotonic()
    ok, detail = has_microphone(config.audio.input_device)
    print(f"microphone: {'ok' if ok else 'not available'} ({detail}) [{time.monotonic() - started:.1f} s]")
    return 0 if ok else EXIT_AUDIO
