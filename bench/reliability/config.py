"""The config family: seeded mutations of config.yaml, devices/*.yaml and the presets file.

Each case mutates one file of a copy of the repo's home and checks it as `voiced check-config`
does (in-process, for speed). It must end in OK or a ConfigError naming the file (and the field
when the mutation aimed at one); anything else is a traceback. A handful of hostile cases also go
through the real `voiced check-config` program: exit 2, the file named, no traceback, < 2 s, < 200 MB.
"""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from bench.reliability._mutations import (
    HOSTILE_STRINGS,
    Mutation,
    billion_laughs,
    raw,
    set_field,
    special,
    structural,
)
from voiced.cli import check_all
from voiced.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
PRESETS = REPO / "voiced" / "vibe" / "presets.yaml"
MAX_SECONDS = 2.0
MAX_RSS_KB = 200 * 1024

# (field, value): values `check-config` once accepted and `run` died on, and their neighbours.
FIELD_CASES: list[tuple[str, Any]] = [
    ("mqtt.host", ""),
    ("mqtt.host", "\u202eevil"),
    ("mqtt.host", "\ud800"),
    ("mqtt.host", "a" * 64 + ".example"),
    ("mqtt.host", "bad host"),
    ("mqtt.host", "two..dots"),
    ("mqtt.client_id", "x" * 70_000),
    ("mqtt.client_id", "\ud800"),
    ("mqtt.username", "é" * 40_000),
    ("mqtt.availability_topic", "a/" * 40_000 + "a"),
    ("brain.state_file", "a\x00b.sqlite"),
    ("brain.state_file", "/dev/null"),
    ("brain.state_file", "/"),
    ("brain.state_file", "/nonexistent/folder/state.sqlite"),
    ("vibe.presets_file", "p\x00.yaml"),
    ("vibe.presets_file", "/dev/zero"),
    ("vibe.presets_file", "nowhere.yaml"),
    ("vibe.presets_file", "."),
    ("devices_dir", "d\x00"),
    ("devices_dir", "/dev/null"),
    ("devices_dir", "a" * 300),
    ("models_dir", "\ud800"),
    ("mqtt.port", True),
    ("mqtt.port", "1883"),
    ("vad.aggressiveness", True),
    ("safety.per_seconds", True),
    ("llm.max_tool_rounds", 2.0),
    ("audio.input_device", True),
    ("asr.model", "no-such-model"),
    ("asr.model", "x" * 300),
    ("tts.voice", "x" * 70_000),
    ("tts.voice", "no-such-voice"),
    ("vibe.default_preset", "no-such-preset"),
    ("mqtt.tls", {"enabled": True, "ca_file": "missing.pem"}),
]


class Home:
    """A copy of the repo's config, devices and presets in a temporary folder; one file mutated at a time."""

    def __init__(self, root: Path) -> None:
        self.root = root
        shutil.copytree(REPO / "devices", root / "devices")
        self.presets = root / "presets.yaml"
        shutil.copy(PRESETS, self.presets)
        self.config = root / "config.yaml"
        config = (REPO / "config.yaml").read_text(encoding="utf-8")
        self.config.write_text(config.replace("presets_file: null", "presets_file: presets.yaml"), "utf-8")
        self.files = [self.config, self.presets, *sorted((root / "devices").glob("*.yaml"))]
        self.originals = {path: path.read_bytes() for path in self.files}
        self.keys = {path: _keys(yaml.safe_load(data)) for path, data in self.originals.items()}
        self.leaves = _leaves(yaml.safe_load(self.originals[self.config]), "")

    def write(self, path: Path, mutation: Mutation) -> None:
        path.unlink()
        if mutation.content is not None:
            path.write_bytes(mutation.content)
        elif mutation.kind == "fifo":
            os.mkfifo(path)
        elif mutation.kind == "directory":
            path.mkdir()
        elif mutation.kind == "symlink-dev-zero":
            path.symlink_to("/dev/zero")
        elif mutation.kind == "symlink-loop":
            path.symlink_to(path.name)
        else:
            path.symlink_to(self.root / "no-such-file.yaml")

    def restore(self, path: Path) -> None:
        if path.is_dir() and not path.is_symlink():
            path.rmdir()
        else:
            path.unlink()
        path.write_bytes(self.originals[path])


def _keys(data: object) -> set[str]:
    """Every mapping key in a file, nested ones too: the fields an error may name."""
    if isinstance(data, dict):
        return {str(key) for key in data} | {k for value in data.values() for k in _keys(value)}
    if isinstance(data, list):
        return {k for item in data for k in _keys(item)}
    return set()


def _leaves(data: object, prefix: str) -> list[str]:
    """The dotted names of a config's fields."""
    if not isinstance(data, dict):
        return [prefix[:-1]]
    return [leaf for key, value in data.items() for leaf in _leaves(value, f"{prefix}{key}.")]


def _names_a_field(message: str, keys: set[str]) -> bool:
    return "line " in message or any(f"{key}{end}" in message for key in keys for end in (":", ".", "["))


def make_case(rng: random.Random, home: Home) -> tuple[Path, Mutation]:
    path = rng.choice(home.files)
    text = home.originals[path].decode("utf-8")
    pick = rng.random()
    if path == home.config and pick < 0.2:
        field, value = rng.choice(FIELD_CASES)
        return path, Mutation(f"field-{field}", set_field(text, field, value), field)
    if path == home.config and pick < 0.4:  # any field, a hostile value
        field = rng.choice(home.leaves)
        value = rng.choice([*HOSTILE_STRINGS, True, -1, 10**40, 1e308, [], {}, None])
        return path, Mutation(f"field-any-{field}", set_field(text, field, value), field)
    if pick < 0.65:
        return path, structural(text, rng)
    if pick < 0.95:
        return path, raw(home.originals[path], rng)
    return path, special(rng)


def judge(home: Home, path: Path, mutation: Mutation) -> str:
    """The outcome of one case.

    refused: the error names the mutated file and a field of it (the one aimed at, or the one its
    change broke, as in a duplicated topic) or a line; cascade: it names another file of the home,
    as when a renamed device leaves a preset naming nothing; unnamed, no_field, traceback; or ok.
    """
    try:
        check_all(home.config, {}, models=True)
    except ConfigError as exc:
        message = str(exc)
        if str(path) not in message:
            return "cascade" if any(str(file) in message for file in home.files) else "unnamed"
        if mutation.field is None or mutation.field in message:
            return "refused"
        return "refused" if _names_a_field(message, home.keys[path]) else "no_field"
    except Exception:
        return "traceback"
    return "ok"


def run(seed: int, cases: int, programs: int = 8) -> dict[str, int]:
    """`cases` mutations checked in-process, then `programs` hostile files through `voiced check-config`."""
    rng = random.Random(seed)
    counts = dict.fromkeys(("ok", "refused", "cascade", "unnamed", "no_field", "traceback"), 0)
    slowest = 0.0
    with tempfile.TemporaryDirectory(prefix="voiced-rel-config-") as tmp:
        home = Home(Path(tmp))
        judge(home, home.config, Mutation("warm-up", None))
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        for index in range(cases):
            path, mutation = make_case(rng, home)
            home.write(path, mutation)
            started = time.perf_counter()
            outcome = judge(home, path, mutation)
            slowest = max(slowest, time.perf_counter() - started)
            home.restore(path)
            counts[outcome] += 1
            if outcome in ("unnamed", "no_field", "traceback"):
                what = f"{path.name} {mutation.kind} {mutation.field}"
                print(f"config case {index}: {outcome}: {what}", flush=True)
        rss_growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before
        program = run_programs(home, programs)
    return {
        "tries": cases + program["tries"],
        "tracebacks": counts["traceback"] + program["tracebacks"],
        "crashes": program["crashes"],
        "rss_growth_kb": rss_growth,
        "refused": counts["refused"] + program["refused"],
        "cascade": counts["cascade"],
        "ok": counts["ok"],
        "unnamed": counts["unnamed"] + program["unnamed"],
        "no_field": counts["no_field"],
        "slowest_case_ms": round(slowest * 1000),
        "program_max_ms": program["max_ms"],
        "program_max_cpu_ms": program["max_cpu_ms"],
        "program_max_rss_kb": program["max_rss_kb"],
        "program_over_limits": program["over_limits"],
    }


def program_cases(home: Home) -> list[tuple[Path, Mutation, str]]:
    """Hostile files for the real program, with the text its error must hold."""
    devices = home.files[2]
    config = home.originals[home.config].decode("utf-8")
    nul_path = set_field(config, "brain.state_file", "a\x00")
    return [
        (home.config, Mutation("billion-laughs", f"a: {billion_laughs(12)}\n".encode()), "config.yaml"),
        (devices, Mutation("fifo", None), devices.name),
        (home.presets, Mutation("deep", b"relax: " + b"[" * 100_000 + b"]" * 100_000), "presets.yaml"),
        (home.config, Mutation("huge-int", set_field(config, "mqtt.port", 10**4000)), "config.yaml"),
        (devices, Mutation("list-key", b"? [kind, name]\n: light\n"), devices.name),
        (home.config, Mutation("empty-host", set_field(config, "mqtt.host", "")), "mqtt.host"),
        (home.config, Mutation("nul-path", nul_path), "brain.state_file"),
        (home.presets, Mutation("oversize", b"#" * 2_000_000), "presets.yaml"),
    ]


# The program is started by a small Python of its own, which reports the program's own resource
# use from wait4. Forked straight from a large process (pytest that has loaded Whisper), a child's
# ru_maxrss keeps the parent's size from before its exec.
_MEASURE = """
import json, os, subprocess, sys
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_pid, status, usage = os.wait4(child.pid, 0)
print(json.dumps({"rc": os.waitstatus_to_exitcode(status), "rss_kb": usage.ru_maxrss,
                  "cpu_s": usage.ru_utime + usage.ru_stime}))
"""


def check_config(home: Home) -> tuple[subprocess.CompletedProcess[str] | None, dict[str, float]]:
    """`voiced check-config` on the home's config: its result, and its own CPU and peak memory."""
    program = [sys.executable, "-m", "voiced", "check-config", str(home.config)]
    try:
        done = subprocess.run(
            [sys.executable, "-c", _MEASURE, *program],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=30,
            cwd=home.root,
        )
    except subprocess.TimeoutExpired:
        return None, {}
    usage = json.loads(done.stdout.strip().splitlines()[-1])
    return subprocess.CompletedProcess(program, int(usage["rc"]), "", done.stderr), usage


def run_programs(home: Home, count: int) -> dict[str, int]:
    counts = dict.fromkeys(("tries", "tracebacks", "crashes", "refused", "unnamed", "over_limits"), 0)
    slowest = slowest_cpu = 0.0
    max_rss = 0
    for path, mutation, expected in program_cases(home)[:count]:
        home.write(path, mutation)
        started = time.perf_counter()
        result, usage = check_config(home)
        seconds = time.perf_counter() - started
        # CPU time as well as wall time: on a shared machine the wall clock measures the neighbours too
        cpu = float(usage.get("cpu_s", seconds))
        max_rss = max(max_rss, int(usage.get("rss_kb", 0)))
        home.restore(path)
        slowest, slowest_cpu = max(slowest, seconds), max(slowest_cpu, cpu)
        counts["tries"] += 1
        if result is None or result.returncode not in (0, 2):
            counts["crashes"] += 1
        elif "Traceback" in result.stderr:
            counts["tracebacks"] += 1
        elif result.returncode == 2 and expected in result.stderr:
            counts["refused"] += 1
        else:
            counts["unnamed"] += 1
        if cpu > MAX_SECONDS:
            counts["over_limits"] += 1
        if result is None or result.returncode != 2 or expected not in result.stderr:
            shown = "timed out" if result is None else f"exit {result.returncode}: {result.stderr[-300:]}"
            print(f"config program {mutation.kind}: {shown}", flush=True)
        elif seconds > MAX_SECONDS:
            shown = f"{seconds:.1f} s wall, {cpu:.1f} s CPU"
            print(f"config program {mutation.kind}: {shown}", flush=True)
    if max_rss > MAX_RSS_KB:
        counts["over_limits"] += 1
    return {
        **counts,
        "max_ms": round(slowest * 1000),
        "max_cpu_ms": round(slowest_cpu * 1000),
        "max_rss_kb": max_rss,
    }
