"""The plan supervisor on the LLM: validated JSON decisions, bounded by the rules, else the rules'.

The engine runs on LangGraph as in tests/test_plans.py (the step runner injected: which device
confirms); the model is the scripted OpenAI server over real HTTP, answering each request by the
step it is asked about (steps in parallel branches ask at once, in no fixed order).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import openai

from tests.openai_server import Hang, HttpError, ScriptedServer, Step, Text
from tests.test_plans import Home, _steps, _until
from voiced.bus import EventBus
from voiced.config import PlansConfig
from voiced.events import PlanDecision
from voiced.plans.engine import PlanEngine
from voiced.plans.llm_supervisor import LlmSupervisor
from voiced.plans.model import ExecutionPlan
from voiced.plans.supervisor import MAX_TRIES, StepOutcome, allowed, decide


def test_the_rules_own_decision_is_always_allowed_and_bounds_the_rest() -> None:
    for outcome in (
        StepOutcome(True, "ok"),
        StepOutcome(False, "no report"),
        StepOutcome(False, "offline", offline=True),
        StepOutcome(False, "late", missed=True),
    ):
        for tries in range(1, MAX_TRIES + 2):
            assert decide(outcome, tries).decision in allowed(outcome, tries)
    assert allowed(StepOutcome(True, "ok"), 1) == ("continue", "end")  # a done step is not sent again
    assert "retry" not in allowed(StepOutcome(False, "no report"), MAX_TRIES)  # never a second retry
    assert "retry" not in allowed(StepOutcome(False, "late", missed=True), 1)


def _json(decision: str, reason: str) -> Text:
    return Text(json.dumps({"decision": decision, "reason": reason}))


# What the model answers, by (device, tries).
ANSWERS: dict[tuple[str, int], Step] = {
    ("a", 1): _json("continue", "the lamp is on"),
    ("c", 1): _json("skip", "c is not needed tonight"),  # the rules would retry: the model decides
    ("d", 1): Text("Sure, I'd retry that one."),  # not JSON → the rules: retry
    ("d", 2): _json("retry", "once more"),  # beyond the limit → the rules: skip
    ("e", 1): _json("pause", "wait a bit"),  # no such decision → the rules: continue
    ("h", 1): Hang(5),  # no answer within the timeout → the rules: continue
    ("x", 1): HttpError(500),  # the endpoint fails → the rules: continue
    ("f", 1): _json("end", "the rest makes no sense without f"),
}


def _respond(body: dict[str, Any]) -> Step | None:
    asked = json.loads(body["messages"][-1]["content"])
    return ANSWERS.get((asked["step"]["device"], asked["tries"]))


def test_the_llm_supervisor_decides_by_validated_json_and_falls_back_to_the_rules(
    tmp_path: Path, llm: ScriptedServer
) -> None:
    llm.respond = _respond

    async def run() -> tuple[list[PlanDecision], dict[str, Any], dict[str, Any], Home]:
        home = Home(silent=("c", "d", "f"))
        bus = EventBus()
        bus.bind_loop(asyncio.get_running_loop())
        seen = bus.subscribe("test", limit=1000)
        client = openai.AsyncOpenAI(base_url=llm.base_url, api_key="test", max_retries=0)
        supervisor = LlmSupervisor(client, model="scripted", timeout_s=1.0)
        engine = PlanEngine(
            PlansConfig(),
            tmp_path / "plans.sqlite",
            bus,
            lambda _ledger: home,
            say=home.say,
            supervisor=supervisor,
        )
        await engine.start()
        try:
            many = ExecutionPlan(name="p", steps=_steps(*((d, None) for d in "acdehx")))
            await engine.create("p", many, needs_confirmation=False)
            first = await _until(lambda: engine.view("plan-1"), lambda v: v["status"] == "failed")
            # f's first step fails and the model ends the plan: f's second step is never sent
            ended = ExecutionPlan(name="q", steps=_steps(("f", None), ("f", None)))
            await engine.create("q", ended, needs_confirmation=False)
            second = await _until(lambda: engine.view("plan-2"), lambda v: v["status"] == "failed")
            await _until(lambda: asyncio.sleep(0, home.said), lambda said: len(said) == 2)
        finally:
            await engine.aclose()
            await client.close()
        decisions = []
        while not seen.empty():
            event = seen.get_nowait()
            if isinstance(event, PlanDecision):
                decisions.append(event)
        return decisions, first, second, home

    decisions, first, second, home = asyncio.run(run())
    by_step = {
        (e["device"], e["attempt"]): (e["decision"], e["decided_by"]) for e in first["execution_history"]
    }
    assert by_step == {
        ("a", 1): ("continue", "llm"),
        ("c", 1): ("skip", "llm"),
        ("d", 1): ("retry", "rules"),
        ("d", 2): ("skip", "rules"),
        ("e", 1): ("continue", "rules"),
        ("h", 1): ("continue", "rules"),
        ("x", 1): ("continue", "rules"),
    }
    assert sorted(s[1:] for s in home.sent if s[0] == "plan-1") == [
        (0, 1), (1, 1), (2, 1), (2, 2), (3, 1), (4, 1), (5, 1)
    ]  # fmt: skip
    refused = {(e.task_id, e.step, e.data["tries"]): e.data.get("llm_refused", "") for e in decisions}
    assert refused[("plan-1", 0, 1)] == "" and refused[("plan-1", 1, 1)] == ""
    assert refused[("plan-1", 2, 1)].startswith("invalid answer: ")
    assert refused[("plan-1", 2, 2)] == "'retry' is not allowed here (allowed: skip, end)"
    assert refused[("plan-1", 3, 1)].startswith("invalid answer: decision: Input should be 'continue'")
    assert refused[("plan-1", 4, 1)] == "no answer within 1 s"
    assert refused[("plan-1", 5, 1)].startswith("the LLM failed (InternalServerError")
    assert [e.data["by"] for e in decisions if e.task_id == "plan-2"] == ["llm"]
    # The model saw what the rules allow and would do.
    asked = [json.loads(r["messages"][-1]["content"]) for r in llm.requests]
    d2 = next(a for a in asked if a["step"]["device"] == "d" and a["tries"] == 2)
    assert (d2["allowed"], d2["rules"]["decision"]) == (["skip", "end"], "skip")
    # Ended by the model: the step left is not run, and the plan says why.
    assert [s for s in home.sent if s[0] == "plan-2"] == [("plan-2", 0, 1)]
    assert second["result"] == (
        "the supervisor ended the plan (the rest makes no sense without f); none of its 2 steps were done"
    )
    assert home.said[1] == "The q is only partly done: stopped early: the rest makes no sense without f."
