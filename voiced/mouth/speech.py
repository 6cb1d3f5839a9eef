"""Speech out: streamed text is cut into sentences; sentence n+1 is synthesized while n plays.

Playback goes out in short slices so a barge-in silences it within one slice, and the
progress object always knows how much of the reply the user has actually heard. A reply can be
paused (silent at once, its place kept) and resumed; whoever follows the floor is told, at once
and in order, when each reply becomes audible and when it ends (`follow`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections import deque
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field

import numpy as np

from voiced.audio.pcm import resample_band_limited
from voiced.audio.sinks import AudioSink
from voiced.bus import EventBus
from voiced.events import AgentText, TtsStarted, TtsStopped
from voiced.mouth.foresight import Foresight
from voiced.mouth.rehearsal_file import RehearsalFile
from voiced.mouth.sentences import SentenceSplitter
from voiced.mouth.synthesizer import Synthesizer
from voiced.tasks import cancel_and_wait

_LOGGER = logging.getLogger(__name__)
VOICE_CACHE = 128  # sentences; a few seconds of 16-bit audio each, a few MB in all
KEPT_LIMIT = 400  # rehearsed replies kept for good (~60-110 KB each)
SLICE_S = 0.04  # one audio block: the longest a stop can lag


@dataclass
class SpeechProgress:
    """What of a reply reached the user's ears."""

    played: list[str] = field(default_factory=list)
    current: str = ""
    current_fraction: float = 0.0

    @property
    def text(self) -> str:
        words = self.current.split()
        partial = " ".join(words[: int(len(words) * self.current_fraction)])
        return " ".join([*self.played, partial]).strip()


async def _once(text: str) -> AsyncGenerator[str, None]:
    yield text


class Rehearsed:
    """Replies synthesized ahead of time, at the synthesizer's own rate: one store for every
    speaker of the home (each resamples what it plays). Thread-safe enough: a sentence is written
    once, whole, before it is read."""

    def __init__(self, kept: RehearsalFile | None = None) -> None:
        """`kept`: where replies outlive the process (`restore` reads them back)."""
        self._voices: dict[str, np.ndarray] = {}
        self._kept = kept

    def restore(self) -> int:
        """The replies an earlier run kept (blocking); how many."""
        if self._kept is not None:
            for sentence, audio in self._kept.open().items():
                if len(self._voices) < KEPT_LIMIT:
                    self._voices.setdefault(sentence, audio)
        return len(self._voices)

    def __len__(self) -> int:
        return len(self._voices)

    def close(self) -> None:
        if self._kept is not None:
            self._kept.close()

    def get(self, sentence: str) -> np.ndarray | None:
        return self._voices.get(sentence)

    def keep(self, sentence: str, synthesize: Callable[[str], np.ndarray]) -> bool:
        if sentence in self._voices or len(self._voices) >= KEPT_LIMIT:
            return False
        self._voices[sentence] = audio = synthesize(sentence)
        if self._kept is not None:
            self._kept.save(sentence, audio)
        return True


class SpeechOutput:
    def __init__(
        self,
        synthesizer: Synthesizer,
        sink: AudioSink,
        bus: EventBus,
        *,
        sentence_silence_s: float,
        output_rate: int | None = None,
        rehearsed: Rehearsed | None = None,
        room: str = "",
        foresight: Foresight | None = None,
    ) -> None:
        """`output_rate`: resample the voice to this rate (the echo canceller's) before playing.
        `rehearsed`: replies synthesized ahead of time, shared with the home's other speakers (a
        satellite's room plays the daemon's rehearsed replies; a new store when None). `room`: where
        it plays (audio.room, or a satellite's room), named by its events. `foresight`: replies
        synthesized while the ear waits for the turn's end (kept in `rehearsed` once said)."""
        self._room = room
        self._synthesizer = synthesizer
        self._sink = sink
        self._bus = bus
        self._rate = output_rate or synthesizer.sample_rate
        self._gap = np.zeros(int(sentence_silence_s * self._rate), dtype=np.int16)
        self._recent: deque[str] = deque(maxlen=6)
        self._now_playing = ""
        self._one_voice = asyncio.Lock()  # a narration and a reply never talk over each other
        self._asides: dict[asyncio.Task[SpeechProgress], int] = {}  # speech outside a turn -> its turn
        self.speaking = False
        self.started_turn = 0  # the last turn whose reply became audible
        self.reply_id = 0  # counts the replies (and narrations) that became audible
        self.paused = False
        self._followers: list[Callable[[int, bool], None]] = []
        # Replies repeat ("Turning on the kitchen light."): their audio is kept, so the first
        # sentence of a familiar reply plays without waiting for piper. Thread-safe, bounded.
        self._recalled = functools.lru_cache(maxsize=VOICE_CACHE)(self._synthesized)
        # ahead of time (`keep`): never evicted
        self.rehearsed = Rehearsed() if rehearsed is None else rehearsed
        self._foresight = foresight

    @property
    def recently_spoken(self) -> str:
        """The sentences just played and the one playing: what our echo may sound like."""
        return " ".join([*self._recent, self._now_playing])

    def follow(self, callback: Callable[[int, bool], None]) -> None:
        """`callback(reply_id, audible)` as each reply becomes audible (True) and ends (False)."""
        self._followers.append(callback)

    def _tell(self, audible: bool) -> None:
        for callback in self._followers:
            callback(self.reply_id, audible)

    def pause(self) -> None:
        """Silent at once, the place kept (speech over the reply is being judged)."""
        if self.speaking and not self.paused:
            self.paused = True
            self._sink.pause()

    def resume(self) -> None:
        if self.paused:
            self.paused = False
            self._sink.resume()

    def silence_now(self) -> None:
        """Drop whatever the device still holds (barge-in); the turn's task is cancelled separately."""
        self.paused = False
        self._sink.abort()

    async def speak(self, turn: int, text: str) -> SpeechProgress:
        progress = SpeechProgress()
        await self.say(turn, _once(text), progress)
        return progress

    async def speak_aside(self, turn: int, text: str) -> bool:
        """Speech outside any turn (narration, news): a barge-in cuts it as it cuts a reply.

        It plays in a task of its own, so cutting it never cancels the caller (a scene that is
        done but for its closing line). True: it was said whole."""
        aside = asyncio.create_task(self.speak(turn, text), name=f"aside-turn-{turn}")
        self._asides[aside] = turn
        try:
            await asyncio.wait([aside])
        finally:
            try:
                if not aside.done():  # the caller was cancelled: so is its line
                    await cancel_and_wait([aside])
            finally:
                self._asides.pop(aside, None)
        if aside.cancelled():
            return False
        aside.result()  # its own failure (a lost speaker) is the caller's to handle
        return True

    def cut_asides(self) -> int | None:
        """Silence speech outside a turn (barge-in); the turn it was spoken for, None if none was."""
        live = {
            task: turn for task, turn in self._asides.items() if not task.done() and not task.cancelling()
        }
        if not live:
            return None
        self.silence_now()
        for task in live:
            task.cancel()
        return max(live.values())

    async def say(
        self,
        turn: int,
        chunks: AsyncGenerator[str, None],
        progress: SpeechProgress,
        understood: Callable[[], bool] = lambda: True,
    ) -> None:
        """`understood`: asked as each sentence is published (the agent knows by then)."""
        async with self._one_voice:
            await self._say(turn, chunks, progress, understood)

    async def _say(
        self,
        turn: int,
        chunks: AsyncGenerator[str, None],
        progress: SpeechProgress,
        understood: Callable[[], bool],
    ) -> None:
        rate = self._rate
        ready: asyncio.Queue[tuple[str, np.ndarray] | Exception | None] = asyncio.Queue(maxsize=1)
        producer = asyncio.create_task(
            self._produce(turn, chunks, ready, understood), name=f"tts-turn-{turn}"
        )
        played_s = 0.0
        try:
            while (item := await ready.get()) is not None:
                if isinstance(item, Exception):
                    raise item
                sentence, samples = item
                if not self.speaking:
                    self._recent.clear()  # only this reply's words can come back as its echo
                    self.speaking = True
                    self.reply_id += 1
                    self._tell(True)
                    self._bus.publish(TtsStarted(turn=turn, room=self._room))
                    self.started_turn = turn
                elif len(self._gap):
                    await self._play(self._gap, rate)
                progress.current, progress.current_fraction = sentence, 0.0
                self._now_playing = sentence
                step = max(1, int(SLICE_S * rate))
                for offset in range(0, len(samples), step):
                    await self._play(samples[offset : offset + step], rate)
                    progress.current_fraction = min(1.0, (offset + step) / len(samples))
                    played_s += step / rate
                progress.played.append(sentence)
                progress.current, progress.current_fraction = "", 0.0
                self._recent.append(sentence)
            await self._sink.drain()
        finally:
            try:
                await cancel_and_wait([producer])
            finally:  # a second cancel may land while we wait: the reply has stopped all the same
                if self.paused:  # stopped while paused: what it held is not to be heard
                    self.silence_now()
                if self.speaking:
                    self.speaking = False
                    self._tell(False)
                    self._bus.publish(TtsStopped(turn=turn, audio_s=played_s, room=self._room))

    async def _play(self, samples: np.ndarray, rate: int) -> None:
        await self._sink.play(samples, rate)

    async def _produce(
        self,
        turn: int,
        chunks: AsyncGenerator[str, None],
        ready: asyncio.Queue[tuple[str, np.ndarray] | Exception | None],
        understood: Callable[[], bool],
    ) -> None:
        splitter = SentenceSplitter()
        try:
            async with contextlib.aclosing(chunks):
                async for chunk in chunks:
                    for sentence in splitter.feed(chunk):
                        await self._synthesize(turn, sentence, ready, understood())
            for sentence in splitter.flush():
                await self._synthesize(turn, sentence, ready, understood())
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            await ready.put(exc)
            return
        await ready.put(None)

    async def _synthesize(
        self,
        turn: int,
        sentence: str,
        ready: asyncio.Queue[tuple[str, np.ndarray] | Exception | None],
        understood: bool = True,
    ) -> None:
        self._bus.publish(AgentText(turn=turn, text=sentence, understood=understood, room=self._room))
        samples = await asyncio.to_thread(self._voice, sentence)
        await ready.put((sentence, samples))

    def _voice(self, sentence: str) -> np.ndarray:
        kept = self.rehearsed.get(sentence)
        if kept is None and self._foresight is not None:
            kept = self._foresight.take(sentence)  # piper may be saying it now: no second run
        if kept is None:
            return self._recalled(sentence)
        return resample_band_limited(kept, self._synthesizer.sample_rate, self._rate)  # ~3 ms

    def _synthesized(self, sentence: str) -> np.ndarray:
        samples = self._synthesizer.synthesize(sentence)
        return resample_band_limited(samples, self._synthesizer.sample_rate, self._rate)

    def keep(self, sentence: str) -> bool:
        """Synthesize a reply ahead of time and keep it (blocking: call it off the loop). False when
        it was kept already, or the room for kept replies is full."""
        return self.rehearsed.keep(sentence, self._synthesizer.synthesize)

    def warm(self, sentences: list[str]) -> None:
        for sentence in sentences:
            self.keep(sentence)

    @property
    def kept(self) -> int:
        """How many replies are ready ahead of time."""
        return len(self.rehearsed)
