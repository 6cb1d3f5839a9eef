"""End to end with a satellite that listens for its own wake word (issue 29, point 4): a real
`wyoming-satellite` 1.0.0 run with `--wake-uri`, its wake service a small scripted Wyoming server
over TCP in this test (it detects when the test says so, as the scripted LLM server answers), the
whole daemon in this process, a real Mosquitto and the device simulator.

wyoming-satellite's `WakeStreamingSatellite` sends its microphone to the wake service (after a
`detect` naming its `--wake-word-name`) until a `detection`; then it sends `run-pipeline` to voiced
and streams to it, until voiced's `transcript`, when it sends `detect` again and goes back to the
wake service: half duplex (docs/satellites.md, "Limits, for now")."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from wyoming.audio import AudioChunk
from wyoming.event import Event
from wyoming.info import Attribution, Describe, Info, WakeModel, WakeProgram
from wyoming.server import AsyncEventHandler, AsyncServer
from wyoming.wake import Detect, Detection

from tests.conftest import Broker, free_port, wait_for_port
from tests.home import SimulatedHome
from tests.satellites import Satellite
from tests.speech_fixtures import spoken
from tests.test_e2e_satellites import (
    engines,
    home,
    reply_heard,
    started,
    workdir,
    write_config,
)
from voiced.engines import Engines

pytestmark = pytest.mark.e2e
__all__ = ["engines", "home", "workdir"]  # the satellites' fixtures, used here by name
WAKE_WORD = "okay_nabu"
LOUD = 500  # a chunk with a sample beyond this is speech (the microphone's silence is zeros)
QUIET_AFTER_S = 1.0  # the wake service heard a request whole: this long of silence came after it
WITHIN_S = 20.0


class WakeService:
    """The satellite's wake word service: what it was sent, and a `detection` when the test says."""

    def __init__(self) -> None:
        self.port = free_port()
        self.detects: list[list[str] | None] = []  # the names of each `detect` the satellite sent
        self.chunks = 0
        self.loud_chunks = 0
        self.last_chunk = 0.0  # monotonic
        self.last_loud = 0.0
        self.described = 0
        self._handler: _WakeHandler | None = None
        self._server: AsyncServer | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def uri(self) -> str:
        return f"tcp://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._server = AsyncServer.from_uri(self.uri)
        self._task = asyncio.create_task(self._server.run(self._handle), name="wake service")
        await asyncio.to_thread(wait_for_port, self.port, 10)

    async def stop(self) -> None:
        if self._handler is not None:
            await self._handler.stop()
        assert self._task is not None
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)

    def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> _WakeHandler:
        self._handler = _WakeHandler(reader, writer, self)
        return self._handler

    async def detect(self) -> None:
        """The wake word, heard: a `detection` to the satellite."""
        assert self._handler is not None, "the satellite never connected to its wake service"
        await self._handler.write_event(Detection(name=WAKE_WORD, timestamp=0).event())

    async def until(self, what: str, done: Callable[[], object], timeout_s: float = WITHIN_S) -> None:
        deadline = time.monotonic() + timeout_s
        while not done():
            assert time.monotonic() < deadline, f"the wake service: {what}, not within {timeout_s} s"
            await asyncio.sleep(0.05)

    async def heard_a_request(self, loud_before: int) -> None:
        """Louder chunks than `loud_before` came, then silence after them: the satellite sent a
        whole request here, not to voiced."""
        await self.until(
            "a whole request",
            lambda: self.loud_chunks > loud_before and self.last_chunk - self.last_loud >= QUIET_AFTER_S,
        )

    async def left_for_voiced(self) -> None:
        """No microphone chunk here for a while (one comes every 64 ms while it listens here)."""
        await self.until("the satellite stopped sending", lambda: time.monotonic() - self.last_chunk > 0.5)


class _WakeHandler(AsyncEventHandler):
    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, service: WakeService
    ) -> None:
        super().__init__(reader, writer)
        self.service = service

    async def handle_event(self, event: Event) -> bool:
        service = self.service
        if Describe.is_type(event.type):
            service.described += 1
            await self.write_event(_INFO.event())
        elif Detect.is_type(event.type):
            service.detects.append(Detect.from_event(event).names)
        elif AudioChunk.is_type(event.type):
            chunk = AudioChunk.from_event(event)
            service.chunks += 1
            service.last_chunk = time.monotonic()
            if np.abs(np.frombuffer(chunk.audio, dtype=np.int16).astype(np.int32)).max(initial=0) > LOUD:
                service.loud_chunks += 1
                service.last_loud = service.last_chunk
        return True


_NOBODY = Attribution(name="voiced tests", url="https://example.invalid/")
_INFO = Info(
    wake=[
        WakeProgram(
            name="scripted-wake",
            attribution=_NOBODY,
            installed=True,
            description="detects when the test says so",
            version="1.0",
            models=[
                WakeModel(
                    name=WAKE_WORD,
                    attribution=_NOBODY,
                    installed=True,
                    description="Okay Nabu",
                    version="1.0",
                    languages=["en"],
                    phrase="okay nabu",
                )
            ],
        )
    ]
)


def test_a_satellite_with_its_own_wake_word_streams_only_after_it_and_stops_at_the_transcript(
    workdir: Path, broker: Broker, home: SimulatedHome, engines: Engines
) -> None:
    asyncio.run(asyncio.wait_for(_woken_on_the_satellite(workdir, broker, home, engines), 180))


async def _woken_on_the_satellite(
    workdir: Path, broker: Broker, home: SimulatedHome, engines: Engines
) -> None:
    wake = WakeService()
    await wake.start()
    # the satellite as the other tests start it, with its own wake word service
    kitchen = Satellite(
        workdir, "kitchen_satellite", options=("--wake-uri", wake.uri, "--wake-word-name", WAKE_WORD)
    )
    await asyncio.to_thread(kitchen.start)
    daemon = None
    try:
        satellite = {"name": kitchen.name, "uri": kitchen.uri, "room": "kitchen"}
        config = write_config(workdir, broker, [satellite])
        daemon, commands = await started(workdir, config, kitchen, home, engines)
        # it asks its wake service for its word and sends it its microphone
        await wake.until("a detect and the microphone", lambda: wake.detects and wake.chunks > 10)
        assert wake.detects[0] == [WAKE_WORD]

        # before the wake word: the request goes to the wake service, not to voiced
        request = spoken("Turn on the kitchen light.")
        kitchen.say(request)
        await wake.heard_a_request(0)
        assert not [e for e in daemon.events.all() if e["kind"] == "room_heard"]
        assert not home.published()

        # the wake word: the satellite sends voiced `run-pipeline` and streams to it, not to the wake service
        detects_before = len(wake.detects)
        await wake.detect()
        await wake.left_for_voiced()
        loud_before = wake.loud_chunks
        kitchen.say(request)
        await commands.sent(("kitchen_light", "ON"))
        assert "kitchen light" in await reply_heard(kitchen, 1, engines, daemon.events)
        assert wake.loud_chunks == loud_before  # none of it reached the wake service
        heard = [e["text"].lower() for e in daemon.events.all() if e["kind"] == "room_heard"]
        assert len(heard) == 1 and "kitchen light" in heard[0], heard

        # at voiced's transcript it went back to its wake service (half duplex): it asked for its
        # word again, and what is said now does not reach voiced
        await wake.until("a second detect", lambda: len(wake.detects) > detects_before)
        assert wake.detects[-1] == [WAKE_WORD]
        loud_before = wake.loud_chunks
        kitchen.say(spoken("Turn off the kitchen light."))
        await wake.heard_a_request(loud_before)

        await daemon.stop()
        events = daemon.events.all()
        assert len([e for e in events if e["kind"] == "room_heard"]) == 1, events
        assert [e["device"] for e in events if e["kind"] == "command_sent"] == ["kitchen_light"]
        assert not home.published()  # nothing since the kitchen light's ON (Commands took it)
        assert len(kitchen.reply_files()) == 1
        assert daemon.heard_locally_s() == 0.0
    finally:
        if daemon is not None and daemon.task is not None and not daemon.task.done():
            daemon.task.cancel()
            await asyncio.gather(daemon.task, return_exceptions=True)
        await asyncio.to_thread(kitchen.stop)
        await wake.stop()
