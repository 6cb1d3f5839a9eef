"""Plans benchmark: the real `voiced run --text -` on a broker and the simulator of its own.

Prints:
- request → first audio of the read-back (the daemon's own transcript → tts_started events), p50/p95;
- the engine's overhead per step (LangGraph + SQLite checkpoints, a step runner that does nothing);
- restart → the resumed plan's next step (kill -9 mid-plan; from the new process's start, and from
  its ready event);
- the daemon's RSS once ready, without LangGraph (the main checkout, `--before PYTHON`) and with it.
- the same request spoken (piper's voice into `voiced run --input`, real time): end of speech → read-back;
Run: scripts/bench.sh plans [--trials 10] [--steps 40] [--spoken-trials 5]
                            [--before /work/main/.venv/bin/python]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.web import rss_mb  # noqa: E402
from tests.conftest import Broker  # noqa: E402
from tests.home import SimulatedHome  # noqa: E402
from tests.plans_home import TypedDaemon, plan_config  # noqa: E402
from voiced.bus import EventBus  # noqa: E402
from voiced.config import PlansConfig, TtsConfig  # noqa: E402
from voiced.demo import write_script_wav  # noqa: E402
from voiced.mouth.piper_tts import PiperSynthesizer  # noqa: E402
from voiced.plans.engine import PlanEngine  # noqa: E402
from voiced.plans.model import ExecutionPlan, PlanStep  # noqa: E402
from voiced.plans.supervisor import StepOutcome  # noqa: E402

# for later, so it is read back (commands for now are done at once, with no read-back)
MOVIE = (
    "Movie night: at 11 pm dim the living room to 20 percent, turn off the kitchen light and play some jazz "
    "quietly"
)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def read_back_latency(daemon: TypedDaemon, trials: int) -> list[float]:
    got = []
    for _ in range(trials):
        after = len(daemon.events())
        daemon.say(MOVIE)
        heard = daemon.wait_for("transcript", lambda e: e["text"] == MOVIE, after=after)
        audio = daemon.wait_for("tts_started", lambda e, turn=heard["turn"]: e["turn"] == turn, after=after)
        got.append(audio["t"] - heard["t"])
        daemon.reply_to("no")
    return got


def spoken_read_back(work: Path, config: Path, trials: int) -> tuple[list[float], int]:
    """The movie night said aloud (then "No."), through `voiced run --input` in real time: the end of
    speech → the read-back's first audio. Returns the latencies and how many turns were read back."""
    lines = [line for _ in range(trials) for line in (MOVIE + ".", "No.")]
    seconds = write_script_wav(PiperSynthesizer(TtsConfig(), REPO / "models"), lines, work / "spoken.wav")
    events_file = work / "spoken.jsonl"
    run = ["run", "--input", str(work / "spoken.wav"), "--output", str(work / "spoken-out.wav")]
    subprocess.run(
        [sys.executable, "-m", "voiced", "-c", str(config), *run, "--events", str(events_file)],
        check=True,
        stdout=subprocess.DEVNULL,
        timeout=seconds * 3 + 120,
    )
    events = [json.loads(line) for line in events_file.read_text().splitlines()]
    ends = {e["turn"]: e["voice_end_t"] for e in events if e["kind"] == "speech_ended"}
    read_back = {e["turn"] for e in events if e["kind"] == "agent_text" and e["text"].startswith("I'll")}
    first_audio = {}
    for e in events:
        if e["kind"] == "tts_started" and e["turn"] in read_back:
            first_audio.setdefault(e["turn"], e["t"])
    latencies = [first_audio[t] - ends[t] for t in sorted(read_back) if t in ends and t in first_audio]
    return latencies, len(read_back)


def restart_to_step(work: Path, config: Path) -> tuple[float, float]:
    first = TypedDaemon(config, work, "before-kill")
    try:
        first.reply_to(
            "Bedtime: in 1 second turn off the kitchen light, then in 2 seconds turn on the bedroom light"
        )
        after = len(first.events())
        first.say("yes")
        first.wait_for("plan_decision", lambda e: e["step"] == 0, after=after)
    finally:
        first.kill9()
    spawned = time.time()
    second = TypedDaemon(config, work, "resumed")
    try:
        ready = second.wait_for("ready")
        step = second.wait_for("plan_step_started", lambda e: e["step"] == 1, timeout=60)
        return step["at"] - spawned, step["at"] - ready["at"]
    finally:
        second.stop()


def idle_rss(python: str, work: Path, mqtt_port: int, plans: bool) -> float:
    config = yaml.safe_load(plan_config(work, mqtt_port).read_text())
    if not plans:
        config.pop("plans", None)
    path = work / f"rss-{plans}.yaml"
    path.write_text(yaml.safe_dump(config))
    command = [
        python,
        "-m",
        "voiced",
        "-c",
        str(path),
        "run",
        "--text",
        "-",
        "--output",
        str(work / "rss.wav"),
    ]
    events = work / f"rss-{plans}.jsonl"
    checkout = Path(python).parent.parent.parent  # <checkout>/.venv/bin/python: its own voiced
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.Popen(
        [*command, "--events", str(events)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        cwd=checkout,
        env=env,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (events.exists() and '"ready"' in events.read_text()):
            time.sleep(0.2)
        time.sleep(3)
        return rss_mb(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def engine_overhead(steps: int) -> tuple[float, float]:
    async def run() -> tuple[float, float]:
        bus = EventBus()
        bus.bind_loop(asyncio.get_running_loop())

        class Nothing:
            def recorded(self, task_id: str, index: int, attempt: int) -> StepOutcome | None:
                return None

            async def __call__(self, task_id: str, step: PlanStep, attempt: int) -> StepOutcome:
                return StepOutcome(True, "ok")

        nothing = Nothing()

        with tempfile.TemporaryDirectory() as tmp:
            engine = PlanEngine(PlansConfig(), Path(tmp) / "p.sqlite", bus, lambda _ledger: nothing)
            await engine.start()
            try:
                timings = []
                for lane in (1, steps):  # one device: a superstep per step; every device: one superstep
                    plan = ExecutionPlan(
                        name="bench",
                        steps=tuple(
                            PlanStep(
                                index=i,
                                device=f"d{i % lane}",
                                kind="light",
                                command={"device": f"d{i % lane}", "state": "ON"},
                                action="x",
                            )
                            for i in range(steps)
                        ),
                    )
                    started = time.perf_counter()
                    view = await engine.create("bench", plan, needs_confirmation=False)
                    while (await engine.view(view["id"]))["status"] != "completed":
                        await asyncio.sleep(0.005)
                    timings.append((time.perf_counter() - started) / steps * 1000)
                return timings[0], timings[1]
            finally:
                await engine.aclose()

    return asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--before", default="/work/main/.venv/bin/python", help="a voiced without LangGraph")
    parser.add_argument("--spoken-trials", type=int, default=5, help="the request said aloud (0 = skip)")
    args = parser.parse_args()
    sequential, parallel = engine_overhead(args.steps)
    print(
        f"engine overhead per step ({args.steps} steps, checkpointed): one device {sequential:.1f} ms, "
        f"all in parallel branches {parallel:.1f} ms",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        broker = Broker(work)
        broker.start()
        try:
            config = plan_config(work, broker.port)
            with SimulatedHome(config, broker.port):
                daemon = TypedDaemon(config, work, "latency")
                try:
                    latency = read_back_latency(daemon, args.trials)
                finally:
                    daemon.stop()
                p50, p95 = statistics.median(latency) * 1000, _pct(latency, 0.95) * 1000
                print(
                    f"request -> first audio of the read-back, {args.trials} trials: "
                    f"p50 {p50:.0f} ms, p95 {p95:.0f} ms",
                    flush=True,
                )
                if args.spoken_trials:
                    spoken, heard = spoken_read_back(work, config, args.spoken_trials)
                    if spoken:
                        print(
                            f"spoken request (end of speech) -> first audio of the read-back, {heard} of "
                            f"{args.spoken_trials} read back: p50 {statistics.median(spoken) * 1000:.0f} ms, "
                            f"max {max(spoken) * 1000:.0f} ms",
                            flush=True,
                        )
                    else:
                        print("spoken request: Whisper's words were never read back as a plan", flush=True)
                spawn, ready = restart_to_step(work, config)
                print(
                    f"restart (kill -9 mid-plan) -> resumed next step: {spawn:.2f} s from the new process's "
                    f"start, {ready * 1000:.0f} ms from its ready event",
                    flush=True,
                )
                if Path(args.before).exists():
                    before = idle_rss(args.before, work, broker.port, plans=False)
                    print(
                        f"daemon RSS when ready, without LangGraph ({args.before}): {before:.1f} MB",
                        flush=True,
                    )
                after = idle_rss(sys.executable, work, broker.port, plans=True)
                print(f"daemon RSS when ready, with LangGraph and plans on: {after:.1f} MB", flush=True)
        finally:
            broker.stop()


if __name__ == "__main__":
    main()
