"""The summary without a model: every N turns, older turns become one fact line each.

The mouth's context is then `compressed_memory` (bounded to `memory_lines`) + the last turns +
the state + the notice, so it stays the same size however long the conversation runs.
"""

from __future__ import annotations

from voiced.brain.state import ConversationState, TurnRecord


def fact(turn: TurnRecord) -> str:
    parts = [f"turn {turn.turn}: user said {turn.user!r}"]
    if turn.commands:
        parts.append("sent " + ", ".join(str(c.get("device")) for c in turn.commands))
    if not turn.understood:
        parts.append("not understood")
    if turn.interrupted:
        parts.append("user interrupted the reply")
    if turn.failures:
        parts.append("failed: " + "; ".join(turn.failures))
    return "; ".join(parts)


class OfflineSummary:
    def __init__(self, keep_turns: int, memory_lines: int) -> None:
        self._keep = keep_turns
        self._lines = memory_lines

    async def summarize(self, state: ConversationState) -> ConversationState:
        older, recent = state.recent_turns[: -self._keep], state.recent_turns[-self._keep :]
        if not older:
            return state
        lines = [line for line in state.compressed_memory.splitlines() if line]
        lines.extend(fact(turn) for turn in older)
        memory = "\n".join(lines[-self._lines :])
        return state.model_copy(update={"compressed_memory": memory, "recent_turns": recent})
