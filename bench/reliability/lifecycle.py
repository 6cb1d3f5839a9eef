"""Reliability family `lifecycle`: processes and brokers that die at the worst moment.

- kill -9 mid-session: a process saving the conversation state as fast as it can is killed
  (SIGKILL) at a seeded moment; the state must load, whole, every time (a crash otherwise).
- A broker killed mid-scene: a scene of four steps over two devices starts, the broker is
  killed before any device confirms, and restarted; the scene must end as a vibe_error, and no
  command refused during the outage may reach the broker after it restarts (a stale delivery).
Tracebacks: exceptions escaping a case, and log records carrying one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.conftest import Broker  # noqa: E402
from tests.vibe_home import Home, write_presets  # noqa: E402
from voiced.brain.store import StateStore  # noqa: E402
from voiced.config import Config, VibeConfig  # noqa: E402
from voiced.devices.registry import DeviceRegistry  # noqa: E402

WRITER = """
import sys
from pathlib import Path
from voiced.brain.store import StateStore
store = StateStore(Path(sys.argv[1]))
state = store.open_session(new=False)
print("ready", flush=True)
for n in range(1, 10**9):
    store.save(state.model_copy(update={"processed_turns": n, "compressed_memory": "x" * (n % 5000)}))
"""
SCENE = """
evening:
  steps:
    - {tool: set_light, device: living_room_light, state: "on", brightness_pct: 40}
    - {tool: set_light, device: living_room_light, color_temp: warm}
    - {tool: set_scent, state: "on", scent: sandalwood, intensity: 20}
    - {tool: set_scent, intensity: 25}
"""


class _Tracebacks(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += int(record.exc_info is not None)


def kill_mid_write(folder: Path, delay_s: float) -> bool:
    """True when the state survived a SIGKILL `delay_s` into a storm of saves, whole."""
    path = folder / "state.sqlite"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True)
    assert writer.stdout is not None
    if writer.stdout.readline().strip() != "ready":
        writer.kill()
        writer.wait(timeout=10)
        return False
    time.sleep(delay_s)
    writer.kill()
    writer.wait(timeout=10)
    state = StateStore(path).load()
    return (
        state is not None
        and state.processed_turns > 0
        and state.compressed_memory == "x" * (state.processed_turns % 5000)
    )


async def broker_killed_mid_scene(broker: Broker, registry: DeviceRegistry, folder: Path) -> tuple[bool, int]:
    """(the scene ended as a vibe_error, commands seen on the broker after its restart)."""
    presets = write_presets(folder / "scenes.yaml", SCENE)
    config = Config(
        mqtt=broker.mqtt_config("voiced-lifecycle"),
        vibe=VibeConfig(presets_file=presets, default_preset="evening", confirm_timeout_s=1.0),
    )
    async with Home(broker, registry, config, simulator_options={"delay_s": 0.5}) as home:
        await home.vibe.start("evening", turn=1)
        await home.until(lambda: len(home.watcher.commands()) >= 2, "the first step of each device")
        broker.kill()  # SIGKILL, before any device could confirm
        done = await home.finished("vibe-1")
        restarted = asyncio.get_running_loop().time()
        broker.start()
        await home.until(lambda: home.gateway.connected, "the gateway to reconnect")
        await asyncio.sleep(2.0)  # anything queued during the outage would come out now
        stale = [c for c in home.watcher.commands() if c[0] >= restarted]
        return done.kind == "vibe_error", len(stale)


def run(seed: int, cases: int) -> dict[str, int]:
    rng = random.Random(seed)
    counts = {"tries": 0, "tracebacks": 0, "crashes": 0, "stale_deliveries": 0}
    handler = _Tracebacks()
    logging.getLogger().addHandler(handler)
    registry = DeviceRegistry.load(REPO / "devices")
    try:
        kills = max(3, cases // 100)
        for _ in range(kills):
            with tempfile.TemporaryDirectory() as folder:
                counts["tries"] += 1
                counts["crashes"] += int(not kill_mid_write(Path(folder), rng.uniform(0.2, 1.0)))
        for _ in range(max(1, cases // 500)):
            with tempfile.TemporaryDirectory() as folder:
                broker = Broker(Path(folder))
                broker.start()
                try:
                    counts["tries"] += 1
                    failed, stale = asyncio.run(broker_killed_mid_scene(broker, registry, Path(folder)))
                    counts["crashes"] += int(not failed)
                    counts["stale_deliveries"] += stale
                except Exception:
                    logging.getLogger(__name__).exception("broker killed mid-scene")
                finally:
                    broker.stop()
    finally:
        logging.getLogger().removeHandler(handler)
    counts["tracebacks"] += handler.count
    return counts


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--cases", type=int, default=1000)
    args = parser.parse_args()
    print(json.dumps(run(args.seed, args.cases)))
