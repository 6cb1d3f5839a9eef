"""Every SQLite file of ours recovers the same way (voiced/sqlite_files.py): damaged at start or while
running, it is moved aside with one log line and a fresh one goes on; a plan the user confirmed
survives its checkpoints being lost; finished plans are pruned, so the files stay bounded.

Real SQLite files, real LangGraph; the plans' steps go through the real DeviceSteps and ledger, to a
stand-in for DeviceActions (every device online, every command confirmed) that records what is sent.
"""

from __future__ import annotations

import asyncio
import logging
import random
import sqlite3
import time
from collections.abc import Awaitable, Callable
from contextlib import closing
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.stores_damage import DAMAGES
from voiced.brain.store import StateStore
from voiced.bus import EventBus
from voiced.config import PlansConfig, VibeConfig
from voiced.devices.actions import ActionResult
from voiced.devices.model import DeviceCommand
from voiced.devices.registry import DeviceRegistry
from voiced.plans.engine import PlanEngine
from voiced.plans.model import ExecutionPlan, PlanStep
from voiced.plans.steps import DeviceSteps
from voiced.vibe.plan import VibePlan, VibeStep
from voiced.vibe.runner import PlanRunner

T = TypeVar("T")
TABLES = {"plans.sqlite": "checkpoints", "plans-ledger.sqlite": "plan_index"}


class Devices:
    """What DeviceSteps asks of DeviceActions: all online, all confirmed; `sent` in order."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    def state_of(self, name: str) -> dict[str, Any] | None:
        return None

    async def refresh(self, names: list[str]) -> list[str]:
        return names

    def is_online(self, name: str) -> bool:
        return True

    async def execute_confirmed(self, turn: int, command: DeviceCommand, **_: Any) -> ActionResult:
        self.sent.append((str(_["task_id"]), command.device))
        return ActionResult(True, "confirmed")


class Plans:
    """A plan engine on `folder`, as the daemon builds it; `said`: what it asked to be said."""

    def __init__(self, folder: Path, devices: Devices, clock: Callable[[], float] = time.time, **config: Any):
        self.said: list[str] = []
        bus = EventBus()
        bus.bind_loop(asyncio.get_running_loop())

        async def say(text: str, turn: int, wanted: Callable[[], bool] | None = None) -> bool:
            self.said.append(text)
            return True

        self.engine = PlanEngine(
            PlansConfig(**config),
            folder / "plans.sqlite",
            bus,
            lambda ledger: DeviceSteps(devices, ledger, ack_timeout_s=1, confirm_timeout_s=1),  # type: ignore[arg-type]
            say=say,
            clock=clock,
        )


def plan(*steps: tuple[str, float | None]) -> ExecutionPlan:
    return ExecutionPlan(
        name="p",
        steps=tuple(
            PlanStep(
                index=i, device=d, kind="light", command={"device": d, "state": "ON"}, action=f"on {d}", at=at
            )
            for i, (d, at) in enumerate(steps)
        ),
    )


async def until(check: Callable[[], Awaitable[T]], want: Callable[[T], bool], timeout: float = 10) -> T:
    deadline = time.monotonic() + timeout
    while True:
        got = await check()
        if want(got):
            return got
        assert time.monotonic() < deadline, f"still {got!r}"
        await asyncio.sleep(0.02)


async def completed(engine: PlanEngine, task_id: str) -> dict[str, Any]:
    return await until(lambda: engine.view(task_id), lambda v: v["status"] == "completed")


async def some_plans(folder: Path, devices: Devices, count: int = 3) -> None:
    plans = Plans(folder, devices)
    await plans.engine.start()
    for number in range(1, count + 1):
        await plans.engine.create("r", plan(("a", None), ("b", None)), needs_confirmation=False)
        await completed(plans.engine, f"plan-{number}")
    await plans.engine.aclose()


def errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


def aside(folder: Path, name: str) -> list[Path]:
    return [p for p in folder.glob(f"{name}.damaged-20*") if not p.name.endswith(("-wal", "-shm"))]


@pytest.mark.parametrize("name", TABLES)
@pytest.mark.parametrize("damage", ["magic-flipped", "page-2-random", "truncated-to-half", "table-dropped"])
def test_a_damaged_plans_file_is_moved_aside_at_start_and_plans_go_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, name: str, damage: str
) -> None:
    async def run() -> None:
        devices = Devices()
        await some_plans(tmp_path, devices)
        DAMAGES[damage](tmp_path / name, TABLES[name], random.Random(7))
        caplog.clear()
        plans = Plans(tmp_path, devices)
        await plans.engine.start()
        (moved,) = aside(tmp_path, name)
        (line,) = errors(caplog)
        assert f"{tmp_path / name} is damaged" in line and f"moved it aside to {moved}" in line
        view = await plans.engine.create("r", plan(("c", None)), needs_confirmation=False)
        assert (await completed(plans.engine, view["id"]))["id"] not in ("plan-1", "plan-2", "plan-3")
        await plans.engine.aclose()
        again = Plans(tmp_path, devices)
        await again.engine.start()  # the fresh file is sound: nothing more is moved
        await again.engine.aclose()
        assert len(aside(tmp_path, name)) == 1 and len(errors(caplog)) == 1

    asyncio.run(run())


def _blobs_garbled(path: Path, table: str, rng: random.Random) -> None:
    """Bytes changed inside the checkpoints' values: every page is sound, the values do not decode."""
    with closing(sqlite3.connect(path)) as db, db:
        for rowid, blob in db.execute(f"select rowid, checkpoint from {table}").fetchall():
            garbled = bytearray(blob)
            for _ in range(20):
                garbled[rng.randrange(len(garbled))] ^= 0xA5
            db.execute(f"update {table} set checkpoint = ? where rowid = ?", (bytes(garbled), rowid))


@pytest.mark.parametrize(
    ("name", "damage"),
    [
        ("plans.sqlite", "a-text-file"),
        ("plans.sqlite", "truncated-to-0"),
        ("plans.sqlite", "table-dropped"),
        ("plans.sqlite", "blobs-garbled"),
        ("plans-ledger.sqlite", "last-page-random"),  # moved aside; the index of plans still reads back
    ],
)
def test_a_confirmed_plan_survives_its_checkpoints_and_is_not_asked_again(
    tmp_path: Path, name: str, damage: str
) -> None:
    async def run() -> None:
        now = [1_000_000.0]
        devices = Devices()
        plans = Plans(tmp_path, devices, lambda: now[0], confirm_timeout_s=30)
        await plans.engine.start()
        # a: due at once (done, and long past its grace when the plan resumes); b: due in an hour
        await plans.engine.create("r", plan(("a", now[0]), ("b", now[0] + 3600)), needs_confirmation=True)
        assert await plans.engine.confirm("plan-1", True, "yes please") == "executing"
        await until(lambda: plans.engine.view("plan-1"), lambda v: v["waiting_for"] == "time")
        await plans.engine.create(
            "r", plan(("c", None), ("d", None)), needs_confirmation=True
        )  # no answer yet
        await plans.engine.aclose()
        assert devices.sent == [("plan-1", "a")]
        damaging = {**DAMAGES, "blobs-garbled": _blobs_garbled}[damage]
        damaging(tmp_path / name, TABLES[name], random.Random(7))
        now[0] += 3600 + 10  # b is due, within the grace
        plans = Plans(tmp_path, devices, lambda: now[0], confirm_timeout_s=30)
        assert await plans.engine.start() == ["plan-1", "plan-2"]
        done = await completed(plans.engine, "plan-1")
        assert devices.sent == [("plan-1", "a"), ("plan-1", "b")]  # a is not sent twice
        assert done["user_notes"] == "yes please"
        waiting = await plans.engine.view("plan-2")
        await until(lambda: asyncio.sleep(0, plans.said), bool)
        no_answer = [line for line in plans.said if "didn't hear back" in line]
        if name == "plans.sqlite":  # its checkpoint lost: asked again, its timeout counted afresh
            assert waiting["status"] == "waiting_confirmation" and no_answer == [], plans.said
        else:  # its checkpoint kept: it waited an hour for a yes (30 s): cancelled, and said once
            assert waiting["status"] == "cancelled" and len(no_answer) == 1, plans.said
        await plans.engine.aclose()

    asyncio.run(run())


def _drop(path: Path, table: str) -> None:
    with closing(sqlite3.connect(path)) as db:
        db.execute(f"drop table {table}")


@pytest.mark.parametrize("name", TABLES)
def test_a_plans_file_failing_while_running_recovers_at_the_next_operation(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, name: str
) -> None:
    """A table dropped under the open connection: SQLite sees that at once (bytes overwritten under
    it are served from its page cache until the next start, where the check finds them)."""

    async def run() -> None:
        devices = Devices()
        plans = Plans(tmp_path, devices)
        await plans.engine.start()
        await plans.engine.create("r", plan(("a", None)), needs_confirmation=False)
        await completed(plans.engine, "plan-1")
        caplog.clear()
        _drop(tmp_path / name, TABLES[name])
        view = await plans.engine.create("r", plan(("b", None)), needs_confirmation=False)
        await completed(plans.engine, view["id"])
        assert await plans.engine.active() == []
        (line,) = errors(caplog)
        assert f"{tmp_path / name} is damaged (failed while running" in line and "moved it aside" in line
        assert len(aside(tmp_path, name)) == 1
        await plans.engine.aclose()

    asyncio.run(run())


def test_the_brain_store_failing_while_running_recovers_at_the_next_save(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "state.sqlite"
    store = StateStore(path)
    state = store.open_session(new=False)
    path.write_bytes(b"not a database " * 400)
    caplog.clear()
    store.save(state.model_copy(update={"processed_turns": 3}))
    loaded = store.load()
    assert loaded is not None and loaded.processed_turns == 3
    (line,) = errors(caplog)
    assert "brain: " in line and "failed while running" in line and str(store.moved_aside) in line
    assert store.moved_aside is not None and store.moved_aside.read_bytes().startswith(b"not a database")


def test_the_scenes_checkpoints_failing_while_running_recover_and_the_scene_runs(
    tmp_path: Path, registry: DeviceRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    scene = VibePlan(
        request="r",
        source="preset",
        name="n",
        steps=(VibeStep(tool="set_light", input={"device": "kitchen_light", "state": "on"}),),
    )

    async def run() -> None:
        devices = Devices()
        runner = PlanRunner(
            registry,
            devices,
            EventBus(),
            VibeConfig(),
            ack_timeout_s=1,
            checkpoint=tmp_path / "scenes.sqlite",  # type: ignore[arg-type]
        )
        await runner.open()
        assert [o.ok for o in await runner.run("vibe-1", 1, scene)] == [True]
        _drop(tmp_path / "scenes.sqlite", "checkpoints")
        caplog.clear()
        assert [o.ok for o in await runner.run("vibe-2", 1, scene)] == [True]
        assert devices.sent == [("vibe-1", "kitchen_light"), ("vibe-2", "kitchen_light")]
        (line,) = errors(caplog)
        assert "scenes' checkpoints: " in line and "no such table: checkpoints" in line
        await runner.aclose()

    asyncio.run(run())


def test_finished_plans_are_pruned_and_the_file_stays_bounded(tmp_path: Path) -> None:
    async def run() -> None:
        now = [1_000_000.0]
        devices = Devices()
        plans = Plans(tmp_path, devices, lambda: now[0], keep_finished=5)
        await plans.engine.start()
        sizes = []
        for number in range(1, 41):
            await plans.engine.create(
                "r", plan(("a", None), ("b", None), ("c", None)), needs_confirmation=False
            )
            await completed(plans.engine, f"plan-{number}")
            kept = min(number, 5)  # pruned once it is finished
            await until(lambda: asyncio.sleep(0, plans.engine.ledger.count()), lambda c: c == kept)  # noqa: B023
            sizes.append((tmp_path / "plans.sqlite").stat().st_size)
        assert plans.engine.ledger.plans() == [f"plan-{n}" for n in range(36, 41)]
        with closing(sqlite3.connect(tmp_path / "plans.sqlite")) as db:
            threads = db.execute("select thread_id, count(*) from checkpoints group by thread_id").fetchall()
        assert sorted(threads) == [(f"plan-{n}", 1) for n in range(36, 41)]  # the last checkpoint each
        assert sizes[-1] <= sizes[9], sizes  # no bigger after 40 plans than after 10
        assert (tmp_path / "plans.sqlite-wal").stat().st_size == 0  # given back to the file
        await plans.engine.aclose()
        now[0] += 31 * 86400  # plans.keep_days (30) later: all finished plans go
        plans = Plans(tmp_path, devices, lambda: now[0], keep_finished=5)
        await plans.engine.start()
        assert plans.engine.ledger.plans() == []
        view = await plans.engine.create("r", plan(("a", None)), needs_confirmation=False)
        assert view["id"] == "plan-1"  # none kept: the numbers start again, no thread is reused
        await completed(plans.engine, "plan-1")
        await plans.engine.aclose()

    asyncio.run(run())
