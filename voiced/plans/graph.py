"""The plan as a LangGraph state graph (seeds 002-004).

    START → begin ─┬─ needs confirmation → ask → review ─┬─ approved → schedule
                   │                      ▲             ├─ changed  → ask (read back again)
                   │                      └─────────────┘└─ refused  → END (cancelled)
                   └─ otherwise ─────────────────────────────────────→ schedule
    schedule → wait ══ Send, one branch per device due ══▶ step → supervise ─┬─ steps left → schedule
                                                                          └─ none → finish → END

`review` waits with interrupt() for Command(resume={"approved", "notes", "plan"}). Every node's
result is checkpointed (durability "sync"), one superstep per batch of steps due together, so a
restart resumes at the batch it was in; a step already published is never sent again (the
ledger, voiced/plans/ledger.py). The wait sleeps until the batch is due, from the wall clock.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from langgraph.graph import END, START, StateGraph
from langgraph.types import Send, interrupt

from voiced.bus import EventBus
from voiced.events import PlanDecision, PlanStepFinished, PlanStepStarted
from voiced.plans.model import PlanStep, TaskState, history_entry, plan_of
from voiced.plans.supervisor import MAX_TRIES, StepOutcome, Supervisor, by_rules, overall


class StepRunner(Protocol):
    def __call__(self, task_id: str, step: PlanStep, attempt: int) -> Awaitable[StepOutcome]: ...

    def recorded(self, task_id: str, index: int, attempt: int) -> StepOutcome | None:
        """The outcome of an attempt already done (before a restart, say); None if it is not."""


def _lanes(state: TaskState) -> dict[str, list[int]]:
    """Pending steps by device, each lane in plan order."""
    steps = plan_of(state).steps
    lanes: dict[str, list[int]] = {}
    for index in state.get("pending", []):
        lanes.setdefault(steps[index].device, []).append(index)
    return lanes


def next_batch(state: TaskState, now: float) -> tuple[list[int], float | None]:
    """The lane heads due first (all at once: the same moment, or untimed) and when that is."""
    steps = plan_of(state).steps
    heads = [indexes[0] for indexes in _lanes(state).values()]
    if not heads:
        return [], None

    def due_at(index: int) -> float:
        at = steps[index].at
        return 0.0 if at is None else at  # untimed: first, before any timed step also due

    due = min(due_at(i) for i in heads)
    batch = [i for i in heads if due_at(i) <= due + 1.0]
    return sorted(batch), (due if due > now else None)


def build_graph(
    bus: EventBus,
    run_step: StepRunner,
    *,
    grace_s: float,
    clock: Callable[[], float] = time.time,
    supervisor: Supervisor = by_rules,
) -> StateGraph[Any]:
    graph: StateGraph[Any] = StateGraph(TaskState)

    async def begin(state: TaskState) -> dict[str, Any]:
        return {}

    def after_begin(state: TaskState) -> str:
        if state.get("status") == "executing" or not state.get("needs_confirmation"):
            return "schedule"
        return "ask"

    async def ask(state: TaskState) -> dict[str, Any]:
        # `plan_waiting_confirmation` is published by the engine once this state is stored: the web
        # page reads the task when it hears it, and from here it read "planning" (and kept it)
        return {
            "status": "waiting_confirmation",
            "waiting_for": "user_confirmation",
            "waiting_since": clock(),
        }

    async def review(state: TaskState) -> dict[str, Any]:
        answer: dict[str, Any] = interrupt({"task_id": state["task_id"], "question": "confirm"})
        notes = str(answer.get("notes", ""))
        if answer.get("plan") is not None:  # a change: read it back and ask again
            new_plan = answer["plan"]
            return {
                "execution_plan": new_plan,
                "pending": [s["index"] for s in new_plan["steps"]],
                "user_notes": notes,
            }
        if answer.get("approved"):
            return {"status": "executing", "waiting_for": "", "user_notes": notes}
        return {
            "status": "cancelled",
            "waiting_for": "",
            "user_notes": notes,
            "result": str(answer.get("reason") or "refused"),
        }

    def after_review(state: TaskState) -> str:
        status = state.get("status")
        if status == "executing":
            return "schedule"
        return END if status == "cancelled" else "ask"

    async def schedule(state: TaskState) -> dict[str, Any]:
        started: dict[str, Any] = {}
        if state.get("started_at") is None:  # the plan starts: "in ten minutes" counts from now
            start = clock()
            plan = plan_of(state)
            steps = [
                s.model_copy(update={"at": start + s.delay_s})
                if s.delay_s is not None and s.at is None
                else s
                for s in plan.steps
            ]
            new_plan = plan.model_copy(update={"steps": tuple(steps)}).model_dump(mode="json")
            started = {"started_at": start, "execution_plan": new_plan}
        batch, due = next_batch({**state, **started}, clock())  # type: ignore[typeddict-item]
        return {
            **started,
            "status": "executing",
            "batch": batch,
            "next_due": due,
            "waiting_for": "time" if due is not None else "device",
        }

    async def wait(state: TaskState) -> dict[str, Any]:
        due = state.get("next_due")
        if due is not None and due > clock():
            await asyncio.sleep(due - clock())
        return {"waiting_for": "device"}

    def fan_out(state: TaskState) -> list[Send]:
        steps = plan_of(state).steps
        attempts = state.get("attempts", {})
        return [
            Send(
                "step",
                {
                    "task_id": state["task_id"],
                    "step": steps[i].model_dump(mode="json"),
                    "attempt": attempts.get(str(i), 0) + 1,
                },
            )
            for i in state.get("batch", [])
        ]

    async def step(payload: dict[str, Any]) -> dict[str, Any]:
        one = PlanStep.model_validate(payload["step"])
        attempt = int(payload["attempt"])
        task_id = str(payload["task_id"])
        late = clock() - one.at if one.at is not None else 0.0
        done = run_step.recorded(task_id, one.index, attempt)
        if done is not None:  # done before a restart (its checkpoint lost): late now, but not missed
            outcome = done
        elif late > grace_s:
            outcome = StepOutcome(
                False,
                f"due at {time.strftime('%H:%M', time.localtime(one.at))}, "
                f"{late:.0f} s late (grace {grace_s:g} s)",
                missed=True,
            )
        else:
            bus.publish(
                PlanStepStarted(
                    task_id=task_id,
                    step=one.index,
                    detail=one.action,
                    data={"attempt": attempt, "device": one.device},
                )
            )
            outcome = await run_step(task_id, one, attempt)
        status = (
            "completed"
            if outcome.ok
            else ("missed" if outcome.missed else "offline" if outcome.offline else "failed")
        )
        bus.publish(
            PlanStepFinished(
                task_id=task_id,
                step=one.index,
                detail=outcome.detail,
                data={"attempt": attempt, "status": status},
            )
        )
        entry = history_entry(
            one, attempt, status, outcome.detail, offline=outcome.offline, missed=outcome.missed
        )
        return {"execution_history": [entry]}

    async def supervise(state: TaskState) -> dict[str, Any]:
        attempts = dict(state.get("attempts", {}))
        pending = list(state.get("pending", []))
        batch = set(state.get("batch", []))
        plan = plan_of(state)
        fresh = [e for e in state.get("execution_history", []) if e["step"] in batch and "decision" not in e]
        tries = {e["step"]: attempts.get(str(e["step"]), 0) + 1 for e in fresh}
        outcomes = [
            StepOutcome(
                e["status"] == "completed",
                e["result"],
                offline=bool(e.get("offline")),
                missed=bool(e.get("missed")),
            )
            for e in fresh
        ]
        left = [plan.steps[i].action for i in pending if i not in batch]
        context = {"plan": plan.name, "requirement": state.get("requirement", ""), "steps_left": left}
        verdicts = await asyncio.gather(
            *(
                supervisor(
                    outcome, tries[e["step"]], {**context, "step": _step_context(plan.steps[e["step"]])}
                )
                for e, outcome in zip(fresh, outcomes, strict=True)
            )
        )
        decided: list[dict[str, Any]] = []
        ended = ""
        for entry, verdict in zip(fresh, verdicts, strict=True):
            index = entry["step"]
            attempts[str(index)] = tries[index]
            if verdict.decision != "retry" and index in pending:
                pending.remove(index)
            if verdict.decision == "end":
                ended = ended or verdict.reason
            decided.append(
                {**entry, "decision": verdict.decision, "reason": verdict.reason, "decided_by": verdict.by}
            )
            data: dict[str, Any] = {
                "decision": verdict.decision,
                "by": verdict.by,
                "tries": tries[index],
                "max_tries": MAX_TRIES,
            }
            if verdict.fallback:
                data["llm_refused"] = verdict.fallback
            bus.publish(PlanDecision(task_id=state["task_id"], step=index, detail=verdict.reason, data=data))
        ends: dict[str, Any] = {}
        if ended:  # the supervisor stops the plan: the steps left are not run
            ends = {"ended": ended, "not_run": len(pending)}
            pending = []
        return {
            "execution_history": decided,
            "attempts": attempts,
            "pending": pending,
            "current_step": len(plan.steps) - len(pending),
            "batch": [],
            **ends,
        }

    def after_supervise(state: TaskState) -> str:
        return "schedule" if state.get("pending") else "finish"

    async def finish(state: TaskState) -> dict[str, Any]:
        finals: dict[int, dict[str, Any]] = {}
        for entry in state.get("execution_history", []):
            if "decision" in entry:
                finals[entry["step"]] = entry
        status, result = overall(
            [e["status"] for e in finals.values()],
            ended=state.get("ended", ""),
            not_run=state.get("not_run", 0),
        )
        return {"status": status, "result": result, "waiting_for": ""}

    graph.add_node("begin", begin)
    graph.add_node("ask", ask)
    graph.add_node("review", review)
    graph.add_node("schedule", schedule)
    graph.add_node("wait", wait)
    graph.add_node("step", step)  # type: ignore[arg-type]  # a Send payload, not the state
    graph.add_node("supervise", supervise)
    graph.add_node("finish", finish)
    graph.add_edge(START, "begin")
    graph.add_conditional_edges("begin", after_begin, ["ask", "schedule"])
    graph.add_edge("ask", "review")
    graph.add_conditional_edges("review", after_review, ["ask", "schedule", END])
    graph.add_edge("schedule", "wait")
    graph.add_conditional_edges("wait", fan_out, ["step"])
    graph.add_edge("step", "supervise")
    graph.add_conditional_edges("supervise", after_supervise, ["schedule", "finish"])
    graph.add_edge("finish", END)
    return graph


def _step_context(step: PlanStep) -> dict[str, Any]:
    return {"index": step.index, "device": step.device, "action": step.action, "reason": step.reason}
