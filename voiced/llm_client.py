"""The OpenAI-compatible client, and the one rule for closing it: whoever opens a client closes it.

The daemon opens one at the edge and lends it to the agent, the vibe planner and the brain;
each borrower sets its own timeout with `with_options` (same connection pool) and closes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from voiced.config import LlmConfig

if TYPE_CHECKING:
    import openai

DUMMY_API_KEY = "not-needed"  # local servers (llama.cpp, vLLM) ignore the key but the client wants one


def open_client(config: LlmConfig, timeout_s: float) -> openai.AsyncOpenAI:
    import openai  # ~12 MB and 0.3 s of start-up: only where a model is configured

    return openai.AsyncOpenAI(
        base_url=config.base_url,
        api_key=config.api_key or DUMMY_API_KEY,
        timeout=openai.Timeout(timeout_s, connect=config.connect_timeout_s),
        max_retries=0,  # a retry would only delay the apology
    )


def borrow(client: openai.AsyncOpenAI, config: LlmConfig, timeout_s: float) -> openai.AsyncOpenAI:
    """The lent client with a borrower's own timeout; closing it is the lender's business."""
    import openai

    return client.with_options(timeout=openai.Timeout(timeout_s, connect=config.connect_timeout_s))
