"""The ear's frames, with a word when awaited work finishes between two of them.

The early transcript at a pause decides whether a whole request ends the turn. Judged only when
the next frame comes, it waits up to a frame for nothing, and a satellite's frames come in
bursts, one of its chunks at a time (wyoming-satellite's 1024 samples: 64 ms). So `frames_or_done`
yields each frame as it comes, and None as soon as the work `awaited()` names is done: the ear
then judges it on the audio it has heard so far, which is what the next frame would have found.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

from voiced.tasks import cancel_and_wait

T = TypeVar("T")


async def frames_or_done(
    frames: AsyncIterator[bytes], awaited: Callable[[], asyncio.Future[Any] | None]
) -> AsyncIterator[bytes | None]:
    """Each of `frames`; None when the future `awaited()` gives (checked before each wait) is
    done first. A frame already there goes first: the decision follows the audio."""
    source = aiter(frames)
    coming: asyncio.Task[bytes] | None = None  # the next frame, while something else is awaited
    try:
        while True:
            work = awaited()
            if work is not None and not work.done():
                if coming is None:
                    coming = asyncio.create_task(_next(source), name="ear-next-frame")
                await asyncio.wait({coming, work}, return_when=asyncio.FIRST_COMPLETED)
                if not coming.done():
                    yield None
                    continue
            try:
                frame = await (coming if coming is not None else anext(source))
            except StopAsyncIteration:
                return
            coming = None
            yield frame
    finally:
        if coming is not None:
            await cancel_and_wait([coming])
            if coming.done() and not coming.cancelled():
                with contextlib.suppress(StopAsyncIteration):
                    coming.result()  # a frame nobody takes now; the source's failure is still told
        close = getattr(source, "aclose", None)
        if close is not None:
            await close()


async def _next(source: AsyncIterator[T]) -> T:
    """The next of `source`, as a coroutine a task can run (an async generator's step is none)."""
    return await anext(source)
