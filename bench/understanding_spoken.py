"""Spoken understanding benchmark: the text corpus's kind of sentences, spoken by several voices into
the real daemon (`voiced run --input WAV`), scored by the commands that reach the MQTT broker.

Sentences: a seeded pick from bench/understanding/corpus_*.yaml, spread over the families, that
can be spoken in one run (no starting states, no "it"/"them"/"that", no room but the daemon's
own, "living room"), a few of them sentences that must move nothing (reported speech,
questions). Conditions: piper's joe (the daemon's own voice) at normal and fast rate, espeak-ng
voices at 175 and 230 words a minute, and noisy copies (babble, pink noise). Each condition is
one WAV, played with `--fast` (the ear counts frames, not seconds: turns come out as in real
time, only sooner) into a daemon of its own against a private Mosquitto and silent simulated
devices. Prints, per condition: exact %, misses, wrong effects, sentences heard word for word,
WER, and Whisper's time per utterance; then the sentences that failed most, with what was heard.
Assertions: none. Run: scripts/bench.sh understanding-spoken [--conditions piper*] [--beam 1,5]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.options import add_set_option  # noqa: E402
from bench.understanding.spoken_corpus import SEED, Case, describe, load_corpus, select  # noqa: E402
from bench.understanding.spoken_run import (  # noqa: E402
    default_beam,
    private_home,
    run_condition,
    write_config,
)
from bench.understanding.spoken_score import (  # noqa: E402
    ConditionResult,
    score,
    summarise,
    table,
    to_json,
    worst,
)
from bench.understanding.spoken_voices import (  # noqa: E402
    Speaker,
    build_track,
    ensure_espeak,
    pick_conditions,
)
from voiced.config import VadConfig  # noqa: E402
from voiced.devices.registry import DeviceRegistry  # noqa: E402

CORPUS_DIR = REPO / "bench" / "understanding"
LEGEND = """
exact: the commands on the broker are exactly the expected ones; wrong: a command came that nobody asked
for; miss: neither (an expected command never came); heard: transcript = sentence, normalised; fail|heard:
not exact although heard word for word (the understanding's part); ASR: Whisper's time per utterance"""


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min), {five:.1f} (5 min): other work on the box slows Whisper"


def _beams(text: str) -> list[int]:
    try:
        beams = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a beam size or a list of them: {text!r}") from None
    if not beams or any(not 1 <= beam <= 10 for beam in beams):
        raise argparse.ArgumentTypeError(f"beam sizes go from 1 to 10: {text!r}")
    return beams


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--corpus",
        type=Path,
        action="append",
        help="a corpus YAML (repeatable; default: bench/understanding/corpus_*.yaml)",
    )
    parser.add_argument("--conditions", help="comma-separated names or globs, e.g. 'piper*,espeak-us'")
    parser.add_argument("--sentences", type=int, default=40, help="sentences per condition (default 40)")
    parser.add_argument("--silent", type=int, default=5, help="of them, ones that must move nothing (5)")
    parser.add_argument("--seed", type=int, default=SEED, help="the pick's seed")
    parser.add_argument(
        "--beam",
        type=_beams,
        help="Whisper's beam for every utterance (asr.beam_size and short_beam_size), or several to compare, "
        "e.g. 1,5: each condition is then run once per beam, one after the other (default: the daemon's own)",
    )
    add_set_option(parser, "asr.short_window_s=10")
    parser.add_argument("--realtime", action="store_true", help="pace the audio in real time (not --fast)")
    parser.add_argument("--worst", type=int, default=10, help="how many failing sentences to show (10)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write every sentence's result here")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep the WAVs, events and replies here")
    parser.add_argument(
        "--devices",
        type=Path,
        default=REPO / "devices",
        metavar="DIR",
        help="the home's device files (default: the repo's devices/, whose music device has a library)",
    )
    args = parser.parse_args()

    registry = DeviceRegistry.load(args.devices)
    corpora = args.corpus or sorted(CORPUS_DIR.glob("corpus_*.yaml"))
    if not corpora:
        raise SystemExit(f"bench: no corpus in {CORPUS_DIR} (corpus_*.yaml); give one with --corpus")
    pool: list[Case] = []
    for path in corpora:
        cases, broken = load_corpus(path, registry)
        pool += cases
        for line in broken:
            print(f"bench: left out, broken: {line}")
    chosen = select(pool, args.sentences, args.silent, args.seed)
    if not chosen:
        raise SystemExit("bench: no sentence in the corpora can be spoken (see the module doc)")
    conditions = pick_conditions(args.conditions)
    if any(c.voice.engine == "espeak" or c.noise == "babble" for c in conditions):
        ensure_espeak()
    print(f"bench: {describe(chosen)}; of {len(pool)} speakable in {', '.join(p.name for p in corpora)}")
    pace = "real time" if args.realtime else "--fast"
    beams: list[int | None] = list(args.beam) if args.beam else [None]
    beam_text = ", ".join(f"beam {b}" for b in args.beam) if args.beam else f"the daemon's {default_beam()}"
    count = f"{len(conditions)} condition{'' if len(conditions) == 1 else 's'}"
    print(f"bench: {count}, Whisper {beam_text}, input {pace}; {_load()}", flush=True)

    lines = [case.text for case in chosen]
    picked = {case.text for case in chosen}
    babble_lines = [case.text for case in pool if case.text not in picked] or lines
    vad = VadConfig()
    work = Path(tempfile.mkdtemp(prefix="voiced-bench-spoken-")) if args.keep is None else args.keep
    work.mkdir(parents=True, exist_ok=True)
    speaker = Speaker(REPO / "models")
    results: list[ConditionResult] = []
    started = time.monotonic()
    try:
        with private_home(work, registry, args.devices) as home:
            for condition in conditions:
                folder = work / condition.name
                folder.mkdir(exist_ok=True)
                made = time.monotonic()
                track = build_track(speaker, condition, lines, folder / "input.wav", babble_lines)
                synth_s = time.monotonic() - made
                print(
                    f"  {condition.name}: {track.seconds:.0f} s of audio made in {synth_s:.0f} s", flush=True
                )
                for beam in beams:
                    label = condition.name if len(beams) == 1 else f"{condition.name} b{beam}"
                    run_dir = folder if len(beams) == 1 else folder / f"beam{beam}"
                    run_dir.mkdir(exist_ok=True)
                    config = write_config(
                        run_dir / "config.yaml",
                        home.port,
                        args.devices,
                        run_dir / "state.sqlite",
                        beam=beam,
                        models_dir=REPO / "models",
                        settings=args.set,
                    )
                    run = run_condition(home, config, track, run_dir, fast=not args.realtime, vad=vad)
                    scored = [score(case, heard) for case, heard in zip(chosen, run.heard, strict=True)]
                    summary = summarise(scored, run.asr_s)
                    results.append(ConditionResult(condition, beam, scored, summary, run, label))
                    print(
                        f"    {label:<20} exact {summary.exact}/{summary.n}, wrong {summary.wrong}, "
                        f"heard right {summary.heard_right}  (run in {run.wall_s:.0f} s)",
                        flush=True,
                    )
    except BaseException:
        print(f"bench: the run's files are kept in {work}", file=sys.stderr)
        raise
    else:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    finally:
        speaker.close()

    total = summarise([s for r in results for s in r.scored], [a for r in results for a in r.run.asr_s])
    print()
    print(table(results, total))
    print(LEGEND)
    if not args.realtime:
        print("(with --fast, Whisper shares the CPU with the synthesis of earlier replies: --realtime for")
        print("clean ASR times)")
    print(
        f"wrong: {total.silent_wrong} in sentences that must move nothing; {total.repeats_only} only "
        f"repeated an expected command\n{_load()}"
    )
    for result in results:
        for note in result.run.notes:
            print(f"note: {result.label}: {note}")
    print(f"\nworst sentences:\n{worst(results, args.worst)}")
    print(f"\nbench: done in {time.monotonic() - started:.0f} s")
    if args.json:
        options = {
            "beam": args.beam or default_beam(),
            "seed": args.seed,
            "sentences": len(chosen),
            "realtime": args.realtime,
            "corpora": [str(p) for p in corpora],
        }
        args.json.write_text(json.dumps(to_json(results, total, options), indent=1))
        print(f"bench: results written to {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
