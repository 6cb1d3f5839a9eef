"""The ear's frames with a word between them when awaited work is done (voiced/ear/between.py):
real async generators and futures, the order decided by events, never by a clock."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from voiced.ear.between import frames_or_done


def test_work_done_between_two_frames_is_told_at_once_then_the_frames_go_on() -> None:
    async def scenario() -> list[bytes | None]:
        next_frame = asyncio.Event()
        work: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        judged: list[bool] = []

        async def frames() -> AsyncIterator[bytes]:
            yield b"one"
            await next_frame.wait()  # the second frame is not there yet
            yield b"two"

        seen: list[bytes | None] = []
        async for item in frames_or_done(frames(), lambda: None if judged else work):
            seen.append(item)
            if item == b"one":
                # comes in while the next frame is awaited
                asyncio.get_running_loop().call_soon(work.set_result, "the transcript")
            elif item is None:
                judged.append(True)  # the ear judged it: nothing awaited any more
                next_frame.set()
        return seen

    assert asyncio.run(scenario()) == [b"one", None, b"two"]


def test_a_frame_already_there_goes_before_the_work_and_nothing_is_told_twice() -> None:
    async def scenario() -> list[bytes | None]:
        work: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        work.set_result("done before the frames")

        async def frames() -> AsyncIterator[bytes]:
            for frame in (b"one", b"two"):
                yield frame

        return [item async for item in frames_or_done(frames(), lambda: work)]

    assert asyncio.run(scenario()) == [b"one", b"two"]  # done already: the frames say it


def test_leaving_early_closes_the_source_and_the_frame_it_was_waiting_for() -> None:
    async def scenario() -> bool:
        closed = asyncio.Event()
        never: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        async def frames() -> AsyncIterator[bytes]:
            try:
                yield b"one"
                await asyncio.Event().wait()  # no second frame, ever
                yield b"two"
            finally:
                closed.set()

        stream = frames_or_done(frames(), lambda: never)
        assert await anext(stream) == b"one"
        waiting = asyncio.ensure_future(anext(stream))
        await asyncio.sleep(0)
        waiting.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await waiting
        await stream.aclose()
        return closed.is_set()

    assert asyncio.run(scenario())
