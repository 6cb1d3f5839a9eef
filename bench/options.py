"""Command-line options the benchmarks share."""

from __future__ import annotations

import argparse
from typing import Any

import yaml


def setting(text: str) -> tuple[str, str, Any]:
    """ "vad.early_asr_ms=60" → ("vad", "early_asr_ms", 60): one daemon setting (an argparse type)."""
    key, sep, value = text.partition("=")
    section, dot, name = key.partition(".")
    if not sep or not dot or not section or not name or not value:
        raise argparse.ArgumentTypeError(f"expected SECTION.KEY=VALUE: {text!r}")
    return section, name, yaml.safe_load(value)


def add_set_option(parser: argparse.ArgumentParser, example: str) -> None:
    """`--set SECTION.KEY=VALUE` (repeatable): parsed into `setting` tuples in `args.set`."""
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        type=setting,
        metavar="SECTION.KEY=VALUE",
        help=f"a daemon setting for every run, e.g. {example} (repeatable)",
    )
