"""Web benchmark: the real `voiced run` (typed turns from an open stdin, so it idles), measured from outside.

Prints: the daemon's idle CPU with the web off and on; the device-state events per second the SSE
stream carries to 5 clients (each must receive every event) and the daemon's CPU at each rate;
the daemon's memory while one client never reads; the dashboard's time to first paint in
Debian's headless Chromium. Events are device state reports published on the broker, so each
one crosses the whole path: MQTT -> gateway -> bus -> hub -> 5 SSE streams.
Run: scripts/bench.sh web [--rates 50,100,200,400,800] [--stall-s 120] [--idle-s 20]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.latency import start_broker  # noqa: E402
from tests.browser import headless_chromium  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
CLIENTS = 5
STATE_TOPIC = "zigbee2mqtt/kitchen_light"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Daemon:
    def __init__(self, work: Path, broker_port: int, web_port: int) -> None:
        self.web_port = web_port
        config = work / f"config-{web_port}.yaml"
        config.write_text(
            f"devices_dir: {REPO / 'devices'}\nmqtt:\n  port: {broker_port}\nweb:\n  port: {web_port}\n"
        )
        events = work / f"events-{web_port}.jsonl"
        command = [sys.executable, "-m", "voiced", "-c", str(config), "run", "--text", "-"]
        command += ["--output", str(work / "out.wav"), "--events", str(events)]
        self.proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 120
        while not (events.exists() and '"ready"' in events.read_text()):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise SystemExit("bench: the daemon did not become ready")
            time.sleep(0.2)
        time.sleep(3)  # settle after start-up

    def cpu_percent(self, seconds: float) -> float:
        before, start = cpu_s(self.proc.pid), time.monotonic()
        time.sleep(seconds)
        return 100 * (cpu_s(self.proc.pid) - before) / (time.monotonic() - start)

    def stop(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()  # the typed input ends: the daemon stops by itself
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)


def count_states(
    port: int, counts: list[int], index: int, stop: threading.Event, opened: threading.Event
) -> None:
    url = f"http://127.0.0.1:{port}/api/events"
    with (
        httpx.Client(timeout=httpx.Timeout(5.0, read=None)) as client,
        client.stream("GET", url) as response,
    ):
        opened.set()
        for line in response.iter_lines():
            if line == "event: device_state":
                counts[index] += 1
            if stop.is_set():
                return


def publish(port: int, rate: int, seconds: float, pad: int = 0) -> int:
    """`pad`: extra characters in each state report (a big report fills socket buffers sooner)."""
    client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2)
    client.connect("127.0.0.1", port)
    client.loop_start()
    total = int(rate * seconds)
    start = time.monotonic()
    for n in range(total):
        state = {"state": "ON", "brightness": n % 254, "color_temp": 300}
        client.publish(STATE_TOPIC, json.dumps({**state, "pad": "x" * pad} if pad else state))
        wait = start + (n + 1) / rate - time.monotonic()
        if wait > 0:
            time.sleep(wait)
    time.sleep(1.0)  # the last ones reach the clients
    client.loop_stop()
    client.disconnect()
    return total


def throughput(daemon: Daemon, broker_port: int, rate: int, seconds: float) -> tuple[int, int, float]:
    """(sent, fewest any client received, daemon CPU %) at `rate` events per second."""
    counts = [0] * CLIENTS
    stop = threading.Event()
    opened = [threading.Event() for _ in range(CLIENTS)]
    threads = [
        threading.Thread(target=count_states, args=(daemon.web_port, counts, i, stop, opened[i]), daemon=True)
        for i in range(CLIENTS)
    ]
    for thread in threads:
        thread.start()
    for event in opened:
        event.wait(10)
    time.sleep(0.5)
    before, start = cpu_s(daemon.proc.pid), time.monotonic()
    sent = publish(broker_port, rate, seconds)
    cpu = 100 * (cpu_s(daemon.proc.pid) - before) / (time.monotonic() - start)
    stop.set()
    return sent, min(counts), cpu


def sse_clients(port: int) -> int:
    with httpx.Client(timeout=5) as client:
        return int(client.get(f"http://127.0.0.1:{port}/healthz").json()["sse_clients"])


def never_reading(daemon: Daemon, broker_port: int, seconds: float, rate: int) -> list[tuple[float, float]]:
    """RSS (MB) over time while one SSE client never reads and events flow at `rate`."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting: a small window
    sock.connect(("127.0.0.1", daemon.web_port))
    sock.sendall(b"GET /api/events HTTP/1.1\r\nHost: bench\r\n\r\n")
    samples = [(0.0, rss_mb(daemon.proc.pid))]
    start = time.monotonic()
    # 2 KB reports: 24 MB in 120 s, more than the kernel's socket buffers hold, so the stream
    # really stalls (small events would all sit in the buffers and never reach our limit).
    publisher = threading.Thread(target=publish, args=(broker_port, rate, seconds, 2000), daemon=True)
    publisher.start()
    while publisher.is_alive():
        publisher.join(10)
        samples.append((time.monotonic() - start, rss_mb(daemon.proc.pid)))
    print(f"  SSE clients after {seconds:.0f} s: {sse_clients(daemon.web_port)} (the one that never read)")
    sock.close()
    return samples


def first_paint(port: int, loads: int = 5) -> tuple[float, float]:
    """Median first paint and first contentful paint (ms) over `loads` fresh page loads."""
    paint: list[float] = []
    contentful: list[float] = []
    driver = headless_chromium()
    try:
        for _ in range(loads):
            driver.get("about:blank")
            driver.get(f"http://127.0.0.1:{port}/")
            entries: dict[str, float] = {}
            for _ in range(50):
                got = driver.execute_script(
                    "return performance.getEntriesByType('paint').map(e => [e.name, e.startTime])"
                )
                entries = {name: float(at) for name, at in got}
                if "first-contentful-paint" in entries:
                    break
                time.sleep(0.1)
            paint.append(entries.get("first-paint", float("nan")))
            contentful.append(entries.get("first-contentful-paint", float("nan")))
    finally:
        driver.quit()
    return statistics.median(paint), statistics.median(contentful)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rates", default="50,100,200,400,800", help="events per second to try")
    parser.add_argument("--seconds", type=float, default=10.0, help="each rate runs this long")
    parser.add_argument("--stall-s", type=float, default=120.0, help="how long one client never reads")
    parser.add_argument("--idle-s", type=float, default=20.0, help="idle CPU is measured over this long")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        broker, broker_port = start_broker(work)
        try:
            off = Daemon(work, broker_port, 0)
            idle_off = off.cpu_percent(args.idle_s)
            off.stop()
            on = Daemon(work, broker_port, free_port())
            try:
                idle_on = on.cpu_percent(args.idle_s)
                print(
                    f"idle CPU of the daemon: web off {idle_off:.2f} %, web on {idle_on:.2f} %"
                    f" (over {args.idle_s:.0f} s)"
                )
                print(f"SSE to {CLIENTS} clients (every client must get every event):")
                best = 0
                for rate in (int(r) for r in args.rates.split(",")):
                    sent, fewest, cpu = throughput(on, broker_port, rate, args.seconds)
                    ok = fewest >= sent and cpu < 10
                    best = rate if ok else best
                    print(f"  {rate:5d} ev/s: sent {sent}, fewest received {fewest}, daemon CPU {cpu:5.1f} %")
                print(f"sustained with all events delivered and CPU under 10 %: {best} ev/s")
                samples = never_reading(on, broker_port, args.stall_s, 100)
                shown = ", ".join(f"{t:.0f}s {mb:.1f}" for t, mb in samples)
                print(
                    f"RSS (MB) with one client that never reads, 100 ev/s of 2 KB"
                    f" for {args.stall_s:.0f} s: {shown}"
                )
                fp, fcp = first_paint(on.web_port)
                print(
                    f"dashboard in headless Chromium: first paint {fp:.0f} ms,"
                    f" first contentful paint {fcp:.0f} ms (median of 5)"
                )
            finally:
                on.stop()
        finally:
            broker.terminate()
            broker.wait(timeout=10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
