"""The `voiced` command line: argument parsing, config loading at the edge, exit codes."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from voiced.config import Config, load_config
from voiced.config_satellites import check_rooms
from voiced.devices.registry import DeviceRegistry
from voiced.errors import ConfigError
from voiced.logs import configure as configure_logs
from voiced.systemd import notify_settings

EXIT_CONFIG = 2
EXIT_AUDIO = 3


# Errors raised below the config name only the field ("asr.model: ..."); these say which file holds it.
_CONFIG_FIELDS = ("devices_dir:", "models_dir:", *(f"{name}." for name in Config.model_fields))


def _naming_the_file(path: Path | None, exc: ConfigError) -> ConfigError:
    if str(exc).startswith(_CONFIG_FIELDS):
        origin = path or "defaults (no config file given and no ./config.yaml)"
        return ConfigError(f"{origin}: {exc}")
    return exc


def load_all(path: Path | None, environ: Mapping[str, str]) -> tuple[Config, DeviceRegistry]:
    """The config and the declared devices, read once here at the edge."""
    config = load_config(path, environ)
    try:
        return config, DeviceRegistry.load(config.devices_dir)
    except ConfigError as exc:
        raise _naming_the_file(path, exc) from None


def check_all(
    path: Path | None, environ: Mapping[str, str], *, models: bool
) -> tuple[Config, DeviceRegistry]:
    """Everything check-config checks (and `run` before it starts); ConfigError names file and field."""
    # the presets alone, not voiced.vibe.setup: importing the openai client would double check-config's time
    from voiced.vibe.presets import PresetPlanner

    config, registry = load_all(path, environ)
    try:
        # scene presets name devices: checked before anything starts
        PresetPlanner(config.vibe.presets_file, registry, config.vibe.default_preset)
        if not config.devices.discovery:  # discovered devices may bring a satellite's room later
            rooms = (device.room for device in registry if device.room)
            check_rooms(config.satellites, rooms, path or "defaults")
        if models:
            _check_models(config)
    except ConfigError as exc:
        raise _naming_the_file(path, exc) from None
    return config, registry


def _default_config() -> Path | None:
    path = Path("config.yaml")
    return path if path.is_file() else None


def _add_common_options(target: argparse.ArgumentParser, *, after_command: bool) -> None:
    """-c, -v and --log-level work before and after the subcommand (`voiced run -v`).

    After the subcommand their default is SUPPRESS, so it does not overwrite the value given before.
    """

    def default(value: object) -> object:
        return argparse.SUPPRESS if after_command else value

    target.add_argument(
        "-c",
        "--config",
        type=Path,
        default=default(None),
        help="config file (default: ./config.yaml if present, else built-in defaults)",
    )
    target.add_argument(
        "-v", "--verbose", action="store_true", default=default(False), help="print every event as it happens"
    )
    target.add_argument("--log-level", default=default("WARNING"), help="DEBUG, INFO, WARNING or ERROR")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="voiced", description="Offline voice assistant for the smart home")
    _add_common_options(parser, after_command=False)
    common = argparse.ArgumentParser(add_help=False)
    _add_common_options(common, after_command=True)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser(
        "run",
        parents=[common],
        help="listen and answer (microphone → speaker by default; --text FILE for typed turns)",
    )
    heard = run.add_mutually_exclusive_group()
    heard.add_argument("--input", type=Path, metavar="WAV", help="a 16-bit WAV file used as the microphone")
    heard.add_argument(
        "--text",
        type=Path,
        metavar="FILE",
        help="typed turns instead of speech: one per line (UTF-8; blank lines and # comments skipped),"
        " each taken when the previous turn has finished; '-' reads standard input",
    )
    run.add_argument("--output", type=Path, metavar="WAV", help="write the spoken replies to this WAV file")
    run.add_argument("--fast", action="store_true", help="read --input as fast as possible, not in real time")
    run.add_argument("--events", type=Path, metavar="FILE", help="write every event as JSON lines to FILE")
    run.add_argument(
        "--new-session", action="store_true", help="start a new conversation state instead of resuming"
    )

    demo = sub.add_parser(
        "demo", parents=[common], help="a scripted spoken conversation, through the real ear"
    )
    demo.add_argument(
        "--output",
        type=Path,
        default=Path("demo-replies.wav"),
        metavar="WAV",
        help="where the spoken replies go (default demo-replies.wav)",
    )
    demo.add_argument("--fast", action="store_true", help="do not pace the audio in real time")
    demo.add_argument("--events", type=Path, metavar="FILE", help="write every event as JSON lines to FILE")

    simulate = sub.add_parser(
        "simulate", parents=[common], help="play every device in devices/ on the MQTT broker"
    )
    simulate.add_argument("--delay-ms", type=int, default=0, help="report new states after this delay")
    simulate.add_argument(
        "--silent", action="append", default=[], metavar="DEVICE", help="a device that never confirms"
    )
    simulate.add_argument(
        "--offline", action="append", default=[], metavar="DEVICE", help="a device announced offline"
    )
    check = sub.add_parser("check-config", parents=[common], help="validate config, device files and models")
    check.add_argument("file", type=Path, nargs="?", help="config file (default: as -c)")
    sub.add_parser("devices", parents=[common], help="list devices and their last known state")
    sub.add_parser(
        "check-audio",
        parents=[common],
        help="exit 0 if a microphone can be opened (needs no config file or device files)",
    )
    sub.add_parser("satellites", parents=[common], help="list the satellites and whether each answers")
    sub.add_parser("state", parents=[common], help="print the brain's conversation state (JSON)")
    return parser


def _check_models(config: Config) -> None:
    """Find (not load) both models, so check-config catches what `run` would refuse."""
    from voiced.ear.whisper import resolve_model_path
    from voiced.mouth.piper_tts import resolve_voice_path

    resolve_model_path(config.asr.model, config.models_dir)
    if config.asr.second_model is not None:
        resolve_model_path(config.asr.second_model, config.models_dir, "asr.second_model")
    resolve_voice_path(config.tts, config.models_dir)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    # Whisper's OpenMP threads spin while they wait for work unless told not to (read once, as
    # CTranslate2 loads): ~10 % of its CPU, and no slower on a busy box
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    # Under journald (it sets JOURNAL_STREAM) the journal stamps each line: no second timestamp.
    configure_logs(args.log_level, timestamps=not os.environ.get("JOURNAL_STREAM"))
    args.notify = notify_settings(dict(os.environ))
    config_path = getattr(args, "file", None) or args.config or _default_config()
    try:
        if args.command == "check-audio":  # the sound devices only: no device files, models or broker
            from voiced.commands import check_audio

            return check_audio(args, load_config(config_path, os.environ))
        config, registry = check_all(config_path, os.environ, models=args.command == "check-config")
        if args.command == "check-config":
            count = f"{len(registry)} device{'' if len(registry) == 1 else 's'}"
            print(f"{config_path or 'defaults'}: OK ({count} from {config.devices_dir})")
            return 0
        from voiced import commands

        handler = {
            "run": commands.run,
            "demo": commands.demo,
            "simulate": commands.simulate,
            "devices": commands.devices,
            "satellites": commands.satellites,
            "state": commands.state,
        }[args.command]
        try:
            return handler(args, config, registry)
        except ConfigError as exc:
            raise _naming_the_file(config_path, exc) from None
    except ConfigError as exc:
        print(f"voiced: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except KeyboardInterrupt:
        return 130
