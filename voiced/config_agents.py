"""The sections of config.yaml about thinking: the agent, the LLM, the brain, scenes and plans
(config.py puts every section together)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from voiced.config_sections import Float, Int, SafePath, _Section


class VibeConfig(_Section):
    """Scenes: the vibe agent sets lights, scent and music in the background."""

    confirm_timeout_s: Float = Field(
        5.0,
        gt=0,
        le=120,
        description="how long a device has to show a command in its state (a scene's step, or a command "
        "the brain asked the reply to confirm)",
    )
    plan_timeout_s: Float = Field(20.0, gt=0, le=300, description="the LLM planner's time budget")
    planner_model: str | None = Field(
        None, description="the model that plans scenes and plans; null = llm.model"
    )
    max_steps: Int = Field(
        16, ge=1, le=64, description="a scene planned by the LLM keeps at most this many steps"
    )
    narrate_wait_s: Float = Field(
        20.0, ge=0, le=300, description="how long a narration waits for the conversation to pause"
    )
    default_preset: str = Field("relax", description="used when no preset matches the request")
    presets_file: SafePath | None = Field(
        None, description="your scene presets (YAML, like voiced/vibe/presets.yaml); null = the built-in ones"
    )
    checkpoint_file: SafePath | None = Field(
        None,
        description="scenes' checkpoints (SQLite), so a scene cut off by a restart resumes; its ledger of "
        "steps sent is a second file beside it, named with -ledger (voiced-scenes-ledger.sqlite); "
        "null = voiced-scenes.sqlite beside brain.state_file. With voiced stopped both may be deleted: "
        "only a scene cut off by the stop is forgotten",
    )
    resume_within_s: Float = Field(
        300.0,
        ge=0,
        le=86400,
        description="a scene cut off by a restart resumes only if it began less than this long ago",
    )


DEFAULT_SYSTEM_PROMPT = (
    "You are voiced, the voice of a smart home. Your words are spoken aloud: answer in one or two "
    "short sentences of plain speech, no markdown, lists or emoji. Change devices only through the "
    "tools, and never say a change happened unless the tool result says it was sent."
)


class LlmConfig(_Section):
    """An OpenAI-compatible language model, when you want one."""

    base_url: str | None = Field(
        None,
        pattern=r"^https?://",
        description="an OpenAI-compatible endpoint (http:// or https://); null = no LLM",
    )
    model: str = Field("gpt-4o-mini", description="the model the main agent asks")
    api_key: str | None = Field(None, exclude=True, description="the endpoint's API key")
    connect_timeout_s: Float = Field(3.0, gt=0, le=60, description="connecting to the endpoint")
    first_token_timeout_s: Float = Field(
        4.0, gt=0, le=120, description="no first token by then: a short apology instead"
    )
    total_timeout_s: Float = Field(30.0, gt=0, le=600, description="one whole request to the endpoint")
    max_history_turns: Int = Field(8, ge=0, le=200, description="turns of conversation sent to the model")
    max_tool_rounds: Int = Field(4, ge=1, le=20, description="tool calls and answers in one turn, at most")
    temperature: Float = Field(0.4, ge=0, le=2, description="the model's sampling temperature")
    system_prompt: str = Field(
        DEFAULT_SYSTEM_PROMPT, min_length=1, description="the main agent's instructions to the model"
    )
    stall_timeout_s: float = Field(
        3.0, gt=0, le=120, description="the longest pause between two pieces of a reply once it has begun"
    )
    first_sentence_timeout_s: float = Field(
        4.5,
        gt=0,
        le=600,
        description="the longest the user waits for a first sentence before an apology "
        "(never less than first_token_timeout_s)",
    )


class AgentConfig(_Section):
    """Which agent answers: the local intents, the LLM, or both."""

    kind: Literal["auto", "local", "llm", "hybrid"] = Field(
        "auto", description="auto = hybrid when llm.base_url is set, else local"
    )
    brightness_step_pct: Int = Field(
        25, ge=1, le=100, description='how much "dimmer" or "brighter" changes a light, in percent'
    )


class BrainConfig(_Section):
    """The analyst, judge and summary that think about each turn while the reply plays."""

    enabled: bool = Field(True, description="analyst, judge and summary in the background")
    state_file: SafePath = Field(
        Path("voiced-state.sqlite"),
        description="the conversation state (SQLite), relative to the config file; `voiced state` prints it. "
        "The scenes' and plans' files go beside it (vibe.checkpoint_file, plans.checkpoint_file). With "
        "voiced stopped it may be deleted: the conversation and what the brain learned start afresh",
    )
    new_session: bool = Field(False, description="start a new session instead of resuming the last")
    barrier_timeout_s: Float = Field(
        30.0, gt=0, le=600, description="the longest a turn waits for the last turn's analysis"
    )
    filler: str = Field("One moment.", min_length=1, description="said when a turn has to wait")
    summary_every: Int = Field(5, ge=1, le=100, description="compress older turns every N turns")
    keep_turns: Int = Field(4, ge=1, le=50, description="turns kept word for word in the context")
    memory_lines: Int = Field(30, ge=1, le=500, description="fact lines kept in compressed_memory")
    use_llm: bool = Field(True, description="think with the LLM when llm.base_url is set")
    model: str | None = Field(None, description="the model the brain uses; null = llm.model")
    timeout_s: Float = Field(
        8.0, gt=0, le=600, description="one brain request's budget; three fit in the barrier's"
    )


class PlansConfig(_Section):
    """Commands for later become plans: read back, confirmed, run step by step (those for now run at once)."""

    enabled: bool = Field(True, description="multi-step and timed requests become plans (voiced/plans)")
    checkpoint_file: SafePath | None = Field(
        None,
        description="the plans' checkpoints (LangGraph, SQLite), so a plan waiting or running goes on "
        "after a restart; its ledger of steps sent and plans confirmed is a second file beside it, named "
        "with -ledger (voiced-plans-ledger.sqlite); null = voiced-plans.sqlite beside brain.state_file. "
        "With voiced stopped both may be deleted: the plans not yet done are forgotten",
    )
    confirm_over_steps: Int = Field(
        2,
        ge=0,
        le=64,
        description="a request with more commands is planned; over the task API such a plan waits for an OK "
        "(said aloud, commands for now run at once, however many)",
    )
    confirm_timeout_s: Float = Field(60.0, gt=0, le=3600, description="no answer by then cancels the plan")
    grace_s: Float = Field(
        120.0, ge=0, le=86400, description="a timed step that fell due while down still runs if this late"
    )
    llm_supervisor: bool = Field(
        True, description="with llm.base_url, the LLM decides after each step (within the rules' bounds)"
    )
    supervisor_timeout_s: Float = Field(
        10.0, gt=0, le=120, description="the LLM supervisor's time per decision; past it the rules decide"
    )
    keep_days: Int = Field(
        30, ge=1, le=3650, description="finished plans and scenes older than this are deleted"
    )
    keep_finished: Int = Field(
        300,
        ge=1,
        le=100_000,
        description="at most this many finished plans (and scenes) are kept, the newest",
    )
