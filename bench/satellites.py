"""Satellites benchmark: one voiced, N real wyoming-satellite processes (kitchen, bedroom, living room).

Each satellite's microphone says "turn on/off the light in here" at random moments (--slots per room),
then every room speaks at the same moment (--together rounds). Prints, for each number of rooms
(--rooms 1,2,3): end of speech -> first reply audio arriving at that satellite's speaker command,
p50/p95 per room; lost turns; replies to the wrong room (a reply no request of that room asked for,
or one whose words, as Whisper hears them, name another room); the daemon's peak RSS and CPU seconds
per turn. First, the same requests through the daemon's own microphone: the baseline.
Run: scripts/bench.sh satellites [--rooms 1,2,3] [--slots 6] [--together 3] [--seed 1] [--mic-chunk 1024]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.latency import p95, start_broker  # noqa: E402
from bench.satellite_runs import (  # noqa: E402
    REQUESTS,
    ROOMS,
    RoomsRun,
    daemon_config,
    events,
    load_average,
    match,
    request_audio,
    run_rooms,
)
from tests.home import SimulatedHome  # noqa: E402
from tests.satellite_mic import CHUNK  # noqa: E402
from tests.satellites import at_ear_rate  # noqa: E402
from voiced.audio.pcm import EAR_RATE, write_wav  # noqa: E402
from voiced.config import AsrConfig, Config, TtsConfig  # noqa: E402
from voiced.ear.whisper import WhisperTranscriber  # noqa: E402
from voiced.mouth.piper_tts import PiperSynthesizer  # noqa: E402

LOCAL_LEAD_S = 45.0
CHECK_MODEL = "base"  # hears the replies for the wrong-room check: not the daemon's model, no prompt


def run_local(
    workdir: Path, mqtt_port: int, audio: dict[str, np.ndarray], turns: int, gap_s: float
) -> tuple[list[float], int, int, list[float]]:
    """The same requests through the daemon's own microphone (a WAV in real time), its room the
    kitchen: end of speech -> first reply audio at its sink, per turn; lost; unasked; and end of
    speech -> the words heard (as a room's `room_heard`)."""
    workdir.mkdir(parents=True)
    # silence first, as long as the satellites' daemon takes to settle: its start-up work done
    track: list[np.ndarray] = [np.zeros(int(LOCAL_LEAD_S * EAR_RATE), np.int16)]
    ends: list[int] = []  # the sample after each request's last
    position = len(track[0])
    for index in range(turns):
        said = audio[REQUESTS[index % len(REQUESTS)]]
        pause = np.zeros(int(gap_s * EAR_RATE), np.int16)
        track += [pause, said]
        position += len(pause) + len(said)
        ends.append(position)
    track.append(np.zeros(int(gap_s * EAR_RATE), np.int16))
    write_wav(workdir / "in.wav", np.concatenate(track), EAR_RATE)
    config = daemon_config(workdir, mqtt_port, [], "kitchen")
    frame_ms = Config().vad.frame_ms  # the bench's config leaves the ear's settings alone
    command = [sys.executable, "-m", "voiced", "-c", str(config), "run", "--input", str(workdir / "in.wav")]
    command += ["--output", str(workdir / "out.wav"), "--events", str(workdir / "events.jsonl")]
    with (workdir / "daemon.log").open("wb") as log:
        subprocess.run(
            command,
            check=True,
            stdout=log,
            stderr=subprocess.STDOUT,
            timeout=len(ends) * gap_s * 4 + LOCAL_LEAD_S + 180,
        )
    seen = events(workdir / "events.jsonl")
    start = next(float(e["t"]) for e in seen if e["kind"] == "ready")
    step = EAR_RATE * frame_ms // 1000
    # The WAV source hands the ear frame k at start + k frames, as a microphone hands over a block
    # once its last sample is recorded: the last speech sample was recorded the samples after it in
    # its frame earlier (as a satellite's is, whose request ends on the end of a chunk). Until
    # 2026-11-28 the end was the frame's own time, which gave the local path up to a frame (30 ms).
    spoken_end = [start + ((end - 1) // step) * frame_ms / 1000 - (-end % step) / EAR_RATE for end in ends]
    replies = sorted(float(e["t"]) for e in seen if e["kind"] == "tts_started")
    heard = sorted(float(e["t"]) for e in seen if e["kind"] == "transcript" and e.get("text"))
    return (*match(spoken_end, replies), match(spoken_end, heard)[0])


def rooms_list(text: str) -> list[int]:
    counts = [int(part) for part in text.split(",") if part]
    if not counts or any(not 1 <= n <= len(ROOMS) for n in counts):
        raise argparse.ArgumentTypeError(f"rooms between 1 and {len(ROOMS)}, e.g. 1,2,3")
    return counts


def ms(values: list[float]) -> str:
    if not values:
        return "no turns"
    p50 = statistics.median(values) * 1000
    return f"p50 {p50:5.0f} ms  p95 {p95(values) * 1000:5.0f} ms  ({len(values)} turns)"


def report(run: RoomsRun, hear: WhisperTranscriber) -> tuple[float, int, int]:
    """Prints one run's figures; returns (its one-room p50 or nan, lost, wrong room)."""
    lost = wrong = unclear = 0
    first_p50 = float("nan")
    everyone: list[float] = []
    print(f"\n{run.rooms} room(s) (load average {run.load} when measured):")
    for name, room in ROOMS[: run.rooms]:
        ends, firsts = run.ends[name], run.firsts[name]
        latencies, missing, extra = match(ends, firsts)
        lost += missing
        wrong += extra
        for reply in run.replies[name]:
            words = hear.transcribe(at_ear_rate(reply)).lower() if len(reply) else ""
            others = [other for _n, other in ROOMS if other != room and other in words]
            wrong += bool(others)
            unclear += not others and room not in words
        cut = run.together_from[name]
        print(f"  {room:<12} random moments {ms(latencies[:cut])}")
        print(f"  {'':<12} all at once     {ms(latencies[cut:])}")
        print(f"  {'':<12} said {len(ends)}, replies {len(firsts)}, lost {missing}, unasked replies {extra}")
        everyone += latencies
        if run.rooms == 1:
            first_p50 = statistics.median(latencies[:cut]) if latencies[:cut] else first_p50
    turns = sum(len(v) for v in run.ends.values())
    print(f"  every room: {ms(everyone)}")
    ear = [x for name in run.ends for x in match(run.ends[name], run.heard[name])[0]]
    voice = [x for name in run.ends for x in match(run.answered[name], run.firsts[name])[0]]
    print(f"    end of speech -> words heard (room_heard)      {ms(ear)}")
    print(f"    reply's text (room_said) -> its first audio     {ms(voice)}")
    print(
        f"  daemon idle, every satellite streaming silence: {run.idle_cpu * 100:.0f}% of a core "
        f"(after {run.settle_s:.0f} s of start-up work once they connected)"
    )
    print(f"  lost turns {lost}; replies to the wrong room {wrong}; replies naming no room {unclear}")
    per_turn = run.cpu_s / turns if turns else float("nan")
    print(
        f"  daemon: peak RSS {run.peak_rss_mb:.0f} MB; "
        f"CPU {run.cpu_s:.1f} s over {turns} turns = {per_turn:.2f} s/turn "
        f"({run.cpu_s / run.wall_s * 100:.0f}% of a core over {run.wall_s:.0f} s, the streams' idle included)"
    )
    return first_p50, lost, wrong


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rooms", type=rooms_list, default=[1, 2, 3], help="how many satellites, per run")
    parser.add_argument("--slots", type=int, default=6, help="requests per room at random moments")
    parser.add_argument("--together", type=int, default=3, help="rounds with every room at the same moment")
    parser.add_argument("--seed", type=int, default=1, help="the random moments")
    parser.add_argument("--local-turns", type=int, default=8, help="the baseline's requests (0: none)")
    parser.add_argument(
        "--mic-chunk", type=int, default=CHUNK, help="the satellites' --mic-command-samples-per-chunk (1024)"
    )
    args = parser.parse_args()
    voice = PiperSynthesizer(TtsConfig(noise_scale=0.0, noise_w_scale=0.0), REPO / "models")
    audio = {text: request_audio(voice, text, args.mic_chunk) for text in REQUESTS}
    with tempfile.TemporaryDirectory(prefix="voiced-bench-satellites-") as tmp:
        work = Path(tmp)
        broker, port = start_broker(work)
        try:
            (work / "home").mkdir()
            with SimulatedHome(daemon_config(work / "home", port, [], "kitchen"), port):
                local, local_load = None, ""
                if args.local_turns:
                    print(f"bench: {args.local_turns} requests into the daemon's own microphone…", flush=True)
                    local = run_local(work / "local", port, audio, args.local_turns, gap_s=5.0)
                    local_load = load_average()
                runs = []
                for rooms in args.rooms:
                    print(
                        f"bench: {rooms} satellite(s), {args.slots} requests each, then {args.together} "
                        f"rounds at once, microphone chunks of {args.mic_chunk} samples…",
                        flush=True,
                    )
                    runs.append(
                        run_rooms(
                            work / f"rooms-{rooms}",
                            port,
                            rooms,
                            audio,
                            args.slots,
                            args.together,
                            args.seed,
                            0 if args.mic_chunk == CHUNK else args.mic_chunk,
                        )
                    )
        finally:
            broker.terminate()
            broker.wait(timeout=10)
    hear = WhisperTranscriber(AsrConfig(model=CHECK_MODEL), REPO / "models")
    local_p50 = float("nan")
    if local is not None:
        latencies, lost, extra, heard = local
        local_p50 = statistics.median(latencies) if latencies else local_p50
        print(f"\nlocal microphone, the kitchen (load average {local_load} when measured):")
        print(f"  {ms(latencies)}; lost {lost}, unasked replies {extra}")
        print(f"    end of speech -> words heard (transcript)     {ms(heard)}")
    results = [(run, report(run, hear)) for run in runs]
    by_rooms = {run.rooms: run for run, _ in results}
    one = [p50 for run, (p50, _l, _w) in results if run.rooms == 1]
    if one and local_p50 == local_p50:
        print(f"\none satellite vs the local microphone: p50 {(one[0] - local_p50) * 1000:+.0f} ms")
    if 1 in by_rooms and len(ROOMS) in by_rooms:
        ratio = by_rooms[len(ROOMS)].peak_rss_mb / by_rooms[1].peak_rss_mb
        print(f"peak RSS, {len(ROOMS)} rooms / 1 room: {ratio:.2f}x")
    print(f"totals: lost turns {sum(r[1] for _, r in results)}, wrong room {sum(r[2] for _, r in results)}")
    print(f"load average at the end: {load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
