"""Brain benchmark: a 20-turn spoken session through `voiced run --input`, in real time.

Prints the brain's run time per turn (p50, p95) and how often the barrier made a turn wait, and
for how long, once with the offline brain and once with a scripted OpenAI-compatible server over
real HTTP standing in for the model (it answers each analysis after --llm-delay-ms, as a small
local model would). Run: scripts/bench.sh brain [--turns N] [--llm-delay-ms MS]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.latency import COMMANDS, p95, start_broker  # noqa: E402
from voiced.config import TtsConfig  # noqa: E402
from voiced.demo import write_script_wav  # noqa: E402
from voiced.mouth.piper_tts import PiperSynthesizer  # noqa: E402

ANALYSIS = json.dumps({"risk": None})
EXTRA = ["What is the weather like on Mars?", "I like lavender, but not peppermint.", "Jazz and classical."]


def session(config: Path, wav: Path, work: Path) -> list[dict[str, object]]:
    events = work / "events.jsonl"
    run = ["run", "--input", str(wav), "--output", str(work / "out.wav"), "--events", str(events)]
    subprocess.run([sys.executable, "-m", "voiced", "-c", str(config), *run], check=True, capture_output=True)
    return [json.loads(line) for line in events.read_text().splitlines()]


def report(name: str, events: list[dict[str, object]], turns: int) -> None:
    runs = [float(e["run_s"]) for e in events if e["kind"] == "brain_finished" and not e["failed"]]  # type: ignore[arg-type]
    waits = [e for e in events if e["kind"] == "barrier_wait"]
    waited = [float(e["waited_s"]) for e in waits]  # type: ignore[arg-type]
    answered = {e["turn"] for e in events if e["kind"] == "tts_started"}
    print(f"{name}: {len(answered)} of {turns} turns answered")
    if runs:
        p50, high = statistics.median(runs) * 1000, p95(runs) * 1000
        print(f"  brain run time per turn: p50 {p50:.0f} ms, p95 {high:.0f} ms")
    if waited:
        p50, longest = statistics.median(waited) * 1000, max(waited) * 1000
        timed_out = sum(bool(e["timed_out"]) for e in waits)
        print(f"  the barrier made {len(waits)} of {turns} turns wait: p50 {p50:.0f}, max {longest:.0f} ms")
        print(f"  barrier timeouts: {timed_out}")
    else:
        print(f"  the barrier made 0 of {turns} turns wait")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--gap-s", type=float, default=1.5, help="silence between the user's turns")
    parser.add_argument("--llm-delay-ms", type=int, default=800, help="the scripted model's time per answer")
    args = parser.parse_args()
    source = COMMANDS[:8] + EXTRA
    lines = [source[i % len(source)] for i in range(args.turns)]
    with tempfile.TemporaryDirectory(prefix="voiced-bench-brain-") as tmp:
        work = Path(tmp)
        print(f"bench: synthesizing {len(lines)} spoken turns…", flush=True)
        wav = work / "in.wav"
        write_script_wav(PiperSynthesizer(TtsConfig(), REPO / "models"), lines, wav, gap_s=args.gap_s)
        broker, port = start_broker(work, "set_tcp_nodelay true\n")
        from tests.openai_server import ScriptedServer, Text

        llm = ScriptedServer()
        llm.start()
        try:
            for name in ("offline", "llm"):
                folder = work / name
                folder.mkdir()
                config = folder / "config.yaml"
                text = f"devices_dir: {REPO / 'devices'}\nweb:\n  port: 0\nmqtt:\n  port: {port}\n"
                if name == "llm":
                    delay = args.llm_delay_ms / 1000
                    llm.push(*[Text(ANALYSIS, first_delay_s=delay)] * (3 * args.turns), model="brain")
                    text += f"llm:\n  base_url: {llm.base_url}\nbrain:\n  model: brain\n"
                config.write_text(text)
                print(f"bench: {name} brain, {len(lines)} turns in real time…", flush=True)
                report(
                    f"{name} brain"
                    + (f" (model answers in {args.llm_delay_ms} ms)" if name == "llm" else ""),
                    session(config, wav, folder),
                    len(lines),
                )
        finally:
            llm.stop()
            broker.terminate()
            broker.wait(timeout=10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
