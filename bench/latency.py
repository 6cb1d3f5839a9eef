"""Latency benchmark: spoken commands → `voiced run --input` (paced in real time).

Prints, over every turn, the time from the end of speech to the first reply audio
(p50, p95) and the share spent in VAD hangover, ASR, agent and the first TTS chunk,
plus the daemon's peak RSS and CPU. Then the paused-commands set (bench/paused/commands.yaml, its held-out
half by default: commands with 200-600 ms pauses mid-sentence) in the same run: premature ends (a
command cut before its last part) beside its own p50/p95. Run: scripts/bench.sh [--turns N]
[--paused held-out|tuning|all|none]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.options import add_set_option  # noqa: E402
from bench.paused.spoken_set import Said, load, speak, split  # noqa: E402
from bench.paused.spoken_set import score as score_paused  # noqa: E402
from tests.wyoming_servers import wyoming_servers  # noqa: E402
from voiced.audio.pcm import EAR_RATE, write_wav  # noqa: E402
from voiced.config import TtsConfig  # noqa: E402
from voiced.demo import speak_script  # noqa: E402
from voiced.mouth.piper_tts import PiperSynthesizer  # noqa: E402

COMMANDS = [
    "Turn on the kitchen light.",
    "Set the bedroom light to fifty percent.",
    "Play some jazz.",
    "Set the diffuser to lavender.",
    "Turn off the living room light.",
    "Make the kitchen light brighter.",
    "Set the volume to forty percent.",
    "Turn the living room light blue.",
    "Pause the music.",
    "Set the diffuser intensity to seventy percent.",
    "Help me relax.",
    "Turn off all the lights.",
]
# "asr" is the ASR time left after the hangover; with early ASR most of Whisper's run overlaps it.
STAGES = ("hangover", "asr", "agent", "tts_first_chunk")
# Questions the local intents do not know, for the LLM path (the scripted server answers them).
QUESTIONS = [
    "What should I cook tonight?",
    "Tell me a fun fact about octopuses.",
    "How far away is the moon?",
    "What is a good name for a cat?",
]
LLM_REPLY = "Here is a short answer for you. I hope it helps."
FIRST_TOKEN_S = 0.3


def start_broker(workdir: Path, extra: str = "") -> tuple[subprocess.Popen[bytes], int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    conf = workdir / "mosquitto.conf"
    conf.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\n{extra}")
    binary = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
    proc = subprocess.Popen([binary, "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return proc, port
        time.sleep(0.05)
    proc.kill()
    raise SystemExit("bench: mosquitto did not start")


def cpu_and_rss(pid: int) -> tuple[float, float] | None:
    """A live process's CPU so far (user + system, s) and resident size (MB), from /proc; None once
    it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return cpu, int(fields[21]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_moment(events: list[dict[str, object]], seen: list[tuple[float, float, float]]) -> str:
    """When the resident size sampled every 0.1 s was highest: at start-up, or in which turn."""
    if not seen:
        return "not sampled"
    at, _cpu, rss = max(seen, key=lambda sample: sample[2])
    starts = [(float(str(e["at"])), e.get("turn")) for e in events if e["kind"] == "speech_started"]
    turn = next((number for start, number in reversed(starts) if start <= at), None)
    if turn is None:
        return f"sampled {rss:.0f} MB at most, at start-up"
    said = next((e.get("text") for e in events if e["kind"] == "transcript" and e.get("turn") == turn), "")
    return f"sampled {rss:.0f} MB at most, in turn {turn}: {said!r}"


def waited(
    process: subprocess.Popen[bytes], timeout_s: float, seen: list[tuple[float, float, float]] | None = None
) -> resource.struct_rusage:
    """Wait for `process` (killed past `timeout_s`); its own resource use (peak RSS, CPU).
    `seen` gets (wall-clock time, CPU so far, resident MB) every 0.1 s while it runs."""
    deadline = time.monotonic() + timeout_s
    while True:
        if seen is not None and (now := cpu_and_rss(process.pid)) is not None:
            seen.append((time.time(), *now))
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            process.returncode = os.waitstatus_to_exitcode(status)
            break
        if time.monotonic() > deadline:
            process.kill()
            process.wait()
            raise SystemExit("bench: the daemon did not finish in time")
        time.sleep(0.1)
    if process.returncode:
        raise SystemExit(f"bench: the daemon exited with {process.returncode}")
    return usage


def per_turn(events: list[dict[str, object]]) -> list[dict[str, float]]:
    turns: dict[int, dict[str, float]] = {}
    for event in events:
        turn = event.get("turn")
        if not isinstance(turn, int):
            continue
        marks = turns.setdefault(turn, {})
        kind = str(event["kind"])
        if kind == "speech_ended":
            marks["voice_end"] = float(event["voice_end_t"])  # type: ignore[arg-type]
        if kind in ("speech_ended", "transcript", "agent_text", "tts_started") and kind not in marks:
            marks[kind] = float(event["t"])  # type: ignore[arg-type]
        if kind == "transcript":
            marks["asr_compute"] = float(event["asr_s"])  # type: ignore[arg-type]
            marks["asr_early"] = 1.0 if event["early"] else 0.0
    rows = []
    for marks in turns.values():
        if {"voice_end", "speech_ended", "transcript", "agent_text", "tts_started"} <= set(marks):
            rows.append(
                {
                    "total": marks["tts_started"] - marks["voice_end"],
                    "hangover": marks["speech_ended"] - marks["voice_end"],
                    "asr": marks["transcript"] - marks["speech_ended"],
                    "agent": marks["agent_text"] - marks["transcript"],
                    "tts_first_chunk": marks["tts_started"] - marks["agent_text"],
                    "asr_compute": marks["asr_compute"],
                    "asr_early": marks["asr_early"],
                    "closed": marks["speech_ended"],
                }
            )
    return rows


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=24)
    parser.add_argument(
        "--lead-in",
        type=float,
        default=20.0,
        help="seconds of silence before the first command, for the start-up work (the rehearsal) to end",
    )
    parser.add_argument(
        "--llm", action="store_true", help="questions answered by a scripted OpenAI-compatible server"
    )
    add_set_option(parser, "vad.early_asr_ms=60")
    parser.add_argument(
        "--wyoming",
        action="store_true",
        help="Whisper and piper on the real Wyoming servers (wyoming-faster-whisper, -piper) on loopback",
    )
    parser.add_argument(
        "--paused",
        choices=("held-out", "tuning", "all", "none"),
        default="held-out",
        help="which half of the paused-commands set follows the commands (tuning: what was tuned on)",
    )
    args = parser.parse_args()
    source = QUESTIONS if args.llm else COMMANDS
    lines = [source[i % len(source)] for i in range(args.turns)]
    with tempfile.TemporaryDirectory(prefix="voiced-bench-") as tmp, contextlib.ExitStack() as stack:
        work = Path(tmp)
        print(f"bench: synthesizing {len(lines)} spoken commands…", flush=True)
        # Without generator noise every run plays the very same WAV: local and --wyoming hear equal audio.
        voice = PiperSynthesizer(TtsConfig(noise_scale=0.0, noise_w_scale=0.0), REPO / "models")
        audio = np.concatenate([np.zeros(int(args.lead_in * EAR_RATE), np.int16), speak_script(voice, lines)])
        paused: list[Said] = []
        if args.paused != "none":
            seed, pause_ms, commands = load()
            halves = dict(zip(("tuning", "held-out"), split(commands, seed), strict=True))
            chosen = commands if args.paused == "all" else halves[args.paused]
            more, paused = speak(chosen, seed, pause_ms, REPO / "models", gap_s=2.5)
            offset = len(audio) / EAR_RATE
            paused = [
                Said(s.text, s.voice, s.pauses_ms, tuple(t + offset for t in s.starts), s.end + offset)
                for s in paused
            ]
            audio = np.concatenate([audio, more])
            print(f"bench: then {len(paused)} paused commands ({args.paused} half)…", flush=True)
        write_wav(work / "in.wav", audio, EAR_RATE)
        seconds = len(audio) / EAR_RATE
        broker, port = start_broker(work)
        config = work / "config.yaml"
        config.write_text(f"devices_dir: {REPO / 'devices'}\nweb:\n  port: 0\nmqtt:\n  port: {port}\n")
        sections: dict[str, list[str]] = {}
        for section, name, value in args.set:
            sections.setdefault(section, []).append(f"  {name}: {json.dumps(value)}\n")
        if args.wyoming:
            asr_uri, tts_uri = stack.enter_context(wyoming_servers(work))
            for section, uri in (("asr", asr_uri), ("tts", tts_uri)):
                sections.setdefault(section, []).extend(["  backend: wyoming\n", f"  uri: {uri}\n"])
            print(f"bench: Wyoming servers at {asr_uri} (ASR) and {tts_uri} (TTS)", flush=True)
        with config.open("a") as out:
            out.writelines(f"{section}:\n{''.join(lines)}" for section, lines in sections.items())
        llm = None
        if args.llm:
            from tests.openai_server import ScriptedServer, Text

            llm = ScriptedServer()
            llm.start()
            llm.push(*[Text(LLM_REPLY, first_delay_s=FIRST_TOKEN_S, token_delay_s=0.02)] * len(lines))
            with config.open("a") as out:
                # The brain thinks without the model here: its requests would take the mouth's
                # scripted answers (`scripts/bench.sh brain` measures the brain on the LLM).
                out.write(f"llm:\n  base_url: {llm.base_url}\nagent:\n  kind: hybrid\n")
                out.write("brain:\n  use_llm: false\n")
        print(f"bench: playing {seconds:.0f} s of speech into `voiced run --input` in real time…", flush=True)
        # The devices answer as real ones do (a relative change asks the light for its state first).
        seen: list[tuple[float, float, float]] = []
        simulator = subprocess.Popen(
            [sys.executable, "-m", "voiced", "-c", str(config), "simulate"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            run = ["run", "--input", str(work / "in.wav"), "--output", str(work / "out.wav")]
            events_file = str(work / "events.jsonl")
            daemon = subprocess.Popen(
                [sys.executable, "-m", "voiced", "-c", str(config), *run, "--events", events_file],
                stdout=subprocess.DEVNULL,
            )
            usage = waited(daemon, seconds * 3 + 120, seen)
        finally:
            simulator.terminate()
            simulator.wait(timeout=10)
            broker.terminate()
            broker.wait(timeout=10)
            if llm is not None:
                llm.stop()
        # the daemon's own: not the simulator's, nor the broker's
        peak_rss_mb = usage.ru_maxrss / 1024
        cpu_s = usage.ru_utime + usage.ru_stime
        events = [json.loads(line) for line in (work / "events.jsonl").read_text().splitlines()]
    rows = per_turn(events)
    if not rows:
        raise SystemExit("bench: no complete turns recorded")
    # Where in the track each turn closed: the ear is Ready at the track's first frame.
    start = next(float(e["t"]) for e in events if e["kind"] == "ready")
    closes = [float(e["t"]) - start for e in events if e["kind"] == "speech_ended"]
    paused_from = paused[0].starts[0] - 0.5 if paused else float("inf")
    paused_rows = [row for row in rows if row["closed"] - start >= paused_from]
    rows = [row for row in rows if row["closed"] - start < paused_from]
    if args.llm:  # the model's own thinking time is not ours to count
        for row in rows:
            row["total"] -= FIRST_TOKEN_S
            row["agent"] -= FIRST_TOKEN_S
        delay_ms = FIRST_TOKEN_S * 1000
        print(f"(LLM path: the scripted server's {delay_ms:.0f} ms first-token delay is subtracted)")
    totals = [row["total"] for row in rows]
    median_total = statistics.median(totals)
    print(f"\nturns measured: {len(rows)} of {len(lines)}")
    print(
        f"end of speech -> first reply audio: p50 {median_total * 1000:.0f} ms, "
        f"p95 {p95(totals) * 1000:.0f} ms"
    )
    for stage in STAGES:
        values = [row[stage] for row in rows]
        share = statistics.median(values) / median_total * 100
        print(
            f"  {stage:<16} p50 {statistics.median(values) * 1000:6.0f} ms  "
            f"p95 {p95(values) * 1000:6.0f} ms  ({share:4.1f}% of the p50 total)"
        )
    compute = [row["asr_compute"] for row in rows]
    early = sum(int(row["asr_early"]) for row in rows)
    print(
        f"  (Whisper itself ran p50 {statistics.median(compute) * 1000:.0f} ms; it started at the first "
        f"pause in {early} of {len(rows)} turns, so most of it overlapped the hangover)"
    )
    if paused:
        premature, closed_after = score_paused(paused, closes)
        totals = [row["total"] for row in paused_rows] or [float("nan")]
        print(
            f"\npaused commands ({args.paused} half): premature ends {len(premature)} of {len(paused)}; "
            f"end of speech -> first reply audio p50 {statistics.median(totals) * 1000:.0f} ms, "
            f"p95 {p95(totals) * 1000:.0f} ms over {len(paused_rows)} turns"
        )
        if closed_after:
            print(
                f"  end of the last word -> turn closed p50 {statistics.median(closed_after) * 1000:.0f} ms, "
                f"p95 {p95(closed_after) * 1000:.0f} ms"
            )
        for item in premature:
            print(f"  cut: {item.voice:8} {item.text!r} pauses {item.pauses_ms} ms")
    print(f"peak RSS of the daemon: {peak_rss_mb:.0f} MB ({peak_moment(events, seen)})")
    starts = [float(str(e["at"])) for e in events if e["kind"] == "speech_started"]
    bounds = [0.0, *starts, float("inf")]
    peaks = [
        max((rss for at, _c, rss in seen if low <= at < high), default=0.0)
        for low, high in itertools.pairwise(bounds)
    ]
    print("  resident MB, at start-up then in each turn: " + " ".join(f"{peak:.0f}" for peak in peaks))
    turns = len(rows) + len(paused_rows)
    print(f"daemon CPU: {cpu_s:.0f} s in all (the models' load included), {cpu_s / turns:.2f} s per turn")
    first_words = min(float(e["at"]) for e in events if e["kind"] == "speech_started")
    start_up = max((cpu for at, cpu, _rss in seen if at <= first_words), default=0.0)
    print(
        f"  start-up (to the first command, {args.lead_in:.0f} s of silence after start): {start_up:.1f} s; "
        f"then {(cpu_s - start_up) / turns:.2f} s per turn"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
