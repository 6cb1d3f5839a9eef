"""The connection to one Wyoming satellite, kept up as Home Assistant's Wyoming integration keeps it.

voiced is the client: it connects to the satellite (which listens on tcp://host:10700), asks it to
describe itself (`describe` → `info`), tells it to run (`run-satellite`), and then reads what it
sends: `run-pipeline` when it starts streaming, the microphone's `audio-chunk`s (16 kHz mono 16-bit
for the ear, converted if the satellite sends another format), `audio-stop` when its stream ends,
`played` when it has played our reply. What we send it (voice-started, transcript, synthesize,
the reply's audio-start/chunk/stop) goes through one queue, in order, written by one task.

When the satellite goes away (or never answers) the link says so on the bus and in the log and
tries again, waiting twice as long each time up to `LinkTiming.max_retry_s`, from the first
`first_retry_s` again once a connection worked. `SatelliteLink` is an async context manager that
owns its task: leaving the block cancels it and closes the connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

from wyoming.audio import AudioChunk, AudioChunkConverter, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.event import Event as WyomingEvent
from wyoming.info import Describe, Info
from wyoming.ping import Ping, Pong
from wyoming.pipeline import RunPipeline
from wyoming.satellite import RunSatellite
from wyoming.snd import Played

from voiced.audio.pcm import EAR_RATE
from voiced.bus import EventBus
from voiced.config_satellites import SatelliteConfig
from voiced.satellites.events import SatelliteConnected, SatelliteDisconnected
from voiced.satellites.probe import WIRE_ERRORS, SatelliteGone, read_info, software_of
from voiced.tasks import cancel_and_wait
from voiced.wyoming_link import within

_LOGGER = logging.getLogger(__name__)
ECHO_MODES = {  # how it hears over its own reply, as the log says when it connects
    "half_duplex": "half duplex: deaf while its reply plays, no barge-in",
    "cancel": "barge-in: listening while its reply plays, our echo told apart",
}
OUTGOING_LIMIT = 2000  # events waiting to be written (a reply of 30 s is ~750 chunks)


@dataclass(frozen=True)
class LinkTiming:
    connect_s: float = 5.0  # the TCP connection
    describe_s: float = 5.0  # `info` after our `describe`: a satellite that never answers is let go
    first_retry_s: float = 0.5
    max_retry_s: float = 10.0


DEFAULT_TIMING = LinkTiming()


class SatelliteLink:
    def __init__(
        self,
        satellite: SatelliteConfig,
        bus: EventBus,
        *,
        on_audio: Callable[[bytes], None],
        on_audio_end: Callable[[], None],
        timing: LinkTiming = DEFAULT_TIMING,
    ) -> None:
        """`on_audio`: the microphone's audio as the ear takes it (16 kHz mono int16 bytes);
        `on_audio_end`: its stream ended (audio-stop, or the satellite went away)."""
        self.satellite = satellite
        self._bus = bus
        self._on_audio = on_audio
        self._on_audio_end = on_audio_end
        self._timing = timing
        self._outgoing: asyncio.Queue[WyomingEvent] = asyncio.Queue(maxsize=OUTGOING_LIMIT)
        self._to_ear = AudioChunkConverter(rate=EAR_RATE, width=2, channels=1)
        self._played = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.connected = False
        self._came_up = False  # in this connection
        self.software = ""  # from its `info`
        self.streaming = False  # it sent `run-pipeline` and streams its microphone

    async def __aenter__(self) -> SatelliteLink:
        self._task = asyncio.create_task(self._keep_up(), name=f"satellite-{self.satellite.name}")
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._task is not None:
            await cancel_and_wait([self._task])
            self._task = None

    def send(self, event: WyomingEvent) -> bool:
        """Queue `event` for the satellite; False (dropped) while it is not connected."""
        if not self.connected:
            return False
        try:
            self._outgoing.put_nowait(event)
        except asyncio.QueueFull:
            _LOGGER.warning("satellite %s: %s dropped, it reads too slowly", self.satellite.name, event.type)
            return False
        return True

    async def played(self, timeout_s: float) -> bool:
        """Wait up to `timeout_s` for the satellite to say it played our audio (newer satellites
        do; 1.0.0 says nothing and the wait runs out). True when it said so."""
        try:
            await asyncio.wait_for(self._played.wait(), timeout_s)
        except TimeoutError:
            return False
        return True

    def expect_played(self) -> None:
        """A reply starts: a `played` from before is not its."""
        self._played.clear()

    async def _keep_up(self) -> None:
        name, room = self.satellite.name, self.satellite.room
        retry_s = self._timing.first_retry_s
        failures = 0
        while True:
            self._came_up = False
            try:
                await self._session()
                reason = "it closed the connection"
            except WIRE_ERRORS as error:
                reason = str(error) or type(error).__name__
            except Exception as error:  # a bug of ours: said with its traceback, and tried again
                _LOGGER.exception("satellite %s: the link failed", name)
                reason = f"{type(error).__name__}: {error}"
            was_connected = self._came_up
            if was_connected:
                retry_s, failures = self._timing.first_retry_s, 0
                _LOGGER.warning("satellite %s (%s) disconnected: %s", name, room, reason)
            else:
                failures += 1
                level = logging.WARNING if failures == 1 else logging.DEBUG
                _LOGGER.log(level, "satellite %s at %s not reached: %s", name, self.satellite.uri, reason)
            if was_connected or failures == 1:
                gone = SatelliteDisconnected(satellite=name, room=room, reason=reason, retry_s=retry_s)
                self._bus.publish(gone)
            await asyncio.sleep(retry_s)
            retry_s = min(retry_s * 2, self._timing.max_retry_s)

    async def _session(self) -> None:
        """One connection, until the satellite goes away (SatelliteGone, or the socket's error)."""
        host, port = self.satellite.host_port
        client = AsyncTcpClient(host, port)
        await within(client.connect(), self._timing.connect_s, "connect")
        try:
            await client.write_event(Describe().event())
            info = await within(read_info(client), self._timing.describe_s, "describe")
            await client.write_event(RunSatellite().event())
            self._up(info)
            reader = asyncio.create_task(self._read(client), name=f"satellite-{self.satellite.name}-read")
            writer = asyncio.create_task(self._write(client), name=f"satellite-{self.satellite.name}-write")
            try:
                done, _pending = await asyncio.wait({reader, writer}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                await cancel_and_wait([reader, writer])
            for task in done:
                task.result()  # the reason it ended
        finally:
            self.connected = self.streaming = False
            self._drain_outgoing()
            self._on_audio_end()  # an utterance cut off by the disconnection ends here
            with contextlib.suppress(OSError):
                await client.disconnect()

    def _up(self, info: Info) -> None:
        self.software = software_of(info)
        self.connected = self._came_up = True
        self._played.set()  # nothing is playing yet
        _LOGGER.info(
            "satellite %s (%s) connected at %s%s; %s%s",
            self.satellite.name,
            self.satellite.room,
            self.satellite.uri,
            f": {self.software}" if self.software else "",
            ECHO_MODES[self.satellite.echo],
            f"; wake word {self.satellite.wake_word} heard by voiced" if self.satellite.wake_word else "",
        )
        self._bus.publish(
            SatelliteConnected(
                satellite=self.satellite.name,
                room=self.satellite.room,
                uri=self.satellite.uri,
                software=self.software,
            )
        )

    async def _read(self, client: AsyncTcpClient) -> None:
        while (event := await client.read_event()) is not None:
            if AudioChunk.is_type(event.type):
                self._on_audio(self._to_ear.convert(AudioChunk.from_event(event)).audio)
            elif AudioStop.is_type(event.type):
                self._on_audio_end()
            elif RunPipeline.is_type(event.type):
                self.streaming = True
                stage = RunPipeline.from_event(event).start_stage
                _LOGGER.debug("satellite %s runs a pipeline from %s", self.satellite.name, stage)
            elif Played.is_type(event.type):
                self._played.set()
            elif Ping.is_type(event.type):
                self.send(Pong(text=Ping.from_event(event).text).event())
            else:
                _LOGGER.debug("satellite %s sent %s", self.satellite.name, event.type)
        raise SatelliteGone("it closed the connection")

    async def _write(self, client: AsyncTcpClient) -> None:
        while True:
            event = await self._outgoing.get()
            await client.write_event(event)

    def _drain_outgoing(self) -> None:
        while not self._outgoing.empty():
            self._outgoing.get_nowait()
