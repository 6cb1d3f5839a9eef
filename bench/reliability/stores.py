"""Reliability family `stores`: every SQLite file of ours damaged, and how the daemon starts on it.

The five files (the brain's, the plans' checkpoints and ledger, the scenes' checkpoints and ledger)
are each damaged 23 ways (tests/stores_damage.py: header, pages, truncations, tables dropped or
replaced, not SQLite at all, sidecars of garbage), with and without an unfinished plan the user had
confirmed (one step sent, one due when the daemon comes back). Then the daemon's objects start
in-process, in the daemon's order (the brain's store, the scenes, the plans), on real SQLite files
and real LangGraph, with a stand-in for DeviceActions that records what is sent. Counted:

- crashes: starts that failed; crash_loops: those that failed again on the second start;
- turn_failures: after a start, a turn's work that failed (a new plan, a scene, the brain's save);
- confirmed_lost: the confirmed plan not completed (or cancelled), split into
  `confirmed_lost_ledger_ok` (its ledger still readable: must be 0) and the rest;
  sent_twice: a step sent again; asked_again: "I didn't hear back" said of it;
- moved_aside: damaged files moved aside; unexplained: a move without exactly one log line for it;
- running_failures: the main table dropped under each running store, then a turn: its failures.

`cases` bounds the damaged starts (a seeded sample when below the 230; the suite's 1,000 runs them
all). Then `plans` plans (400 in the suite: more than `plans.keep_finished`) are made one after
another, 3 steps each, and the plans' files measured: `plans_file_kb_after_<plans>` (checkpoints
and their WAL) and `ledger_kb_after_<plans>`. Everything starts in-process (the real objects, as
the daemon builds them), not as a `voiced` program per case: 230 programs would take too long.

    PYTHONPATH=$PWD python bench/reliability.py --family stores
    PYTHONPATH=$PWD python bench/reliability/stores.py --plans 10000    # the 10,000-plan figure
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.stores_damage import DAMAGES  # noqa: E402
from tests.test_stores import Devices, Plans, plan  # noqa: E402
from tests.vibe_home import write_presets  # noqa: E402
from voiced.brain.store import StateStore  # noqa: E402
from voiced.bus import EventBus  # noqa: E402
from voiced.config import VibeConfig  # noqa: E402
from voiced.devices.registry import DeviceRegistry  # noqa: E402
from voiced.vibe.manager import PresetOnly, VibeTaskManager  # noqa: E402
from voiced.vibe.messages import Success  # noqa: E402
from voiced.vibe.presets import PresetPlanner  # noqa: E402
from voiced.vibe.runner import PlanRunner  # noqa: E402

FILES = {  # the file's name in the state folder, its main table
    "brain": ("state.sqlite", "states"),
    "plans-checkpoints": ("plans.sqlite", "checkpoints"),
    "plans-ledger": ("plans-ledger.sqlite", "plan_index"),
    "scenes-checkpoints": ("scenes.sqlite", "checkpoints"),
    "scenes-ledger": ("scenes-ledger.sqlite", "plan_index"),
}
SCENE = """
focus:
  keywords: [focus]
  steps:
    - {tool: set_light, device: kitchen_light, state: "on", brightness_pct: 100}
"""
T0 = 1_000_000.0
HOUR_S = 3600.0
WAIT_S = 10.0
TURNS = 12  # before the damage: twelve plans and scenes, finished
CONFIRMED = f"plan-{TURNS + 1}"  # then the plan the user confirmed


class _Log(logging.Handler):
    """Records with a traceback, and the lines saying a file was moved aside."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.tracebacks = 0
        self.moves: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.tracebacks += int(record.exc_info is not None)
        if record.name == "voiced.sqlite_files":
            self.moves.append(record.getMessage())


class Daemon:
    """The daemon's stores on `folder`, started in its order; `clock` is the plans' and scenes'."""

    def __init__(self, folder: Path, registry: DeviceRegistry, devices: Devices, now: list[float]) -> None:
        self.folder = folder
        self.registry = registry
        self.devices = devices
        self.now = now
        self.store: StateStore | None = None
        self.plans: Plans | None = None
        self.vibe: VibeTaskManager | None = None

    async def start(self) -> None:
        self.store = StateStore(self.folder / "state.sqlite")
        self.state = self.store.open_session(new=False)
        presets = PresetPlanner(write_presets(self.folder / "scenes.yaml", SCENE), self.registry, "focus")
        runner = PlanRunner(
            self.registry,
            self.devices,  # type: ignore[arg-type]
            EventBus(),
            VibeConfig(),
            ack_timeout_s=1,
            checkpoint=self.folder / "scenes.sqlite",
            clock=lambda: self.now[0],
        )
        self.vibe = VibeTaskManager(
            planner=PresetOnly(presets), presets=presets, runner=runner, bus=EventBus(), config=VibeConfig()
        )
        await self.vibe.open()
        self.plans = Plans(self.folder, self.devices, lambda: self.now[0], confirm_timeout_s=30)
        await self.plans.engine.start()

    async def turn(self) -> None:
        """What a turn may touch: the brain's save, a new plan run to its end, a new scene."""
        assert self.store is not None and self.plans is not None and self.vibe is not None
        self.store.save(self.state.model_copy(update={"processed_turns": self.state.processed_turns + 1}))
        view = await self.plans.engine.create("r", plan(("c", None), ("d", None)), needs_confirmation=False)
        await self.finished(view["id"])
        await self.vibe.start("focus", turn=1)
        deadline = time.monotonic() + WAIT_S
        while not any(isinstance(m, Success) for m in self.vibe.poll_messages()):
            if time.monotonic() > deadline:
                raise TimeoutError("the scene did not complete")
            await asyncio.sleep(0.02)

    async def finished(self, task_id: str) -> dict[str, Any]:
        assert self.plans is not None
        deadline = time.monotonic() + WAIT_S
        while (view := await self.plans.engine.view(task_id))["status"] not in (
            "completed",
            "failed",
            "cancelled",
        ):
            if time.monotonic() > deadline:
                return view
            await asyncio.sleep(0.02)
        return view

    async def aclose(self) -> None:
        if self.vibe is not None:
            await self.vibe.aclose()
        if self.plans is not None:
            await self.plans.engine.aclose()


async def history(folder: Path, registry: DeviceRegistry, *, confirmed: bool) -> None:
    """Files with some content: sessions, finished plans and scenes, maybe a confirmed plan half done."""
    now = [T0]
    daemon = Daemon(folder, registry, Devices(), now)
    await daemon.start()
    assert daemon.store is not None and daemon.plans is not None
    for number in range(30):
        daemon.store.save(
            daemon.state.model_copy(update={"session_id": f"s{number}", "compressed_memory": "x" * 900})
        )
    for _ in range(TURNS):
        await daemon.turn()
    if confirmed:
        engine = daemon.plans.engine
        view = await engine.create("r", plan(("a", None), ("b", T0 + HOUR_S)), needs_confirmation=True)
        await engine.confirm(view["id"], True)
        deadline = time.monotonic() + WAIT_S
        while (await engine.view(view["id"]))["waiting_for"] != "time" and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
    await daemon.aclose()


def ledger_readable(folder: Path) -> bool:
    """Whether the damaged plans' ledger still gives the confirmed plan's row, the yes in it (read
    from the table itself: a lookup by id alone can be answered from the index, past a broken page)."""
    try:
        with closing(sqlite3.connect(f"file:{folder / 'plans-ledger.sqlite'}?mode=ro", uri=True)) as db:
            row = db.execute("select initial from plan_index where task_id = ?", (CONFIRMED,)).fetchone()
        return row is not None and json.loads(row[0]).get("status") == "executing"
    except (sqlite3.DatabaseError, UnicodeDecodeError, ValueError, AttributeError):  # damaged: unreadable
        return False


async def one_case(
    folder: Path,
    registry: DeviceRegistry,
    counts: dict[str, int],
    log: _Log,
    *,
    confirmed: bool,
    ledger_ok: bool,
) -> None:
    now = [T0 + HOUR_S + 10]  # the confirmed plan's second step is due, within the grace
    devices = Devices()
    moves_before = len(log.moves)
    daemon = None
    for attempt in (1, 2):
        daemon = Daemon(folder, registry, devices, now)
        try:
            await daemon.start()
            break
        except Exception:
            logging.getLogger(__name__).exception("%s: start %d failed", folder.name, attempt)
            counts["crashes"] += 1
            counts["crash_loops"] += int(attempt == 2)
            await daemon.aclose()
            daemon = None
    lost = confirmed
    try:
        if daemon is not None and confirmed:
            view = await daemon.finished(CONFIRMED)
            lost = view["status"] != "completed"
            said = daemon.plans.said if daemon.plans is not None else []
            counts["asked_again"] += int(any("didn't hear back" in line for line in said))
            counts["sent_twice"] += int((CONFIRMED, "a") in devices.sent)
        if daemon is not None:
            await daemon.turn()
    except Exception:
        logging.getLogger(__name__).exception("%s: a turn after the start failed", folder.name)
        counts["turn_failures"] += 1
    finally:
        if daemon is not None:
            await daemon.aclose()
    counts["confirmed_lost"] += int(lost)
    counts["confirmed_lost_ledger_ok"] += int(lost and ledger_ok)
    if lost and ledger_ok:
        logging.getLogger(__name__).warning(
            "%s: the confirmed plan was lost, its ledger readable", folder.name
        )
    moved = [p for p in folder.glob("*.damaged-*") if not p.name.endswith(("-wal", "-shm", "-journal"))]
    lines = log.moves[moves_before:]
    counts["moved_aside"] += len(moved)
    counts["unexplained"] += sum(
        1 for p in moved if sum(1 for line in lines if f"moved it aside to {p}" in line) != 1
    ) + int(len(lines) != len(moved))


async def running_case(folder: Path, registry: DeviceRegistry, name: str, counts: dict[str, int]) -> None:
    """The main table dropped under the running store; the next turn must go on."""
    daemon = Daemon(folder, registry, Devices(), [T0 + HOUR_S])
    await daemon.start()
    try:
        file, table = FILES[name]
        with closing(sqlite3.connect(folder / file)) as db:
            db.execute(f"drop table {table}")
        await daemon.turn()
    except Exception:
        logging.getLogger(__name__).exception("%s: the turn after the damage failed", name)
        counts["running_failures"] += 1
    finally:
        await daemon.aclose()


async def plans_file_size(folder: Path, plans: int) -> tuple[int, int]:
    """(checkpoints + WAL, ledger + WAL) in KB after `plans` plans of 3 steps, one after another."""
    now = [T0]
    made = Plans(folder, Devices(), lambda: now[0])
    engine = made.engine
    await engine.start()
    for _ in range(plans):
        now[0] += 60
        view = await engine.create("r", plan(("a", None), ("b", None), ("c", None)), needs_confirmation=False)
        while (await engine.view(view["id"]))["status"] != "completed":
            await asyncio.sleep(0.005)
    await engine.aclose()

    def kb(name: str) -> int:
        return (
            sum((folder / (name + s)).stat().st_size for s in ("", "-wal") if (folder / (name + s)).exists())
            // 1024
        )

    return kb("plans.sqlite"), kb("plans-ledger.sqlite")


def run(seed: int, cases: int, plans: int = 400) -> dict[str, int]:
    rng = random.Random(seed)
    keys = ("tries", "tracebacks", "crashes", "crash_loops", "turn_failures", "confirmed_lost")
    keys += ("confirmed_lost_ledger_ok", "asked_again", "sent_twice", "moved_aside", "unexplained")
    counts = dict.fromkeys((*keys, "running_failures"), 0)
    log = _Log()
    logging.getLogger().addHandler(log)
    registry = DeviceRegistry.load(REPO / "devices")
    try:
        with tempfile.TemporaryDirectory() as top:
            templates = {}
            for confirmed in (False, True):
                templates[confirmed] = Path(top) / f"history-{confirmed}"
                templates[confirmed].mkdir()
                asyncio.run(history(templates[confirmed], registry, confirmed=confirmed))
            every = [(n, d, c) for n in FILES for d in DAMAGES for c in (False, True)]
            chosen = every if cases >= len(every) else rng.sample(every, cases)
            for name, damage_name, confirmed in chosen:
                file, table = FILES[name]
                damage = DAMAGES[damage_name]
                folder = Path(top) / f"{name}-{damage_name}-{confirmed}"
                shutil.copytree(templates[confirmed], folder)
                damage(folder / file, table, random.Random(rng.random()))
                counts["tries"] += 1
                ok = confirmed and ledger_readable(folder)
                asyncio.run(one_case(folder, registry, counts, log, confirmed=confirmed, ledger_ok=ok))
                shutil.rmtree(folder)
            for name in FILES:
                folder = Path(top) / f"running-{name}"
                shutil.copytree(templates[False], folder)
                counts["tries"] += 1
                asyncio.run(running_case(folder, registry, name, counts))
            sized = Path(top) / "sized"
            sized.mkdir()
            plans_kb, ledger_kb = asyncio.run(plans_file_size(sized, plans))
            counts[f"plans_file_kb_after_{plans}"] = plans_kb
            counts[f"ledger_kb_after_{plans}"] = ledger_kb
    finally:
        logging.getLogger().removeHandler(log)
    counts["tracebacks"] += log.tracebacks
    return counts


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--cases", type=int, default=1000, help="damaged starts (all 230 from 230 on)")
    parser.add_argument("--plans", type=int, default=400, help="plans made for the file-size figure")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    print(json.dumps(run(args.seed, args.cases, args.plans)))
