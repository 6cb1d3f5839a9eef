"""The spoken benchmark's sentences: read from the text corpora, and a seeded pick that can be spoken.

A case can be spoken in one continuous run of the daemon only if it needs nothing the run cannot
give it: no starting states (every sentence meets the simulator's initial states, see
spoken_run.py), no pronoun pointing at an earlier turn nor any case of the "pronoun" family (a
bare "about sixty percent" leans on the turn before as much: alone in the text bench it moves
nothing, after a diffuser request in the spoken run it rightly sets the diffuser), and the daemon's
own room (the run's `audio.room`) or none.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from voiced.devices.registry import DeviceRegistry
from voiced.devices.simulator import parse_command
from voiced.errors import DeviceError

ROOM = "living room"  # the daemon's own room in the spoken run
PRONOUNS = frozenset({"it", "them", "that", "this", "those", "these"})
SEED = 20240611


@dataclass(frozen=True)
class Case:
    text: str
    family: str
    source: str
    corpus: str  # the file it came from, e.g. corpus_ha
    expect: tuple[tuple[str, str], ...]  # (device, payload as canonical JSON), sorted

    @property
    def silent(self) -> bool:
        """Nothing may move: reported speech, questions, refusals."""
        return not self.expect


def canonical(payload: object) -> str:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"))


def load_corpus(path: Path, registry: DeviceRegistry) -> tuple[list[Case], list[str]]:
    """Every case that can be spoken (see the module doc), and one line per case left out as broken."""
    data = yaml.safe_load(path.read_text())
    raw_cases = data.get("cases") if isinstance(data, dict) else None
    if not isinstance(raw_cases, list):
        raise SystemExit(f"bench: {path}: expected a mapping with a 'cases' list")
    cases: list[Case] = []
    broken: list[str] = []
    for index, raw in enumerate(raw_cases):
        where = f"{path.name} case {index + 1}"
        if not isinstance(raw, dict) or not isinstance(raw.get("text"), str):
            broken.append(f"{where}: no text")
            continue
        leans = _has_pronoun(raw["text"]) or raw.get("family") == "pronoun"
        if raw.get("states") or raw.get("room") not in (None, ROOM) or leans:
            continue
        try:
            expect = _expectations(raw.get("expect"), registry)
        except ValueError as exc:
            broken.append(f"{where} ({raw['text']!r}): {exc}")
            continue
        cases.append(
            Case(
                text=raw["text"].strip(),
                family=str(raw.get("family") or "?"),
                source=str(raw.get("source") or path.stem.removeprefix("corpus_")),
                corpus=path.stem,
                expect=expect,
            )
        )
    return cases, broken


def _has_pronoun(text: str) -> bool:
    return any(word in PRONOUNS for word in re.findall(r"[a-z']+", text.lower()))


def _expectations(raw: Any, registry: DeviceRegistry) -> tuple[tuple[str, str], ...]:
    """The expected commands, each checked as the simulator checks a real one."""
    if not isinstance(raw, list):
        raise ValueError("expect must be a list")
    found = []
    for item in raw:
        if not isinstance(item, dict) or not isinstance(item.get("payload"), dict):
            raise ValueError(f"expect item {item!r} needs a device and a payload mapping")
        try:
            device = registry.get(str(item.get("device")))
        except DeviceError as exc:
            raise ValueError(str(exc)) from None
        payload = canonical(item["payload"])
        # A payload the devices would reject is a typo in the corpus (e.g. an unquoted ON,
        # which YAML reads as true): no daemon could ever be scored right on it.
        parse_command(device, payload.encode())
        found.append((device.name, payload))
    return tuple(sorted(found))


def select(cases: list[Case], count: int, silent: int, seed: int = SEED) -> list[Case]:
    """`count` cases, `silent` of them with nothing to move, spread over the families, in a seeded
    order. Families take turns (each family's cases shuffled), so every family is heard before
    any family is heard twice."""
    unique: dict[str, Case] = {}
    for case in cases:
        unique.setdefault(_key(case.text), case)
    rng = random.Random(seed)
    pool = sorted(unique.values(), key=lambda c: (c.corpus, c.family, c.text))
    acting = _round_robin([c for c in pool if not c.silent], count - min(silent, count), rng)
    quiet = _round_robin([c for c in pool if c.silent], count - len(acting), rng)
    chosen = acting + quiet
    rng.shuffle(chosen)
    return chosen


def _round_robin(cases: list[Case], count: int, rng: random.Random) -> list[Case]:
    families: dict[str, list[Case]] = {}
    for case in cases:
        families.setdefault(case.family, []).append(case)
    for members in families.values():
        rng.shuffle(members)
    order = sorted(families)
    rng.shuffle(order)
    chosen: list[Case] = []
    while len(chosen) < count and any(families.values()):
        for family in order:
            if families[family] and len(chosen) < count:
                chosen.append(families[family].pop())
    return chosen


def _key(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9%']+", text.lower()))


def describe(cases: list[Case]) -> str:
    families = Counter(case.family for case in cases)
    corpora = Counter(case.corpus for case in cases)
    silent = sum(case.silent for case in cases)
    return (
        f"{len(cases)} sentences ({silent} that must move nothing) from "
        f"{', '.join(f'{name} {n}' for name, n in sorted(corpora.items()))}; "
        f"{len(families)} families"
    )
