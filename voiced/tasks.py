"""The one way we stop tasks we own: cancel, wait with a timeout, name what would not stop.

The wait is not shielded: if the caller itself is cancelled while it waits, that cancellation
propagates (it is not ours to swallow); the tasks it was stopping have been cancelled already.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

_LOGGER = logging.getLogger(__name__)

STOP_TIMEOUT_S = 5.0


async def cancel_and_wait(
    tasks: Iterable[asyncio.Future[Any]], timeout_s: float = STOP_TIMEOUT_S
) -> set[asyncio.Future[Any]]:
    """Cancel `tasks` and wait up to `timeout_s` for them to end; returns those still running."""
    live = {task for task in tasks if not task.done()}
    for task in live:
        task.cancel()
    if not live:
        return set()
    _done, pending = await asyncio.wait(live, timeout=timeout_s)
    for task in pending:
        name = task.get_name() if isinstance(task, asyncio.Task) else repr(task)
        _LOGGER.error("task %s did not stop within %.1f s", name, timeout_s)
    return pending
