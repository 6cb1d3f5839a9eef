"""What the LLM agent raises, apart from it: whoever apologizes for it need not load the client."""

from __future__ import annotations


class LlmUnavailable(Exception):
    """The model endpoint failed: unreachable, too slow, an HTTP error, or a garbled stream."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
