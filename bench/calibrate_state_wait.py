"""Calibration of `devices.state_wait_s`: how long a relative change ("dimmer") on a device that never
reported waits for the state it asks for (`/get`) before acting on a stated assumption.

It asks the simulator's lights for their state through the real gateway on a real Mosquitto, `--asks`
times at each `--delay-ms` (the device's own answer time: 0 for the simulator as it is; a Zigbee mesh
answers in tens to hundreds of milliseconds), and prints the round trips and, for each candidate
budget, the share of asks answered within it and the wait a silent device costs. The budget is the
smallest candidate that holds every answer at the slowest delay measured, with headroom; a longer one
only makes a silent device's reply later. Asserts nothing.

Run: .venv/bin/python bench/calibrate_state_wait.py [--asks 40] [--delay-ms 0,100,250,300]
(2026-11-27, 30 asks: round trips 1-2 ms at 0 ms, 302 ms at 300 ms; 0.5 s holds all with headroom)
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.conftest import Broker  # noqa: E402
from voiced.bus import EventBus  # noqa: E402
from voiced.devices.gateway import DeviceGateway  # noqa: E402
from voiced.devices.registry import DeviceRegistry  # noqa: E402
from voiced.devices.simulator import DeviceSimulator  # noqa: E402

CANDIDATES_S = (0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 2.0)
ASK_TIMEOUT_S = 5.0


async def round_trips(broker: Broker, registry: DeviceRegistry, asks: int, delay_s: float) -> list[float]:
    simulator = DeviceSimulator(registry, broker.mqtt_config("calibrate-sim"), get_delay_s=delay_s)
    simulator.start()
    bus = EventBus()
    bus.bind_loop(asyncio.get_running_loop())
    gateway = DeviceGateway(registry, broker.mqtt_config("calibrate-voiced"), bus)
    gateway.start()
    lights = [d.name for d in registry if d.kind == "light"]
    took: list[float] = []
    try:
        assert await simulator.wait_connected(5) and await gateway.wait_connected(5)
        for n in range(asks):
            name = lights[n % len(lights)]
            started = time.monotonic()
            missing = await gateway.refresh([name], ASK_TIMEOUT_S)
            if not missing:
                took.append(time.monotonic() - started)
    finally:
        gateway.stop()
        simulator.stop()
    return took


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--asks", type=int, default=40)
    parser.add_argument("--delay-ms", default="0,100,250,300", help="the device's own answer times to try")
    args = parser.parse_args()
    registry = DeviceRegistry.load(REPO / "devices")
    delays = [int(d) / 1000 for d in args.delay_ms.split(",")]
    slowest: list[float] = []
    with tempfile.TemporaryDirectory(prefix="calibrate-state-") as tmp:
        broker = Broker(Path(tmp))
        broker.start()
        try:
            print(f"{'device delay':>12}  {'answered':>8}  {'p50 ms':>7}  {'p95 ms':>7}  {'max ms':>7}")
            for delay in delays:
                took = asyncio.run(round_trips(broker, registry, args.asks, delay))
                ms = sorted(t * 1000 for t in took)
                p95 = ms[int(0.95 * (len(ms) - 1))] if ms else float("nan")
                print(
                    f"{delay * 1000:>10.0f}ms  {len(took):>4}/{args.asks:<3}  {statistics.median(ms):>7.0f}"
                    f"  {p95:>7.0f}  {max(ms):>7.0f}"
                )
                slowest = took
        finally:
            broker.stop()
    slowest_ms = delays[-1] * 1000
    print(f"\nbudget: share answered at the slowest delay ({slowest_ms:.0f} ms); a silent one waits it all")
    for budget in CANDIDATES_S:
        within = sum(t <= budget for t in slowest) / max(1, len(slowest))
        print(f"  {budget:>5.2f} s  {within:>6.1%} answered")
    chosen = next((b for b in CANDIDATES_S if slowest and max(slowest) * 1.5 <= b), CANDIDATES_S[-1])
    print(f"chosen: {chosen} s (the smallest holding every answer with 1.5x headroom)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
