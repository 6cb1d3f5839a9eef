"""Scoring the spoken benchmark: what moved against what should have, and what was heard.

Per sentence, one of: exact (the commands on the broker equal `expect` as a multiset), wrong (a
command arrived that was not expected: the worst outcome, a device moved that nobody asked for),
miss (neither: some or all of what was expected never came). Unlike score.py's text benchmark,
a partial result with nothing unexpected is a miss here, not wrong: "wrong" counts wrong effects
only. Hearing: the transcript and the sentence normalised
(case, punctuation, numbers as words, "%" as "percent") are equal, and the word error rate.
A failed sentence that was heard right is the understanding's fault; a misheard one, the ear's.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Any

from bench.understanding.spoken_corpus import Case
from bench.understanding.spoken_run import Heard, RunResult
from bench.understanding.spoken_voices import Condition

_ONES = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_CONTRACTIONS = {
    "what's": "what is",
    "it's": "it is",
    "that's": "that is",
    "there's": "there is",
    "i'm": "i am",
    "don't": "do not",
    "doesn't": "does not",
    "isn't": "is not",
    "can't": "cannot",
    "won't": "will not",
    "ok": "okay",
    "colour": "color",
    "colours": "colors",
    "grey": "gray",
    "favourite": "favorite",
}


def number_words(number: int) -> str:
    if number < 20:
        return _ONES[number]
    if number < 100:
        tens, ones = divmod(number, 10)
        return _TENS[tens] + (f" {_ONES[ones]}" if ones else "")
    if number < 1000:
        hundreds, rest = divmod(number, 100)
        return f"{_ONES[hundreds]} hundred" + (f" {number_words(rest)}" if rest else "")
    if number < 1_000_000:
        thousands, rest = divmod(number, 1000)
        return f"{number_words(thousands)} thousand" + (f" {number_words(rest)}" if rest else "")
    return str(number)


def normalise(text: str) -> list[str]:
    text = text.lower().replace("%", " percent ").replace("\u2019", "'")
    text = re.sub(r"(\d+)\.(\d+)", lambda m: f"{m[1]} point {' '.join(m[2])}", text)
    text = re.sub(r"\d+", lambda m: f" {number_words(int(m[0]))} ", text)
    words = re.findall(r"[a-z]+(?:'[a-z]+)?", text)
    return " ".join(_CONTRACTIONS.get(w, w) for w in words).split()


def word_edits(reference: list[str], hypothesis: list[str]) -> int:
    """Levenshtein distance in words."""
    previous = list(range(len(hypothesis) + 1))
    for i, ref in enumerate(reference, 1):
        current = [i]
        for j, hyp in enumerate(hypothesis, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ref != hyp)))
        previous = current
    return previous[-1]


@dataclass(frozen=True)
class Scored:
    case: Case
    heard: Heard
    exact: bool
    missing: tuple[tuple[str, str], ...]
    extra: tuple[tuple[str, str], ...]
    heard_right: bool
    edits: int
    words: int

    @property
    def published(self) -> list[tuple[str, str]]:
        return [(p.device, p.payload) for p in self.heard.publishes]


def score(case: Case, heard: Heard) -> Scored:
    expected = Counter(case.expect)
    got = Counter((p.device, p.payload) for p in heard.publishes)
    reference, hypothesis = normalise(case.text), normalise(heard.transcript)
    return Scored(
        case=case,
        heard=heard,
        exact=expected == got,
        missing=tuple(sorted((expected - got).elements())),
        extra=tuple(sorted((got - expected).elements())),
        heard_right=reference == hypothesis,
        edits=word_edits(reference, hypothesis),
        words=len(reference),
    )


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


@dataclass(frozen=True)
class Summary:
    n: int
    exact: int
    misses: int  # not exact, nothing unexpected: an expected command never came
    wrong: int  # a command came that nobody asked for
    wrong_commands: int
    silent_wrong: int  # of them, sentences that must move nothing (reported speech, questions)
    repeats_only: int  # of them, sentences whose unexpected commands only repeat expected ones
    heard_right: int
    failed_heard_right: int  # not exact although heard word for word: the understanding's part
    edits: int
    words: int
    asr_s: tuple[float, ...]

    @property
    def wer(self) -> float:
        return self.edits / self.words if self.words else 0.0

    def asr_ms(self) -> tuple[float, float] | None:
        if not self.asr_s:
            return None
        return statistics.median(self.asr_s) * 1000, p95(list(self.asr_s)) * 1000

    def to_dict(self) -> dict[str, Any]:
        asr = self.asr_ms()
        return {
            "n": self.n,
            "exact": self.exact,
            "exact_pct": round(100 * self.exact / self.n, 1) if self.n else None,
            "misses": self.misses,
            "wrong": self.wrong,
            "wrong_commands": self.wrong_commands,
            "silent_wrong": self.silent_wrong,
            "repeats_only": self.repeats_only,
            "heard_right": self.heard_right,
            "heard_right_pct": round(100 * self.heard_right / self.n, 1) if self.n else None,
            "failed_heard_right": self.failed_heard_right,
            "wer_pct": round(100 * self.wer, 1),
            "asr_ms_p50": None if asr is None else round(asr[0]),
            "asr_ms_p95": None if asr is None else round(asr[1]),
        }


def summarise(scored: list[Scored], asr_s: list[float]) -> Summary:
    return Summary(
        n=len(scored),
        exact=sum(s.exact for s in scored),
        misses=sum(not s.exact and not s.extra for s in scored),
        wrong=sum(bool(s.extra) for s in scored),
        wrong_commands=sum(len(s.extra) for s in scored),
        silent_wrong=sum(bool(s.extra) for s in scored if s.case.silent),
        repeats_only=sum(bool(s.extra) and set(s.extra) <= set(s.case.expect) for s in scored),
        heard_right=sum(s.heard_right for s in scored),
        failed_heard_right=sum(s.heard_right and not s.exact for s in scored),
        edits=sum(s.edits for s in scored),
        words=sum(s.words for s in scored),
        asr_s=tuple(asr_s),
    )


@dataclass(frozen=True)
class ConditionResult:
    condition: Condition
    beam: int | None  # None: the daemon's own
    scored: list[Scored]
    summary: Summary
    run: RunResult
    label: str  # the condition's name, with the beam when several are compared


def table(results: list[ConditionResult], total: Summary) -> str:
    header = (
        f"{'condition':<20} {'voice':<22} {'rate':<12} {'noise':<13} {'n':>3} {'exact':>6} "
        f"{'miss':>4} {'wrong':>5} {'heard':>6} {'WER':>6} {'fail|heard':>10} {'ASR p50/p95 ms':>15}"
    )
    lines = [header, "-" * len(header)]
    for result in results:
        c = result.condition
        lines.append(_row(result.label, c.voice.label, c.voice.rate_label, c.noise_label, result.summary))
    lines.append("-" * len(header))
    lines.append(_row("total", "", "", "", total))
    return "\n".join(lines)


def _row(name: str, voice: str, rate: str, noise: str, s: Summary) -> str:
    asr = s.asr_ms()
    asr_text = "-" if asr is None else f"{asr[0]:.0f}/{asr[1]:.0f}"
    exact = f"{100 * s.exact / s.n:.0f}%" if s.n else "-"
    heard = f"{100 * s.heard_right / s.n:.0f}%" if s.n else "-"
    return (
        f"{name:<20} {voice:<22} {rate:<12} {noise:<13} {s.n:>3} {exact:>6} {s.misses:>4} {s.wrong:>5} "
        f"{heard:>6} {100 * s.wer:>5.1f}% {s.failed_heard_right:>10} {asr_text:>15}"
    )


def _commands(items: list[tuple[str, str]] | tuple[tuple[str, str], ...]) -> str:
    return ", ".join(f"{device} {payload}" for device, payload in items) or "nothing"


def worst(results: list[ConditionResult], limit: int) -> str:
    """The sentences that failed in the most conditions, with what each condition heard and did."""
    by_text: dict[str, list[tuple[str, Scored]]] = {}
    for result in results:
        for item in result.scored:
            by_text.setdefault(item.case.text, []).append((result.label, item))
    failing = [(text, rows) for text, rows in by_text.items() if any(not s.exact for _c, s in rows)]
    failing.sort(
        key=lambda tr: (-sum(not s.exact for _c, s in tr[1]), -sum(bool(s.extra) for _c, s in tr[1]))
    )
    if not failing:
        return "every sentence was exact in every condition"
    lines = []
    for text, rows in failing[:limit]:
        case = rows[0][1].case
        fails = sum(not s.exact for _c, s in rows)
        lines.append(f'"{text}" [{case.family}, {case.source}] failed in {fails}/{len(rows)}')
        lines.append(f"    expected: {_commands(case.expect)}")
        for label, item in rows:
            if item.exact:
                continue
            how = "heard right" if item.heard_right else "misheard"
            kind = "WRONG" if item.extra else "miss"
            lines.append(
                f"    {label:<20} {kind:<5} {how:<11} heard {item.heard.transcript or '(nothing)'!r}"
                f" -> {_commands(item.published)}"
            )
    return "\n".join(lines)


def _listed(items: list[tuple[str, str]] | tuple[tuple[str, str], ...]) -> list[dict[str, Any]]:
    return [{"device": device, "payload": _decoded(payload)} for device, payload in items]


def _decoded(payload: str) -> Any:
    try:
        return json.loads(payload)
    except ValueError:
        return payload  # not JSON: as it came


def to_json(results: list[ConditionResult], total: Summary, options: dict[str, Any]) -> dict[str, Any]:
    return {
        "options": options,
        "total": total.to_dict(),
        "conditions": [
            {
                "name": r.condition.name,
                "beam": r.beam,
                "voice": r.condition.voice.label,
                "rate": r.condition.voice.rate_label,
                "noise": r.condition.noise_label,
                "summary": r.summary.to_dict(),
                "wall_s": round(r.run.wall_s, 1),
                "notes": r.run.notes,
                "sentences": [
                    {
                        "text": s.case.text,
                        "family": s.case.family,
                        "source": s.case.source,
                        "corpus": s.case.corpus,
                        "expect": _listed(s.case.expect),
                        "transcript": s.heard.transcript,
                        "heard_right": s.heard_right,
                        "word_edits": s.edits,
                        "published": _listed(s.published),
                        "exact": s.exact,
                        "missing": _listed(s.missing),
                        "wrong": _listed(s.extra),
                        "turns": [t.number for t in s.heard.turns],
                        "asr_s": [t.asr_s for t in s.heard.turns],
                        "reply": s.heard.replies,
                    }
                    for s in r.scored
                ],
            }
            for r in results
        ],
    }
