"""An utterance sent to a Wyoming ASR server while it is spoken.

The ear calls `begin` when speech starts (with the pre-roll), `feed` with every frame after it and
`end` when the utterance is over or dropped; none of them blocks. A loop of its own thread keeps one
connection per utterance: Transcribe and AudioStart at once, an AudioChunk per frame as it comes.
The first transcription of that utterance (the early ASR at the first pause) `take`s the session:
it sends what the server has not had yet, AudioStop, and waits for the Transcript, so only the last
few frames travel after the pause. Later transcriptions of the same utterance (speech went on) are
whole exchanges, as faster-whisper's server transcribes only at AudioStop.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import Future

from voiced.audio.pcm import EAR_RATE
from voiced.wyoming_link import within

_LOGGER = logging.getLogger(__name__)


class Session:
    def __init__(self, audio: bytes) -> None:
        self.sent = bytearray(audio)  # what the server has had or will have, in order
        self.transcript: Future[str] = Future()
        self._queue: asyncio.Queue[bytes | None] | None = None
        self.task: asyncio.Task[None] | None = None

    def start(self, stream: SpokenStream, first: bytes) -> None:  # on the stream's loop
        self._queue = asyncio.Queue()
        self._queue.put_nowait(first)
        self.task = asyncio.get_running_loop().create_task(stream.run(self), name="wyoming-asr-session")

    def push(self, item: bytes | None) -> None:  # on the stream's loop; None: AudioStop
        if self._queue is not None:
            self._queue.put_nowait(item)

    async def next(self) -> bytes | None:
        assert self._queue is not None
        return await self._queue.get()


class SpokenStream:
    def __init__(self, host: str, port: int, *, language: str, connect_s: float) -> None:
        self._host, self._port, self._language, self._connect_s = host, port, language, connect_s
        self._lock = threading.Lock()
        self._session: Session | None = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="wyoming-asr-stream", daemon=True)
        self._thread.start()

    # -- the ear's side (its event loop; nothing here waits) --------------------------------------

    def begin(self, audio: bytes) -> None:
        self.end()
        session = Session(audio)
        with self._lock:
            self._session = session
        self._loop.call_soon_threadsafe(session.start, self, audio)

    def feed(self, frame: bytes) -> None:
        with self._lock:
            session = self._session
            if session is None:
                return
            session.sent += frame
        self._loop.call_soon_threadsafe(session.push, frame)

    def end(self) -> None:
        """The utterance is over or dropped: a session nobody took is closed."""
        with self._lock:
            session, self._session = self._session, None
        if session is not None:
            self._loop.call_soon_threadsafe(self._cancel, session)

    # -- the transcriber's side (a worker thread) ----------------------------------------------------

    def take(self, audio: bytes) -> Future[str] | None:
        """The open session's transcript of `audio`, if the session holds `audio` (or a little more
        of the same, the frames of the pause); None when there is none to use."""
        with self._lock:
            session, self._session = self._session, None
            sent = bytes(session.sent) if session is not None else b""
        if session is None:
            return None
        if not (audio.startswith(sent) or sent.startswith(audio)):
            self._loop.call_soon_threadsafe(self._cancel, session)
            return None
        tail = audio[len(sent) :] if len(audio) > len(sent) else b""
        if tail:
            self._loop.call_soon_threadsafe(session.push, tail)
        self._loop.call_soon_threadsafe(session.push, None)
        return session.transcript

    def close(self) -> None:
        self.end()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)

    # -- the stream's loop -----------------------------------------------------------------------------

    @staticmethod
    def _cancel(session: Session) -> None:
        if session.task is not None:
            session.task.cancel()

    async def run(self, session: Session) -> None:
        from wyoming.asr import Transcribe, Transcript
        from wyoming.audio import AudioChunk, AudioStart, AudioStop
        from wyoming.client import AsyncTcpClient

        client = AsyncTcpClient(self._host, self._port)
        try:
            await within(client.connect(), self._connect_s, "not connected")
            await client.write_event(Transcribe(language=self._language).event())
            await client.write_event(AudioStart(rate=EAR_RATE, width=2, channels=1).event())
            while (audio := await session.next()) is not None:
                await client.write_event(AudioChunk(rate=EAR_RATE, width=2, channels=1, audio=audio).event())
            await client.write_event(AudioStop().event())
            while True:
                event = await client.read_event()
                if event is None:
                    raise ConnectionError("the server closed the connection before its transcript")
                if Transcript.is_type(event.type):
                    session.transcript.set_result(Transcript.from_event(event).text.strip())
                    return
        except (OSError, TimeoutError, ConnectionError, EOFError) as exc:
            if not session.transcript.done():
                session.transcript.set_exception(exc)
        finally:
            if not session.transcript.done():
                session.transcript.cancel()  # dropped before anyone asked for it
            try:
                await client.disconnect()
            except (OSError, ConnectionError):
                _LOGGER.debug("the stream's connection was already gone")
