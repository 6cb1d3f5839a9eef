"""Plans from an LLM: one `make_plan` tool call, validated; an invalid plan goes back once.

Each step names a device tool (set_light, set_scent, play_music) with the same arguments and the
same checks as the main agent's tools (declared devices, typed and clamped values), a delay in
seconds (none = at once) and a reason. Errors name the step and what is wrong. A plan still invalid
after the one correction, or an endpoint that fails, raises LlmPlanFailed: the rules plan instead.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

import openai
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from voiced.devices.model import DeviceCommand
from voiced.devices.registry import DeviceRegistry
from voiced.devices.tools import DEVICE_TOOLS, DeviceTools, ToolError, excerpt, load_arguments
from voiced.plans.model import ExecutionPlan, PlanStep, command_kind
from voiced.plans.words import describe as say_command

_LOGGER = logging.getLogger(__name__)
MAX_STEPS = 32
MAX_DELAY_S = 86_400
PROMPT = (
    "You plan for a smart home. Turn the user's request into one call of make_plan: the steps in order, "
    "each a device tool (set_light, set_scent, play_music) with its arguments for a declared device, "
    "delay_s when it should wait (seconds from now; omit for at once) and a short reason. Give a short "
    "name, an estimated_time and the risks. Do not write any other text."
)


class LlmPlanFailed(Exception):
    pass


class LlmStep(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool: str = Field(description="set_light, set_scent or play_music")
    input: dict[str, Any] = Field(description="the tool's arguments")
    delay_s: float | None = Field(None, ge=0, le=MAX_DELAY_S, description="seconds from now; none = at once")
    reason: str = Field("", max_length=300)


class LlmPlan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=60)
    steps: list[LlmStep] = Field(min_length=1, max_length=MAX_STEPS)
    estimated_time: str = Field("", max_length=100)
    risks: list[str] = Field(default_factory=list, max_length=10)


class LlmPlanner:
    def __init__(
        self,
        registry: DeviceRegistry,
        client: openai.AsyncOpenAI,
        *,
        model: str,
        timeout_s: float,
        clock: Callable[[], float],
    ) -> None:
        self._tools = DeviceTools(registry)
        self._client = client
        self._model = model
        self._timeout_s = timeout_s
        self._clock = clock

    def schema(self) -> dict[str, Any]:
        params = LlmPlan.model_json_schema()
        return {"type": "function", "function": {"name": "make_plan", "parameters": params}}

    async def plan(self, request: str) -> ExecutionPlan:
        try:
            async with asyncio.timeout(self._timeout_s):
                return await self._ask(request)
        except TimeoutError:
            raise LlmPlanFailed(f"the planner did not answer within {self._timeout_s:g} s") from None
        except (openai.OpenAIError, AttributeError, TypeError) as exc:
            raise LlmPlanFailed(
                f"the planner was unavailable ({type(exc).__name__}: {excerpt(str(exc))})"
            ) from None

    async def _ask(self, request: str) -> ExecutionPlan:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": PROMPT},
            {"role": "user", "content": request},
        ]
        errors: list[str] = []
        for _round in range(2):  # the plan, and one correction
            choice: Any = {"type": "function", "function": {"name": "make_plan"}}
            tools: Any = [self.schema()]
            response = await self._client.chat.completions.create(
                model=self._model,
                messages=messages,  # type: ignore[arg-type]
                tools=tools,
                tool_choice=choice,
            )
            if not response.choices:
                raise LlmPlanFailed("the response has no choices")
            message = response.choices[0].message
            calls = [c for c in message.tool_calls or [] if c.type == "function"]
            if not calls:
                errors = ["no make_plan call"]
                messages.append({"role": "assistant", "content": (message.content or "")[:500]})
                messages.append({"role": "user", "content": "error: call make_plan once; correct this"})
                continue
            first = calls[0]
            plan, errors = self._check(first.function.name, first.function.arguments)
            if plan is not None:
                return plan
            _LOGGER.info("plan planner: refused: %s", "; ".join(errors))
            messages.append(
                {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": first.id,
                            "type": "function",
                            "function": {
                                "name": "make_plan",
                                "arguments": _replayable(first.function.arguments),
                            },
                        }
                    ],
                }
            )
            content = "error: " + "; ".join(errors) + "; correct the plan"
            messages.append({"role": "tool", "tool_call_id": first.id, "content": content})
        raise LlmPlanFailed(f"the planner's plan was invalid twice: {'; '.join(errors)}")

    def _check(self, name: str, arguments: str) -> tuple[ExecutionPlan | None, list[str]]:
        if name != "make_plan":
            return None, [f"unknown tool {excerpt(name)}: call make_plan"]
        try:
            raw = LlmPlan.model_validate(load_arguments(arguments))
        except ToolError as exc:
            return None, [str(exc)]
        except ValidationError as exc:
            return None, [f"invalid plan: {_where(exc)}"]
        errors: list[str] = []
        steps: list[PlanStep] = []
        for i, step in enumerate(raw.steps):
            if step.tool not in DEVICE_TOOLS:
                errors.append(
                    f"step {i + 1}: unknown tool {excerpt(step.tool)} (use {', '.join(DEVICE_TOOLS)})"
                )
                continue
            try:
                command: DeviceCommand = self._tools.command(step.tool, step.input, [])
            except ToolError as exc:
                errors.append(f"step {i + 1}: {exc}")
                continue
            steps.append(
                PlanStep(
                    index=len(steps),
                    device=command.device,
                    kind=command_kind(command),
                    command=command.model_dump(mode="json", exclude_none=True),
                    action=say_command(command),
                    delay_s=step.delay_s or None,
                    reason=step.reason,
                )
            )
        if errors:
            return None, errors
        plan = ExecutionPlan(
            name=raw.name.strip().lower(),
            steps=tuple(steps),
            estimated_time=raw.estimated_time,
            risks=tuple(raw.risks),
            source="llm",
        )
        return plan, []


def _where(error: ValidationError) -> str:
    """Each problem with its full place: "steps.1.delay_s: Input should be ... (got -5)"."""
    said = []
    for problem in error.errors()[:5]:
        place = ".".join(str(part) for part in problem["loc"])
        said.append(f"{place}: {problem['msg']} (got {excerpt(repr(problem.get('input')))})")
    return "; ".join(said)


def _replayable(arguments: str) -> str:
    try:
        return arguments if isinstance(json.loads(arguments), dict) and len(arguments) < 8192 else "{}"
    except (ValueError, RecursionError):
        return "{}"
