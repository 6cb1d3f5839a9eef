"""Typed turns: lines of text in place of the ear, one turn per line (`voiced run --text FILE`).

Each line becomes an `Utterance` whose transcript is already known; from there on it is a turn
like a spoken one. The next line is handed over only when the previous turn has finished
(`TurnFinished` on the bus), so replies never overlap, and, with a brain, when its analysis of
that turn is done too (`BrainFinished`): a typed line comes milliseconds after the reply, where
a voice takes a second or more, so it would meet the barrier and hear "One moment." every time.
There is no audio, so nothing is ever talked over: the barge-in hooks are never called and
`drop` has nothing to forget.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from voiced.bus import EventBus, Subscription
from voiced.ear.utterance import BargeInHooks, Heard, Utterance
from voiced.events import BrainFinished, InputEnded, Ready, TurnFinished

_LOGGER = logging.getLogger(__name__)

MAX_LINE_CHARS = 2000
STDIN_NAME = "<stdin>"
CHUNK_BYTES = 65536


class Readable(Protocol):
    def read(self, size: int, /) -> bytes | None:
        """Up to `size` bytes, as soon as there are any; b"" at the end."""
        ...


class TypedTurnsError(Exception):
    """The text file cannot be read, or one of its lines cannot be a turn; the message names both."""


@dataclass(frozen=True)
class TypedLine:
    number: int  # in the file, from 1
    text: str


def parse_line(raw: bytes, number: int, name: str) -> TypedLine | None:
    """One line of the file as a turn; None for a blank line or a comment (`#`)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TypedTurnsError(f"{name}, line {number}: not UTF-8 text (byte {exc.start + 1})") from None
    text = text.rstrip("\r\n")
    if number == 1:
        text = text.removeprefix("\ufeff")  # a byte order mark some editors write
    if len(text) > MAX_LINE_CHARS:
        raise TypedTurnsError(
            f"{name}, line {number}: {len(text)} characters; a typed turn has at most {MAX_LINE_CHARS}"
        )
    text = text.strip()
    if not text or text.startswith("#"):
        return None
    return TypedLine(number, text)


def parse_lines(lines: Iterable[bytes], name: str) -> list[TypedLine]:
    return [turn for number, raw in enumerate(lines, start=1) if (turn := parse_line(raw, number, name))]


class TypedTurns:
    """The turns of a text file (read and checked at once) or of a stream (read as they come)."""

    def __init__(self, name: str, *, lines: list[TypedLine] | None = None, stream: Readable | None = None):
        self.name = name
        self._lines = lines
        self._stream = stream

    @classmethod
    def from_file(cls, path: Path) -> TypedTurns:
        """Every line is checked here, so a bad file fails before anything else starts."""
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise TypedTurnsError(f"{path}: text file not found") from None
        except IsADirectoryError:
            raise TypedTurnsError(f"{path}: is a directory, not a text file") from None
        except OSError as exc:
            raise TypedTurnsError(f"{path}: cannot read the text file: {exc.strerror or exc}") from None
        return cls(str(path), lines=parse_lines(data.splitlines(), str(path)))

    @classmethod
    def from_stream(cls, stream: Readable, name: str = STDIN_NAME) -> TypedTurns:
        """Lines are taken as they are typed; a bad one (not UTF-8, too long) is refused, named in
        the log, and the next is taken.

        `stream` should be unbuffered (`io.FileIO`): a buffered reader waits to fill its buffer,
        and one left blocked in a read by our reading thread aborts the interpreter's shutdown.
        """
        return cls(name, stream=stream)

    async def lines(self) -> AsyncIterator[TypedLine]:
        if self._lines is not None:
            for line in self._lines:
                yield line
            return
        assert self._stream is not None
        loop = asyncio.get_running_loop()
        arrived: asyncio.Queue[bytes | None] = asyncio.Queue()
        # A thread of our own, not the loop's executor: a read blocked on a terminal must not
        # hold up the shutdown after Ctrl-C.
        args = (self._stream, loop, arrived.put_nowait)
        threading.Thread(target=_read_stream, args=args, name="typed-turns", daemon=True).start()
        number = 0
        while (raw := await arrived.get()) is not None:
            number += 1
            try:
                typed = parse_line(raw, number, self.name)
            except TypedTurnsError as exc:  # one bad line is refused; the daemon (web, devices) goes on
                _LOGGER.error("%s; skipped it", exc)
                continue
            if typed is not None:
                yield typed


def _split_lines(stream: Readable) -> Iterator[bytes]:
    """The stream's lines (without their ends) as soon as each is complete."""
    pending = b""
    while chunk := stream.read(CHUNK_BYTES):
        *lines, pending = (pending + chunk).split(b"\n")
        yield from lines
    if pending:
        yield pending


def _read_stream(
    stream: Readable, loop: asyncio.AbstractEventLoop, put: Callable[[bytes | None], None]
) -> None:
    try:
        try:
            for raw in _split_lines(stream):
                loop.call_soon_threadsafe(put, raw)
        except OSError as exc:
            _LOGGER.error("reading typed turns stopped: %s", exc)
        loop.call_soon_threadsafe(put, None)
    except RuntimeError:
        pass  # the loop has closed: nobody is waiting for the rest


class TypedEar:
    """Stands in for the `Ear`: the turns of `TypedTurns`, one after another."""

    def __init__(self, turns: TypedTurns, bus: EventBus, *, brain_wait_s: float | None = None) -> None:
        """`brain_wait_s`: a brain is thinking about each turn; after the turn has finished, wait
        at most this long for its analysis before the next line (past it the daemon's barrier,
        with its filler, takes over). None: no brain, the turn finishing is enough."""
        self._turns = turns
        self._bus = bus
        self._brain_wait_s = brain_wait_s
        self._turn = 0

    async def run(self, deliver: Callable[[Utterance], None], hooks: BargeInHooks | None = None) -> None:
        """Hand over each line once the turn before it is done; return when all are."""
        events = self._bus.subscribe()  # before the first turn: none of its events can be missed
        try:
            self._bus.publish(Ready())
            async for line in self._turns.lines():
                self._turn += 1
                _LOGGER.debug("turn %d: %s line %d", self._turn, self._turns.name, line.number)
                deliver(self._utterance(line.text))
                await self._until_done(events, self._turn)
            self._bus.publish(InputEnded())
        finally:
            self._bus.unsubscribe(events)

    async def _until_done(self, events: Subscription, turn: int) -> None:
        """Until `turn` has finished and, with a brain, been analysed (a bounded wait after it finished).

        The analysis may end before the reply does: it starts once the reply plays.
        """
        finished, analysed = False, self._brain_wait_s is None
        loop = asyncio.get_running_loop()
        deadline: float | None = None
        while not (finished and analysed):
            timeout = None if deadline is None else max(0.0, deadline - loop.time())
            try:
                event = await asyncio.wait_for(events.get(), timeout)
            except TimeoutError:
                _LOGGER.warning(
                    "turn %d: the brain's analysis took over %.0f s; taking the next line",
                    turn,
                    self._brain_wait_s,
                )
                return
            if isinstance(event, TurnFinished) and event.turn == turn:
                finished = True
                if self._brain_wait_s is not None:
                    deadline = loop.time() + self._brain_wait_s
            elif isinstance(event, BrainFinished) and event.turn == turn:
                analysed = True

    def _utterance(self, text: str) -> Utterance:
        async def known() -> Heard:
            return Heard(text, asr_s=0.0, early=False, typed=True)

        transcript = asyncio.create_task(known(), name=f"typed-turn-{self._turn}")
        return Utterance(self._turn, np.zeros(0, dtype=np.int16), time.monotonic(), transcript)

    def drop(self, turn: int) -> None:
        """Nothing to forget: a typed line is never our own echo."""
        _LOGGER.debug("turn %d: typed, nothing to drop", turn)
