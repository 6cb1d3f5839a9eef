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
Assertions: none. Run: scripts/bench.sh understanding-spoken [--conditions piper*] [--beam 5]
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

from bench.understanding.spoken_corpus import SEED, Case, describe, load_corpus, select  # noqa: E402
from bench.understanding.spoken_run import private_home, run_condition, write_config  # noqa: E402
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
    parser.add_argument("--beam", type=int, default=1, help="Whisper's beam size (asr.beam_size; default 1)")
    parser.add_argument("--realtime", action="store_true", help="pace the audio in real time (not --fast)")
    parser.add_argument("--worst", type=int, default=10, help="how many failing sentences to show (10)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write every sentence's result here")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep the WAVs, events and replies here")
    args = parser.parse_args()

    registry = DeviceRegistry.load(REPO / "devices")
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
    print(
        f"bench: {len(conditions)} conditions, Whisper beam {args.beam}, input {pace}; {_load()}", flush=True
    )

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
        with private_home(work, registry, REPO / "devices") as home:
            for condition in conditions:
                folder = work / condition.name
                folder.mkdir(exist_ok=True)
                made = time.monotonic()
                track = build_track(speaker, condition, lines, folder / "input.wav", babble_lines)
                synth_s = time.monotonic() - made
                config = write_config(
                    folder / "config.yaml",
                    home.port,
                    REPO / "devices",
                    folder / "state.sqlite",
                    beam=args.beam,
                    models_dir=REPO / "models",
                )
                run = run_condition(home, config, track, folder, fast=not args.realtime, vad=vad)
                scored = [score(case, heard) for case, heard in zip(chosen, run.heard, strict=True)]
                summary = summarise(scored, run.asr_s)
                results.append(ConditionResult(condition, scored, summary, run))
                print(
                    f"  {condition.name:<17} exact {summary.exact}/{summary.n}, wrong {summary.wrong}, "
                    f"heard right {summary.heard_right}  ({track.seconds:.0f} s of audio made in "
                    f"{synth_s:.0f} s, run in {run.wall_s:.0f} s)",
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
            print(f"note: {result.condition.name}: {note}")
    print(f"\nworst sentences:\n{worst(results, args.worst)}")
    print(f"\nbench: done in {time.monotonic() - started:.0f} s")
    if args.json:
        options = {
            "beam": args.beam,
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
