"""Does the voice's ending tell a pause from the end of a request? A prosody cue for the end-of-turn
rule (issue 27, item 1), tried on the paused-commands set's TUNING half only.

Today a pause after words that read as a whole request closes the turn after
`vad.complete_hangover_ms`; a speaker who goes on ("turn on the kitchen light, … and the bedroom
one") is cut. The idea: close early only when the words are whole AND the voice ended final (pitch
fallen to the bottom of its range, falling, fading, drawn out: bench/paused/prosody.py). This
prints, at each pause and each end of the tuning half (piper's joe at two rates, as
bench/paused/spoken_set.py speaks it) where the script's words are a whole request to the local
intents:

- how well each feature ranks ends above pauses (AUC: 0.5 is chance, 1.0 separates them);
- the curve of a threshold on the combined finality score: pauses judged final (each closes its
  command too early) beside ends judged final (each closes quickly);
- a control, each comma part of the half spoken by joe as "…," / "…." / "…?": whether the pitch
  tracker hears piper's intonation at all, and whether piper's comma sounds unlike its full stop.

The threshold chosen is the lowest with at most 1 command in 100 cut (every command the early
close would cut counts). The words are the script's, not Whisper's (no ASR here: seconds, not
minutes); the audio is the part as spoken, which is what the ear holds at the pause.

Run: .venv/bin/python bench/calibrate_prosody.py [--tails 150,250,400]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.paused.prosody import Ending, ending  # noqa: E402
from bench.paused.spoken_set import _trimmed, load, speak, split  # noqa: E402
from voiced.audio.pcm import EAR_RATE, resample_band_limited  # noqa: E402
from voiced.config import Config, TtsConfig  # noqa: E402
from voiced.devices.registry import DeviceRegistry  # noqa: E402
from voiced.ear.end_of_turn import promises_more, words_of  # noqa: E402
from voiced.language import english  # noqa: E402
from voiced.mouth.intents import LocalIntentAgent  # noqa: E402
from voiced.mouth.piper_tts import PiperSynthesizer  # noqa: E402

TARGET = 0.01  # commands cut too early, at most
FEATURES = ("drop_st", "slope_st_s", "decay_db", "lengthening")
# the direction in which each feature should say "final"
SIGN = {"drop_st": 1.0, "slope_st_s": -1.0, "decay_db": 1.0, "lengthening": 1.0}


@dataclass(frozen=True)
class Point:
    """One place where the words so far read as a whole request."""

    command: str
    voice: str
    text: str  # the words so far
    is_end: bool  # the command's end (else a pause with more to come)
    audio: np.ndarray  # the command from its first sound to here


def points(config: Config) -> list[Point]:
    seed, pause_ms, commands = load()
    tuning, _held_out = split(commands, seed)
    registry = DeviceRegistry.load(config.devices_dir)
    intents = LocalIntentAgent(registry, lambda _name: None, room=config.audio.room)
    goes_on = english().goes_on
    track, said = speak(tuning, seed, pause_ms, config.models_dir)
    found = []
    for item in said:
        parts = [p.strip() for p in item.text.split("|")]
        ends = [start - pause / 1000 for start, pause in zip(item.starts[1:], item.pauses_ms, strict=True)]
        for i, until in enumerate([*ends, item.end]):
            text = " ".join(parts[: i + 1])
            if intents.complete(text) and not promises_more(words_of(text), goes_on):
                audio = track[round(item.starts[0] * EAR_RATE) : round(until * EAR_RATE)]
                found.append(Point(item.text, item.voice, text, i == len(parts) - 1, audio))
    return found


def auc(ends: list[float], pauses: list[float]) -> float:
    """How often an end scores above a pause (ties count half)."""
    if not ends or not pauses:
        return float("nan")
    e, p = np.array(ends)[:, None], np.array(pauses)[None, :]
    return float(np.mean(e > p) + 0.5 * np.mean(e == p))


def value(name: str, said: Ending | None) -> float:
    """The feature `name`, signed so that higher sounds more final."""
    if said is None:
        return -np.inf
    return said.finality() if name == "finality" else SIGN[name] * float(getattr(said, name))


def curve(name: str, found: list[Point], endings: list[Ending | None], commands: int) -> None:
    score = [value(name, e) for e in endings]
    pauses = [(s, p) for s, p in zip(score, found, strict=True) if not p.is_end]
    ends = [s for s, p in zip(score, found, strict=True) if p.is_end]
    finite = sorted({round(s, 2) for s in score if np.isfinite(s)})
    steps = [*sorted({finite[round(i * (len(finite) - 1) / 12)] for i in range(13)}), np.inf]
    print(f"    {name} >=   pauses judged final (commands cut)   ends judged final (closed early)")
    chosen = None
    for t in steps:
        cut = {(p.command, p.voice) for s, p in pauses if s >= t}
        fast = sum(s >= t for s in ends)
        print(
            f"    {t:8.2f}   {sum(s >= t for s, _ in pauses):3d}/{len(pauses)} "
            f"({len(cut):2d}/{commands} = {len(cut) / commands * 100:5.1f}%)"
            f"          {fast:3d}/{len(ends)} ({fast / max(1, len(ends)) * 100:5.1f}%)"
        )
        if chosen is None and len(cut) / commands <= TARGET:
            chosen = (t, fast, len(ends))
    if chosen is not None:
        t, fast, total = chosen
        print(
            f"    lowest {name} with at most {TARGET * 100:.0f} command in 100 cut: {t:.2f}, "
            f"where {fast} of {total} ends ({fast / max(1, total) * 100:.0f}%) would still close early"
        )


def control(found: list[Point], models: Path, tail_ms: int) -> None:
    """Each comma part (the words before a pause) said by joe alone as "…,", "…." and "…?"."""
    tts = PiperSynthesizer(TtsConfig(noise_scale=0.0, noise_w_scale=0.0), models)
    parts = sorted({p.text.split(",")[0] for p in found if not p.is_end and p.text.endswith(",")})
    rows: dict[str, list[Ending]] = {",": [], ".": [], "?": []}
    for part in parts:
        for mark, got in rows.items():
            audio = _trimmed(resample_band_limited(tts.synthesize(part + mark), tts.sample_rate, EAR_RATE))
            said = ending(audio, tail_ms)
            if said is not None:
                got.append(said)
    print(f"  control: {len(parts)} comma parts of the half, each said alone by joe (tail {tail_ms} ms)")
    for mark, got in rows.items():
        drop = np.median([e.drop_st for e in got])
        slope = np.median([e.slope_st_s for e in got])
        rising = sum(e.slope_st_s > 0 for e in got)
        final = np.median([e.finality() for e in got])
        print(
            f'    "…{mark}"  median drop {drop:5.1f} st, slope {slope:6.1f} st/s, '
            f"finality {final:5.2f}; rising at the end {rising} of {len(got)}"
        )
    comma, stop = rows[","], rows["."]
    if len(comma) == len(stop):
        higher = sum(c.finality() < s.finality() for c, s in zip(comma, stop, strict=True))
        print(f'    "…," sounds less final than "…." in {higher} of {len(comma)} parts')


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tails", default="150,250,400", help="the last voiced stretch looked at, ms")
    args = parser.parse_args()
    config = Config.model_validate({"devices_dir": str(REPO / "devices"), "models_dir": str(REPO / "models")})
    found = points(config)
    seed, _pause_ms, all_commands = load()
    commands = 2 * len(split(all_commands, seed)[0])  # every command of the half, in both voices
    pauses = sum(not p.is_end for p in found)
    print(
        f"tuning half: {commands} spoken commands; where the words so far are a whole request: "
        f"{pauses} pauses with more to come, {len(found) - pauses} ends"
    )
    tails = [int(v) for v in args.tails.split(",")]
    for tail in tails:
        endings = [ending(p.audio, tail) for p in found]
        print(f"\nlast {tail} ms of voice: AUC, ends ranked above pauses (0.5 chance, 1.0 separates)")
        aucs = {}
        for name in (*FEATURES, "finality"):
            values = [value(name, e) for e in endings]
            end_values = [v for v, p in zip(values, found, strict=True) if p.is_end]
            pause_values = [v for v, p in zip(values, found, strict=True) if not p.is_end]
            aucs[name] = auc(end_values, pause_values)
            print(f"    {name:12} {aucs[name]:.2f}")
        curve("finality", found, endings, commands)
        best = max(FEATURES, key=lambda n: aucs[n])
        if best != "lengthening" or tail == tails[0]:  # lengthening looks at the whole voice
            curve(best, found, endings, commands)
    print()
    control(found, config.models_dir, tails[len(tails) // 2])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
