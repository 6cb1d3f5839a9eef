"""Plans: the supervisor's rules, time words, the rule planner, and the engine's state machine.

The engine runs on LangGraph with its SQLite checkpointer in a temporary directory; its step runner
is injected (a plain function of the test: which device confirms), as DeviceSteps is in the daemon.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import openai
import pytest

from tests.conftest import REPO
from tests.openai_server import Call, ScriptedServer, Tools
from voiced.bus import EventBus
from voiced.config import PlansConfig, load_config
from voiced.devices.registry import DeviceRegistry
from voiced.errors import ConfigError
from voiced.events import PlanWaitingConfirmation
from voiced.mouth.intents import LocalIntentAgent
from voiced.plans.engine import NotWaiting, PlanEngine
from voiced.plans.graph import next_batch
from voiced.plans.llm_planner import LlmPlanFailed, LlmPlanner
from voiced.plans.model import ExecutionPlan, PlanStep, TaskState
from voiced.plans.rules import PlanRefused, RulePlanner, without
from voiced.plans.supervisor import StepOutcome, decide, overall
from voiced.plans.timewords import has_time_words, next_time, parts
from voiced.plans.voice import is_no, is_yes
from voiced.plans.words import read_back

T = TypeVar("T")
NOW = datetime(2026, 11, 23, 22, 0)


def test_the_supervisor_continues_retries_once_skips_and_ends() -> None:
    assert decide(StepOutcome(True, "ok"), 1).decision == "continue"
    assert decide(StepOutcome(False, "no report"), 1).decision == "retry"
    second = decide(StepOutcome(False, "no report"), 2)
    assert second.decision == "skip" and "after 2 tries" in second.reason
    assert decide(StepOutcome(False, "offline", offline=True), 1).decision == "skip"
    assert decide(StepOutcome(False, "late", missed=True), 1).decision == "skip"
    assert decide(StepOutcome(True, "ok"), 1, cancelled=True).decision == "end"
    assert overall(["completed", "completed"])[0] == "completed"
    assert overall(["completed", "failed"]) == ("failed", "1 of its 2 steps was not done")
    assert overall(["completed", "failed", "failed"]) == ("failed", "2 of its 3 steps were not done")
    assert overall(["failed"]) == ("failed", "its only step was not done")
    assert overall(["failed"], ended="no point", not_run=1) == (
        "failed",
        "the supervisor ended the plan (no point); none of its 2 steps were done",
    )


def test_time_words_are_read_against_the_clock() -> None:
    assert next_time(7, 0, None, NOW) == datetime(2026, 11, 24, 7, 0)  # at 22:00, "at 7" is tomorrow morning
    assert next_time(7, 0, None, datetime(2026, 11, 23, 10, 0)) == datetime(2026, 11, 23, 19, 0)
    assert next_time(7, 30, "p.m.", NOW) == datetime(2026, 11, 24, 19, 30)
    got = parts(
        "turn off the kitchen light, then in ten minutes turn on the bedroom light over 5 minutes", NOW
    )
    assert [(p.text, p.then, p.delay_s, p.over_s) for p in got] == [
        ("turn off the kitchen light", False, None, None),
        ("turn on the bedroom light", True, 600.0, 300.0),
    ]
    at = parts("wake me up at 6:45 am", NOW)[0]
    assert at.at == datetime(2026, 11, 24, 6, 45) and at.text == "wake me up"
    assert not has_time_words("put the bedroom light on at 10 percent")  # a level, not 10 o'clock
    assert not has_time_words("kitchen light at 40%") and has_time_words("turn it off at 10")


def _steps(*spec: tuple[str, float | None]) -> tuple[PlanStep, ...]:
    return tuple(
        PlanStep(
            index=i,
            device=d,
            kind="light",
            command={"device": d, "state": "ON"},
            action=f"turn on the {d}",
            at=at,
        )
        for i, (d, at) in enumerate(spec)
    )


def test_the_next_batch_is_the_lane_heads_due_first() -> None:
    now = 1000.0
    plan = ExecutionPlan(name="p", steps=_steps(("a", None), ("a", None), ("b", None), ("c", now + 60)))
    state: TaskState = {"execution_plan": plan.model_dump(mode="json"), "pending": [0, 1, 2, 3]}
    assert next_batch(state, now) == ([0, 2], None)  # one per device, the timed one later
    state["pending"] = [3]
    assert next_batch(state, now) == ([3], now + 60)


@pytest.fixture(scope="module")
def planner() -> RulePlanner:
    registry = DeviceRegistry.load(REPO / "devices")
    intents = LocalIntentAgent(registry, lambda _name: None)
    return RulePlanner(registry, intents, confirm_over_steps=2, now=lambda: NOW)


def test_the_rule_planner_builds_steps_from_our_own_understanding(planner: RulePlanner) -> None:
    movie = planner.plan(
        "Movie night: dim the living room to 20 percent, turn off the kitchen light and "
        "play some jazz quietly."
    )
    # over the task API, three steps wait for an OK; said aloud they run at once (nothing risky)
    assert movie.name == "movie night" and planner.needs_confirmation(movie) and not planner.risky(movie)
    assert [(s.device, s.command, s.at) for s in movie.steps] == [
        ("living_room_light", {"device": "living_room_light", "state": "ON", "brightness": 51}, None),
        ("kitchen_light", {"device": "kitchen_light", "state": "OFF"}, None),
        ("music", {"device": "music", "action": "play", "genre": "jazz", "volume": 25}, None),
    ]
    assert read_back(without(movie, "the music"), NOW.timestamp()) == (
        "I'll set the living room light to 20 % and turn off the kitchen light. Shall I go ahead?"
    )
    wake = planner.plan(
        "Wake me up at 7 with the bedroom light fading in over 15 minutes, then play some music."
    )
    seven = datetime(2026, 11, 24, 7, 0).timestamp()
    assert [(s.device, s.at) for s in wake.steps] == [
        *[("bedroom_light", seven + 225 * i) for i in range(5)],
        ("music", seven + 900),
    ]
    assert [s.command.get("brightness") for s in wake.steps[:5]] == [51, 102, 152, 203, 254]
    assert read_back(wake, NOW.timestamp()) == (
        "I'll fade the bedroom light in over 15 minutes starting at 7:00 AM, then play music at 7:15 AM. "
        "Shall I go ahead?"
    )
    later = planner.plan("In ten minutes turn off the bedroom light.")
    # "in ten minutes" counts from the plan's start (its "yes"), a time of day is one
    assert (later.steps[0].at, later.steps[0].delay_s) == (None, 600) and planner.needs_confirmation(later)
    two = planner.plan("turn on the kitchen light and set the bedroom light to 50 percent")
    assert len(two.steps) == 2 and not planner.needs_confirmation(two)
    with pytest.raises(PlanRefused, match="I only plan by time"):
        planner.plan("Turn everything off when I leave.")
    with pytest.raises(PlanRefused, match="Nothing is planned"):
        planner.plan("in five minutes turn on the bedroom flibber")
    with pytest.raises(PlanRefused, match="someone else said"):
        planner.plan("my brother said turn off all the lights in ten minutes")


class Home:
    """The injected step runner: every device confirms except those in `silent`; `said` is what the
    engine asked to be said at the next pause."""

    def __init__(self, silent: tuple[str, ...] = ()) -> None:
        self.silent = silent
        self.sent: list[tuple[str, int, int]] = []
        self.said: list[str] = []

    async def say(self, text: str, turn: int, wanted: Callable[[], bool] | None = None) -> bool:
        self.said.append(text)
        return True

    def recorded(self, task_id: str, index: int, attempt: int) -> StepOutcome | None:
        return None  # no ledger here: nothing survives a restart but the checkpoints

    async def __call__(self, task_id: str, step: PlanStep, attempt: int) -> StepOutcome:
        self.sent.append((task_id, step.index, attempt))
        return StepOutcome(
            step.device not in self.silent, "confirmed" if step.device not in self.silent else "no"
        )


def _engine(tmp_path: Path, home: Home, clock: Callable[[], float] = time.time, **plans: Any) -> PlanEngine:
    bus = EventBus()
    bus.bind_loop(asyncio.get_running_loop())
    path = tmp_path / "plans.sqlite"
    return PlanEngine(PlansConfig(**plans), path, bus, lambda _ledger: home, say=home.say, clock=clock)


async def _until(check: Callable[[], Awaitable[T]], want: Callable[[T], bool], timeout: float = 10) -> T:
    deadline = time.monotonic() + timeout
    while True:
        got = await check()
        if want(got) or time.monotonic() > deadline:
            return got
        await asyncio.sleep(0.02)


def test_plan_waiting_confirmation_is_heard_only_once_the_task_says_so(tmp_path: Path) -> None:
    """The web page reads the task when it hears the event: it was published inside the graph's
    node, before the state was stored, and the page read (and kept) "planning"."""

    async def run() -> None:
        home = Home()
        bus = EventBus()
        bus.bind_loop(asyncio.get_running_loop())
        heard = bus.subscribe("test")
        engine = PlanEngine(PlansConfig(), tmp_path / "plans.sqlite", bus, lambda _ledger: home, say=home.say)
        await engine.start()
        try:
            plan = ExecutionPlan(name="p", steps=_steps(("a", None), ("b", None)))
            creating = asyncio.create_task(engine.create("p", plan, needs_confirmation=True))
            seen: list[tuple[str, str]] = []
            while not seen:
                event = await asyncio.wait_for(heard.get(), 10)
                if isinstance(event, PlanWaitingConfirmation):
                    seen.append((event.task_id, (await engine.view(event.task_id))["status"]))
            assert seen == [("plan-1", "waiting_confirmation")]
            await asyncio.wait_for(creating, 10)
        finally:
            await engine.aclose()

    asyncio.run(run())


def test_the_state_machine_waits_changes_runs_and_refuses(tmp_path: Path) -> None:
    async def run() -> None:
        home = Home(silent=("c",))
        engine = _engine(tmp_path, home)
        await engine.start()
        try:
            plan = ExecutionPlan(name="p", steps=_steps(("a", None), ("b", None), ("c", None)))
            view = await engine.create("p", plan, needs_confirmation=True)
            assert (view["status"], view["waiting_for"]) == ("waiting_confirmation", "user_confirmation")
            assert home.sent == []
            assert await engine.confirm("plan-1", False, plan=without(plan, "b")) == "waiting_confirmation"
            assert len((await engine.view("plan-1"))["execution_plan"]["steps"]) == 2
            assert await engine.confirm("plan-1", True) == "executing"
            done = await _until(
                lambda: engine.view("plan-1"), lambda v: v["status"] in ("completed", "failed")
            )
            assert done["status"] == "failed" and done["current_step"] == 2
            await _until(lambda: asyncio.sleep(0, home.said), bool)
            assert home.said == [
                "The p is only partly done: turn on the c: not confirmed after 2 tries, skipped: no."
            ]
            assert [(e["device"], e["attempt"], e["decision"]) for e in done["execution_history"]] == [
                ("a", 1, "continue"),
                ("c", 1, "retry"),
                ("c", 2, "skip"),
            ]
            with pytest.raises(NotWaiting, match=r"^plan-1 has already ended: it is not waiting for a"):
                await engine.confirm("plan-1", True)
            await engine.create("q", plan, needs_confirmation=True)
            assert await engine.confirm("plan-2", False, "not now") == "cancelled"
            assert [s for s in home.sent if s[0] == "plan-2"] == []
            with pytest.raises(NotWaiting, match=r"^plan-2 was already cancelled$"):  # cancelled twice
                await engine.cancel("plan-2", "again")
        finally:
            await engine.aclose()

    asyncio.run(run())


def test_no_answer_in_time_cancels_and_a_restart_keeps_a_plan_waiting(tmp_path: Path) -> None:
    async def run() -> None:
        home = Home()
        engine = _engine(tmp_path, home, confirm_timeout_s=0.3)
        await engine.start()
        plan = ExecutionPlan(name="p", steps=_steps(("a", None)))
        await engine.create("p", plan, needs_confirmation=True)
        view = await _until(lambda: engine.view("plan-1"), lambda v: v["status"] == "cancelled")
        assert view["status"] == "cancelled" and view["result"] == "no answer in time"
        await _until(lambda: asyncio.sleep(0, home.said), bool)
        assert home.said == ["I didn't hear back about the p, so I cancelled it."]
        await engine.aclose()
        engine = _engine(tmp_path, home, confirm_timeout_s=30)
        await engine.start()
        await engine.create("q", plan, needs_confirmation=True)
        await engine.aclose()  # as a restart does
        engine = _engine(tmp_path, home, confirm_timeout_s=30)
        assert await engine.start() == ["plan-2"]
        try:
            assert (await engine.view("plan-2"))["status"] == "waiting_confirmation"
            assert await engine.confirm("plan-2", True) == "executing"
            await _until(lambda: engine.view("plan-2"), lambda v: v["status"] == "completed")
            assert home.sent == [("plan-2", 0, 1)]
        finally:
            await engine.aclose()

    asyncio.run(run())


def test_a_timed_step_due_while_down_runs_within_the_grace_else_is_missed(tmp_path: Path) -> None:
    async def run() -> None:
        now = [1_000_000.0]
        home = Home()
        engine = _engine(tmp_path, home, lambda: now[0], grace_s=60)
        await engine.start()
        plan = ExecutionPlan(name="p", steps=_steps(("a", now[0] + 3600), ("b", now[0] + 7200)))
        await engine.create("p", plan, needs_confirmation=True)
        await engine.confirm("plan-1", True)
        await _until(lambda: engine.view("plan-1"), lambda v: v["waiting_for"] == "time")
        await engine.aclose()  # down, with both steps still to come
        now[0] += 3600 + 30  # the first is 30 s late, within the grace; the second is not yet due
        engine = _engine(tmp_path, home, lambda: now[0], grace_s=60)
        await engine.start()
        await _until(lambda: asyncio.sleep(0, home.sent), lambda sent: len(sent) == 1)
        await _until(lambda: engine.view("plan-1"), lambda v: v["waiting_for"] == "time")
        await engine.aclose()
        now[0] += 3570 + 300  # the second fell due 300 s before the restart: missed
        engine = _engine(tmp_path, home, lambda: now[0], grace_s=60)
        await engine.start()
        try:
            done = await _until(lambda: engine.view("plan-1"), lambda v: v["status"] == "failed")
            assert home.sent == [("plan-1", 0, 1)]
            last = done["execution_history"][-1]
            assert (last["device"], last["status"], last["decision"]) == ("b", "missed", "skip")
            assert "300 s late (grace 60 s)" in last["result"]
        finally:
            await engine.aclose()

    asyncio.run(run())


def test_an_llm_plan_is_checked_and_an_invalid_one_goes_back_once(llm: ScriptedServer) -> None:
    registry = DeviceRegistry.load(REPO / "devices")
    music = {
        "tool": "play_music",
        "input": {"device": "music", "action": "play", "genre": "jazz", "volume": 25},
    }
    garage = {"tool": "set_light", "input": {"device": "garage_light", "state": "on"}, "reason": "light"}
    dim = {
        "tool": "set_light",
        "input": {"device": "living_room_light", "brightness_pct": 20},
        "reason": "dim",
    }
    llm.push(
        Tools(
            (
                Call(
                    "make_plan",
                    json.dumps({"name": "Movie night", "steps": [garage, {**music, "delay_s": 60}]}),
                ),
            )
        ),
        Tools(
            (
                Call(
                    "make_plan",
                    json.dumps(
                        {"name": "Movie night", "steps": [dim, {**music, "delay_s": 60}], "risks": ["loud"]}
                    ),
                ),
            )
        ),
        Tools((Call("make_plan", json.dumps({"name": "Bad", "steps": [garage]})),)),
        Tools((Call("make_plan", json.dumps({"name": "Bad", "steps": [{**dim, "delay_s": -5}]})),)),
        model="planner",
    )

    async def run() -> tuple[ExecutionPlan, str]:
        client = openai.AsyncOpenAI(base_url=llm.base_url, api_key="test", max_retries=0)
        planner = LlmPlanner(registry, client, model="planner", timeout_s=10, clock=lambda: 1000.0)
        try:
            plan = await planner.plan("movie night with some jazz in a minute")
            with pytest.raises(LlmPlanFailed) as failed:
                await planner.plan("something impossible")
            return plan, str(failed.value)
        finally:
            await client.close()

    plan, failure = asyncio.run(run())
    assert plan.source == "llm" and plan.name == "movie night" and plan.risks == ("loud",)
    assert [(s.device, s.command, s.delay_s) for s in plan.steps] == [
        ("living_room_light", {"device": "living_room_light", "brightness": 51}, None),
        ("music", {"device": "music", "action": "play", "genre": "jazz", "volume": 25}, 60),
    ]
    correction = [m for m in llm.requests[1]["messages"] if m["role"] == "tool"]
    assert correction[0]["content"].startswith(
        "error: step 1: unknown light device 'garage_light' (declared:"
    )
    assert (
        "invalid twice" in failure
        and "steps.0.delay_s: Input should be greater than or equal to 0" in failure
    )


def test_a_device_declared_confirm_makes_even_one_command_a_plan_read_back_first(tmp_path: Path) -> None:
    devices = tmp_path / "devices"
    devices.mkdir()
    for source in (REPO / "devices").glob("*.yaml"):
        text = source.read_text()
        if "name: kitchen_light" in text:
            text += "confirm: true\naliases: [oven light]\n"
        (devices / source.name).write_text(text)
    registry = DeviceRegistry.load(devices)
    planner = RulePlanner(registry, LocalIntentAgent(registry, lambda _name: None), confirm_over_steps=2)
    assert planner.candidate("turn on the oven light") and planner.candidate("turn off the kitchen light")
    assert not planner.candidate("turn off the bedroom light")
    kitchen = planner.plan("turn off the kitchen light")
    assert len(kitchen.steps) == 1 and planner.needs_confirmation(kitchen) and planner.risky(kitchen)
    assert not planner.needs_confirmation(planner.plan("turn off the bedroom light"))
    assert not planner.risky(planner.plan("turn off the bedroom light"))


def test_the_plans_checkpoints_go_beside_the_brain_state_unless_configured(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("brain:\n  state_file: state/voiced.sqlite\n")
    (tmp_path / "state").mkdir()
    assert load_config(config, {}).plans.checkpoint_file == tmp_path / "state" / "voiced-plans.sqlite"
    config.write_text("plans:\n  checkpoint_file: p.sqlite\n  confirm_over_steps: 3\n")
    loaded = load_config(config, {}).plans
    assert (loaded.checkpoint_file, loaded.confirm_over_steps) == (tmp_path / "p.sqlite", 3)
    config.write_text("plans:\n  confirm_timeout_s: -1\n")
    with pytest.raises(ConfigError, match=r"plans\.confirm_timeout_s"):
        load_config(config, {})


def test_a_request_of_its_own_while_a_plan_waits_is_no_yes_or_no() -> None:
    assert is_yes("yes") and is_yes("ok go ahead") and is_yes("yes please do it")
    assert not is_yes("ok turn off everything in the living room")
    assert is_no("no") and is_no("stop") and is_no("stop it please") and is_no("don't do that, cancel it")
    assert not is_no("stop the music")
