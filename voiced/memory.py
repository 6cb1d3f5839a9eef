"""Memory the process freed, given back to the system (glibc's malloc; elsewhere nothing happens).

Whisper (CTranslate2) and piper (onnxruntime) allocate and free tens of MB a call, on whichever
thread runs it; glibc keeps what a thread's arena freed for that arena's next use, so the resident
size grows with every thread that ever ran a model and never shrinks. `malloc_trim(0)` hands every
arena's free pages back (~3-5 ms): after the models load, after each Whisper job (asr_queue.py)
and after each turn (memory.give_back_after_turn); `M_ARENA_MAX` (memory.malloc_arenas) bounds
how many arenas there are.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import logging
import time
from functools import cache

from voiced.bus import Subscription
from voiced.events import TurnFinished

_LOGGER = logging.getLogger(__name__)
M_ARENA_MAX = -8  # glibc's mallopt parameter (malloc.h)


@cache
def _glibc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    if libc is None or not hasattr(libc, "malloc_trim") or not hasattr(libc, "mallopt"):
        return None  # not glibc (musl, macOS): nothing to do
    return libc


def limit_arenas(arenas: int | None) -> bool:
    """At most `arenas` malloc arenas (None: glibc's own, 8 per core); before the threads start.
    Whether it was set."""
    libc = _glibc()
    if arenas is None or libc is None:
        return False
    return bool(libc.mallopt(M_ARENA_MAX, arenas))


def give_back() -> None:
    """Return the free pages of every arena to the system (blocking: ~3-5 ms, 11 the first time)."""
    libc = _glibc()
    if libc is None:
        return
    started = time.monotonic()
    libc.malloc_trim(0)
    _LOGGER.debug("memory given back in %.1f ms", (time.monotonic() - started) * 1000)


async def give_back_after_turns(events: Subscription) -> None:
    """After each turn, while nobody waits for an answer, off the event loop."""
    while True:
        if isinstance(await events.get(), TurnFinished):
            await asyncio.to_thread(give_back)
