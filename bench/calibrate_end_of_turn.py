"""Calibrates vad.complete_hangover_ms: the silence after which a whole, confident request ends the turn,
and vad.careful_turns: how long a speaker once cut (who went on within the hangover) gets the full one.

The paused-commands set's TUNING half (bench/paused/commands.yaml: commands with 200-600 ms pauses
at phrase boundaries, spoken by piper's joe at two rates) is played in real time through the real
ear: webrtcvad, the segmenter, Whisper tiny.en with the home's prompt, and the end-of-turn rule
judging each pause with the local intents, as the daemon does. For each silence value it prints
premature ends (a command cut before its last part) and end of speech → turn closed (p50, p95);
0 is the rule off (every turn waits vad.hangover_ms). The value chosen is the shortest with at most
1 premature end in 100 commands; `--held-out MS` then reports that value on the other half.

Each pair of values is a run of its own over the half, in order, as one speaker: a cut early on makes
the careful turns after it.

Run: .venv/bin/python bench/calibrate_end_of_turn.py [--values 0,150,300,450] [--careful 0,20]
[--held-out MS]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.paused.spoken_set import Said, load, score, speak, split  # noqa: E402
from voiced.app import ends_request  # noqa: E402
from voiced.audio.pcm import EAR_RATE, write_wav  # noqa: E402
from voiced.audio.sources import WavFileSource  # noqa: E402
from voiced.bus import EventBus  # noqa: E402
from voiced.config import Config  # noqa: E402
from voiced.devices.registry import DeviceRegistry  # noqa: E402
from voiced.ear.listener import Ear  # noqa: E402
from voiced.ear.utterance import Utterance  # noqa: E402
from voiced.engines import load_engines  # noqa: E402
from voiced.mouth.intents import LocalIntentAgent  # noqa: E402

TARGET = 0.01  # premature ends per command, at most


class CountingSource:
    """The WAV in real time; `heard_s`: how much of it the ear has been given."""

    def __init__(self, path: Path) -> None:
        self._wav = WavFileSource(path, realtime=True)
        self.heard_s = 0.0

    async def frames(self, frame_ms: int) -> AsyncIterator[bytes]:
        async for frame in self._wav.frames(frame_ms):
            self.heard_s += frame_ms / 1000
            yield frame


async def closes_at(
    track: Path, config: Config, whole_ms: int, careful: int, registry: DeviceRegistry, engines
) -> list[float]:  # type: ignore[no-untyped-def]
    """When each turn closed, in seconds into the track."""
    vad = config.vad.model_copy(update={"complete_hangover_ms": whole_ms, "careful_turns": careful})
    config = config.model_copy(update={"vad": vad})
    intents = LocalIntentAgent(registry, lambda _name: None, room=config.audio.room)
    source = CountingSource(track)
    closes: list[float] = []

    def deliver(_utterance: Utterance) -> None:
        closes.append(source.heard_s)

    assert engines.transcriber is not None
    ear = Ear(source, config.vad, engines.transcriber, EventBus(), judge=ends_request(config, intents))
    await ear.run(deliver)
    return closes


def ms(values: list[float], q: float) -> str:
    if not values:
        return "   -"
    ordered = sorted(values)
    return f"{ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000:4.0f}"


def report(label: str, said: list[Said], closes: list[float]) -> tuple[float, list[Said]]:
    premature, latencies = score(said, closes)
    share = len(premature) / len(said)
    print(
        f"{label:>8}  premature {len(premature):3d}/{len(said)} ({share * 100:5.1f}%)   "
        f"end of speech -> turn closed p50 {ms(latencies, 0.5)} ms  p95 {ms(latencies, 0.95)} ms",
        flush=True,
    )
    return share, premature


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--values", default="0,150,300,450", help="silences to try, ms (0: the rule off)")
    parser.add_argument("--careful", default="20", help="vad.careful_turns values to try with each silence")
    parser.add_argument("--held-out", type=int, metavar="MS", help="report this value on the held-out half")
    args = parser.parse_args()
    seed, pause_ms, commands = load()
    tuning, held_out = split(commands, seed)
    half, values = (
        (held_out, [args.held_out])
        if args.held_out is not None
        else (tuning, [int(v) for v in args.values.split(",")])
    )
    config = Config.model_validate(
        {
            "devices_dir": str(REPO / "devices"),
            "models_dir": str(REPO / "models"),
            "asr": {"second_model": None},
        }
    )
    registry = DeviceRegistry.load(config.devices_dir)
    print(f"load average {os.getloadavg()[0]:.1f}: other work on the box slows Whisper", flush=True)
    engines = load_engines(config, registry)
    with tempfile.TemporaryDirectory(prefix="voiced-eot-") as tmp:
        track = Path(tmp) / "paused.wav"
        audio, said = speak(half, seed, pause_ms, config.models_dir)
        write_wav(track, audio, EAR_RATE)
        name = "held-out" if args.held_out is not None else "tuning"
        print(
            f"{name} half: {len(said)} spoken commands, {len(audio) / EAR_RATE:.0f} s per value, "
            f"hangover {config.vad.hangover_ms} ms, early ASR at {config.vad.early_asr_ms} ms",
            flush=True,
        )
        results = {}
        for value in values:
            for careful in [int(c) for c in args.careful.split(",")] if value else [0]:
                closes = asyncio.run(closes_at(track, config, value, careful, registry, engines))
                label = f"{value} ms, careful {careful}" if value else "off"
                results[(value, careful)] = report(label, said, closes)
    for (value, careful), (_share, premature) in results.items():
        for item in premature:
            print(
                f"  cut at {value or 'off'}, careful {careful}: {item.voice:8} {item.text!r} "
                f"pauses {item.pauses_ms} ms"
            )
    if args.held_out is None:
        fit = [(v, c) for (v, c), (share, _) in results.items() if v and share <= TARGET]
        print(
            f"shortest silence with at most {TARGET * 100:.0f} premature end in 100 (and its fewest careful "
            f"turns): {min(fit) if fit else 'none of those tried'}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
