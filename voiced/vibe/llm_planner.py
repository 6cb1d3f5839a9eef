"""The vibe agent's planner on an LLM: one request in, a checked plan of tool calls out.

The model answers with tool calls (set_light, set_scent, play_music, narrate) for the declared
devices. Calls that fail the same checks as the main agent's are sent back once with the errors so
the model can correct them; a valid call it sends again is kept once. `plan_timeout_s` bounds the
whole exchange, not each read, so a model trickling a byte at a time can't hold the scene back.
If the endpoint fails, or no valid step comes back, the presets plan the scene instead and the
plan's note says why.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import openai
from openai.types.chat import ChatCompletionFunctionToolParam

from voiced.config import LlmConfig, VibeConfig
from voiced.devices.registry import DeviceRegistry
from voiced.devices.tools import (
    DEVICE_TOOLS,
    MAX_ARGUMENT_CHARS,
    DeviceTools,
    ToolError,
    excerpt,
    load_arguments,
    shown,
    tidy_schema,
)
from voiced.vibe.plan import VIBE_TOOLS, NarrateArgs, VibePlan, VibeStep, check_step
from voiced.vibe.presets import PresetPlanner

_LOGGER = logging.getLogger(__name__)

PLANNER_PROMPT = (
    "You are the vibe agent of a smart home. Turn the user's request into a scene by calling tools, all "
    "in one response: set_light for each light worth changing, set_scent, play_music (a genre or a batch "
    "of tracks), and at most one narrate with a short spoken line. Use only the devices and values the "
    "tools declare. Do not write any other text."
)
_CORRECTION_ROUNDS = 1


class LlmPlanner:
    def __init__(
        self,
        llm: LlmConfig,
        config: VibeConfig,
        registry: DeviceRegistry,
        presets: PresetPlanner,
        client: openai.AsyncOpenAI,
        *,
        owns_client: bool = True,
    ) -> None:
        self._owns_client = owns_client
        self._llm = llm
        self._config = config
        self._tools = DeviceTools(registry)
        self._presets = presets
        self._client = client

    def use_presets(self, presets: PresetPlanner) -> None:
        self._presets = presets

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.close()

    def schemas(self) -> list[ChatCompletionFunctionToolParam]:
        result: list[dict[str, Any]] = []
        for name in VIBE_TOOLS:
            if name in DEVICE_TOOLS:
                if not self._tools.names(DEVICE_TOOLS[name]):
                    continue
                params = self._tools.parameters(name)
            else:
                params = tidy_schema(NarrateArgs.model_json_schema())
            result.append({"type": "function", "function": {"name": name, "parameters": params}})
        return result  # type: ignore[return-value]

    async def plan(self, request: str) -> VibePlan:
        try:
            async with asyncio.timeout(self._config.plan_timeout_s):
                steps = await self._ask(request)
        except TimeoutError:
            why = f"the planner did not answer within {self._config.plan_timeout_s:g} s"
            _LOGGER.warning("vibe planner: %s; using a preset", why)
            return self._fallback(request, why)
        except (openai.OpenAIError, ValueError, AttributeError, TypeError) as exc:
            # AttributeError, TypeError: a response that parsed but is not a chat completion
            why = f"the planner was unavailable ({type(exc).__name__}: {excerpt(str(exc), 200)})"
            _LOGGER.warning("vibe planner: %s; using a preset", why)
            return self._fallback(request, why)
        if not steps:
            return self._fallback(request, "the planner proposed no valid step")
        return VibePlan(
            request=request, source="llm", name="llm", steps=tuple(steps[: self._config.max_steps])
        )

    def _fallback(self, request: str, why: str) -> VibePlan:
        plan = self._presets.plan(request)
        return plan.model_copy(update={"note": f"{why}; used the {plan.name!r} preset"})

    async def _ask(self, request: str) -> list[VibeStep]:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": PLANNER_PROMPT},
            {"role": "user", "content": request},
        ]
        good: list[VibeStep] = []
        for _round in range(_CORRECTION_ROUNDS + 1):
            response = await self._client.chat.completions.create(
                model=self._config.planner_model or self._llm.model,
                messages=messages,  # type: ignore[arg-type]
                tools=self.schemas(),
                temperature=self._llm.temperature,
                timeout=self._config.plan_timeout_s,
            )
            if not response.choices:
                raise ValueError("the response has no choices")
            message = response.choices[0].message
            calls = [c for c in message.tool_calls or [] if c.type == "function"]
            errors: list[tuple[str, str]] = []
            for call in calls:
                step, error = self._check(call.function.name, call.function.arguments)
                if step is None:
                    errors.append((call.id, error))
                elif step not in good:  # the correction round re-sends valid calls: run them once
                    good.append(step)
            if not errors:
                return good
            _LOGGER.info(
                "vibe planner: %d call(s) refused: %s", len(errors), "; ".join(e for _i, e in errors)
            )
            messages.append(_bounded(message.model_dump(exclude_none=True)))
            for call in calls:
                problem = next((e for i, e in errors if i == call.id), None)
                content = f"error: {problem}; correct this call" if problem else "ok"
                messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
        return good

    def _check(self, name: str, arguments: str) -> tuple[VibeStep | None, str]:
        if name not in VIBE_TOOLS:
            return None, f"unknown tool {shown(name)} (available: {', '.join(VIBE_TOOLS)})"
        try:
            step = VibeStep(tool=name, input=load_arguments(arguments))  # type: ignore[arg-type]
            check_step(self._tools, step)
        except ToolError as exc:
            return None, str(exc)
        return step, ""


def _bounded(message: dict[str, Any]) -> dict[str, Any]:
    """The model's message as the correction round replays it: no megabytes, no malformed JSON."""
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        arguments = function.get("arguments")
        if isinstance(arguments, str) and not _replayable(arguments):
            function["arguments"] = "{}"
        if isinstance(function.get("name"), str):
            function["name"] = function["name"][:64]
    content = message.get("content")
    if isinstance(content, str):
        message["content"] = content[:MAX_ARGUMENT_CHARS]
    return message


def _replayable(arguments: str) -> bool:
    if len(arguments) > MAX_ARGUMENT_CHARS:
        return False
    try:
        return isinstance(json.loads(arguments), dict)
    except (ValueError, RecursionError):
        return False
