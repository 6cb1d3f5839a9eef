"""Evidence on speech over our reply, for the barge-in lane: how much of it our own echo does not
explain (numpy in a thread of its own, never behind Whisper or piper) and, unless that settles it,
its words (the ASR queue, at barge-in priority). The ear hands it frames and says when to look."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from voiced.ear.bargein import Evidence
from voiced.ear.frontend import FrameClassifier
from voiced.ear.segmenter import SegmenterSettings
from voiced.ear.utterance import BargeInHooks, Heard, NoHooks
from voiced.tasks import cancel_and_wait


class Transcribe(Protocol):
    """The ear's transcription: a task on the ASR queue; cancelling it withdraws the job."""

    def __call__(
        self, audio: bytes, *, early: bool, urgent: bool = False, glance: bool = False
    ) -> asyncio.Task[Heard]: ...


class OverReplyEvidence:
    def __init__(
        self,
        front: FrameClassifier,
        transcribe: Transcribe,
        settings: SegmenterSettings,
        *,
        echo_db: float,
        over_reply_pause_ms: int,
    ) -> None:
        """`echo_db`: a share our echo leaves at most this unexplained is our echo, words unheard.
        `over_reply_pause_ms`: the pause that speech over our reply waits for (0: the usual)."""
        self.hooks: BargeInHooks = NoHooks()
        self._front = front
        self._transcribe = transcribe
        self._echo_db = echo_db
        self._frame_ms = frame_ms = settings.frame_ms
        # Judge speech by the frames since it began: the pre-roll before it is only our echo.
        self._onset_frames = max(1, settings.onset_ms // frame_ms)
        # Speech over our reply waits longer for its pause: its words there decide whether the reply
        # stops, and "please turn on the kit-" cut at a 60 ms gap would be judged without the rest.
        self._pause_frames = max(1, over_reply_pause_ms // frame_ms) if over_reply_pause_ms else 0
        self._goes_on_frames = max(1, 1000 // frame_ms)  # looks as the voice goes on: its first second
        self._checks: set[asyncio.Task[None]] = set()
        self._checker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="echo-check")
        # The microphone as it was, frame for frame beside what the segmenter keeps.
        most = settings.max_utterance_ms + settings.pre_roll_ms + settings.onset_ms
        self._raw: deque[bytes] = deque(maxlen=settings.frames(most) + 1)

    def keep(self, frame: bytes) -> None:
        self._raw.append(frame)

    def frames_in(self, audio: bytes) -> int:
        return len(audio) // len(self._raw[-1])

    def onset(self, turn: int) -> None:
        """Speech just began over our reply. The onset frames as the echo path judged them: the
        floor may pause now, with no thread to wait for (a hop of 60 ms, and 0.4 s on a busy CPU);
        the fit on the snippet itself follows, and may still find it our echo."""
        judged = self._front.judged_share(self._onset_frames)
        if judged is not None:
            self.hooks.acoustics(turn, judged)
        job = self._front.echo_check(self._onset_frames + 2)
        self._watch(turn, self._onset_check(turn, job))

    def goes_on(self, turn: int, frames_heard: int) -> None:
        """The voice over our reply goes on: its last frames as the echo path judged them (no work
        left), in its first second."""
        judged = self._front.judged_share(self._onset_frames)
        if judged is not None and frames_heard < self._goes_on_frames:
            self.hooks.acoustics(turn, judged, goes_on=True)

    def early(self, turn: int, frames: int, cleaned: bytes, frames_heard: int) -> asyncio.Task[Evidence]:
        """Evidence on speech over our reply still going on, `frames_heard` frames of it."""
        return self.gather(turn, frames, cleaned, speech_frames=self._onset_frames + frames_heard)

    def paused(
        self, turn: int, audio: bytes, frames_heard: int, glance: asyncio.Task[Heard]
    ) -> asyncio.Task[Evidence]:
        """Evidence on a short burst over our reply that just paused: "stop" is decided now, not
        after the hangover, on a quick look at its words (`glance`; the full transcript is the
        turn's)."""
        voiced = max(1, self._onset_frames + frames_heard - self._pause_frames)
        frames = self.frames_in(audio)
        return self.gather(
            turn, frames, audio, speech_frames=voiced, skip=self._pause_frames, short=True, words=glance
        )

    def gather(
        self,
        turn: int,
        frames: int,
        cleaned: bytes,
        *,
        speech_frames: int,
        skip: int = 0,
        short: bool = False,
        words: asyncio.Task[Heard] | None = None,
    ) -> asyncio.Task[Evidence]:
        """Evidence on speech over our reply: `frames` for the words, `speech_frames` (ending
        `skip` frames ago) for the acoustics: the voice itself, without pre-roll or hangover.
        `words`: a transcript of `cleaned` already running (Whisper is the costliest part)."""
        raw = b"".join(list(self._raw)[-frames:])
        job = self._front.echo_check(speech_frames, skip)

        async def gather() -> Evidence:
            share = await self._echo_share(job)
            self.hooks.acoustics(turn, share)  # the floor hears the acoustics before the words
            if share is not None and share <= self._echo_db:
                return Evidence("", "", share, short)  # our echo through and through: no need for words
            # Acoustically not our echo: only the words' kind is wanted, and a quick look tells it.
            quick = share is not None
            text = (await (words or self._transcribe(cleaned, early=True, urgent=True, glance=quick))).text
            raw_text = (
                "" if share is not None else (await self._transcribe(raw, early=True, urgent=True)).text
            )
            return Evidence(text, raw_text, share, short)

        return asyncio.create_task(gather(), name=f"over-reply-evidence-{turn}")

    def closing(
        self,
        turn: int,
        audio: bytes,
        trailing_silence_ms: int,
        *,
        frames_heard: int,
        words: asyncio.Task[Heard] | None,
        short: bool,
    ) -> asyncio.Task[Evidence]:
        """Evidence on an utterance over our reply that has just closed, `trailing_silence_ms` ago,
        after `frames_heard` frames of speech."""
        trailing = trailing_silence_ms // self._frame_ms
        voiced = max(1, self._onset_frames + frames_heard - trailing)
        return self.gather(
            turn, self.frames_in(audio), audio, speech_frames=voiced, skip=trailing, short=short, words=words
        )

    async def stop_checks(self) -> None:
        await cancel_and_wait(list(self._checks))

    def shutdown(self) -> None:
        self._checker.shutdown(wait=False, cancel_futures=True)

    def _watch(self, turn: int, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work, name=f"ear-check-{turn}")
        self._checks.add(task)
        task.add_done_callback(self._checks.discard)

    async def _onset_check(self, turn: int, job: Callable[[], float | None]) -> None:
        """Speech just began over our reply: how much of it does our echo not explain?"""
        self.hooks.acoustics(turn, await self._echo_share(job))

    async def _echo_share(self, job: Callable[[], float | None]) -> float | None:
        return await asyncio.get_running_loop().run_in_executor(self._checker, job)
