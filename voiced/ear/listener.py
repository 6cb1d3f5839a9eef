"""The ear: audio frames → webrtcvad → segmenter → transcriber; utterances out, events on the bus.

ASR starts early: when the speaker pauses (`vad.early_asr_ms`), the audio so far is transcribed
while the hangover decides whether the utterance has really ended. If it has, that transcript
is used; if speech resumes, it is dropped. Whisper calls go through one queue, most urgent first
(`asr_queue.py`): deciding a barge-in never waits behind a guess.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from voiced.audio.pcm import EAR_RATE
from voiced.audio.sources import AudioSource
from voiced.bus import EventBus
from voiced.config import VadConfig
from voiced.ear.asr_queue import AsrQueue, Priority, Reconsider
from voiced.ear.bargein import Action, BargeInGuard, Evidence, GuardSettings
from voiced.ear.between import frames_or_done
from voiced.ear.end_of_turn import Pause, settings_for, silence_needed
from voiced.ear.frontend import FrameClassifier, PlainVad
from voiced.ear.segmenter import (
    Segmenter,
    SegmenterEvent,
    SegmenterSettings,
    UtteranceDiscarded,
    UtteranceEnded,
    UtterancePaused,
    UtteranceStarted,
)
from voiced.ear.transcriber import SpeechStream, Transcriber
from voiced.ear.utterance import BargeInHooks, Heard, NoHooks, Utterance
from voiced.ear.wake import WakeGate
from voiced.events import InputEnded, Ready, SpeechEnded, SpeechStarted
from voiced.tasks import cancel_and_wait

_LOGGER = logging.getLogger(__name__)


def settings_from(config: VadConfig) -> SegmenterSettings:
    return SegmenterSettings(
        frame_ms=config.frame_ms,
        pre_roll_ms=config.pre_roll_ms,
        onset_ms=config.onset_ms,
        hangover_ms=config.hangover_ms,
        min_speech_ms=config.min_speech_ms,
        max_utterance_ms=int(config.max_utterance_s * 1000),
        pause_ms=config.early_asr_ms,
        complete_ms=config.complete_hangover_ms,
    )


class Ear:
    def __init__(
        self,
        source: AudioSource,
        config: VadConfig,
        transcriber: Transcriber,
        bus: EventBus,
        *,
        front: FrameClassifier | None = None,
        is_playing: Callable[[], bool] = lambda: False,
        guard: GuardSettings | None = None,
        echo_db: float = -10.0,
        is_deaf: Callable[[], bool] = lambda: False,
        judge: Callable[[Heard], Pause] | None = None,
        wake: WakeGate | None = None,
        stream: SpeechStream | None = None,
        reconsider: Reconsider | None = None,
        first_turn: int = 0,
        tidy: Callable[[], None] | None = None,
    ) -> None:
        """`first_turn`: turns are numbered after it (a satellite's room keeps its own range).
        `reconsider`: a second ear for turns whose words would not be acted on. `judge`:
        what the words heard at a pause are (a whole request may end the turn sooner, see
        end_of_turn.py); None: every turn waits the full hangover. `wake`: speech needs the wake word
        (or the conversation it opened) to become a turn; None: always listening. `stream`: gets
        each utterance's audio as it is spoken (a remote ASR server). `tidy`: after each Whisper
        job (asr_queue.py)."""
        self._source = source
        self._stream = stream
        self._wake = wake
        self._judge = judge
        self._end_of_turn = settings_for(config.complete_hangover_ms, config.hangover_ms)
        self._pauses: list[Pause] = []  # what was heard at this utterance's pauses
        self._judged: asyncio.Task[Heard] | None = None  # the early transcript already judged
        self._asr = AsrQueue(transcriber, reconsider, tidy)
        self._early: asyncio.Task[Heard] | None = None
        self._config = config
        self._bus = bus
        self._is_deaf = is_deaf
        self._front = front or PlainVad(config.aggressiveness)
        self._is_playing = is_playing
        self._echo_db = echo_db
        # Judge speech by the frames since it began: the pre-roll before it is only our echo.
        self._onset_frames = max(1, config.onset_ms // config.frame_ms)
        # Speech over our reply waits longer for its pause: its words there decide whether the reply
        # stops, and "please turn on the kit-" cut at a 60 ms gap would be judged without the rest.
        over_ms = config.early_asr_over_reply_ms
        self._pause_frames = max(1, over_ms // config.frame_ms) if over_ms else 0
        self._goes_on_frames = max(1, 1000 // config.frame_ms)  # looks as the voice goes on: its first second
        self._checks: set[asyncio.Task[None]] = set()
        # Echo checks (milliseconds of numpy) in a thread of their own: never behind Whisper or piper.
        self._checker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="echo-check")
        self._hooks: BargeInHooks = NoHooks()
        self._guard = BargeInGuard(guard or GuardSettings(frame_ms=config.frame_ms))
        settings = settings_from(config)
        self._segmenter = Segmenter(settings)
        # The microphone as it was, frame for frame beside what the segmenter keeps.
        self._raw: deque[bytes] = deque(
            maxlen=settings.frames(settings.max_utterance_ms + settings.pre_roll_ms + settings.onset_ms) + 1
        )
        self._turn = first_turn

    async def run(self, deliver: Callable[[Utterance], None], hooks: BargeInHooks | None = None) -> None:
        """Listen until the source ends; each finished utterance is handed to `deliver`."""
        self._hooks = hooks or NoHooks()
        asr = asyncio.create_task(self._asr.run(), name="asr")
        try:
            await self._hear(deliver)
            await self._asr.drain()  # the last utterance's words still count
        finally:
            await cancel_and_wait([asr])
            self._checker.shutdown(wait=False, cancel_futures=True)

    async def _hear(self, deliver: Callable[[Utterance], None]) -> None:
        ready = False
        async for frame in frames_or_done(self._source.frames(self._config.frame_ms), self._unjudged):
            if frame is None:  # the early transcript came in between two frames: judged now
                self._between(self._end_by_meaning(), deliver)
                continue
            if not ready:  # models are loaded and audio is flowing: now we are listening
                self._bus.publish(Ready())
                ready = True
            if self._is_deaf():
                self._abandon()
                self._segmenter.reset()
                if self._stream is not None:
                    self._stream.end()
                continue
            kept, user_speech = self._front.classify(frame)
            self._raw.append(frame)
            if self._segmenter.in_speech and self._guard.active and user_speech:
                # As the voice goes on, its last frames as the echo path judged them (no work left).
                judged = self._front.judged_share(self._onset_frames)
                if judged is not None and self._guard.frames_heard < self._goes_on_frames:
                    self._hooks.acoustics(self._turn, judged, goes_on=True)
            if self._segmenter.in_speech and self._guard.frame(user_speech=user_speech) is Action.CHECK_EARLY:
                count = self._segmenter.frame_count + 1
                voiced = self._onset_frames + self._guard.frames_heard
                evidence = self._gather(count, self._segmenter.audio_so_far() + kept, speech_frames=voiced)
                self._hooks.words(self._turn, evidence, "early")
            events = self._segmenter.process(kept, user_speech) + self._end_by_meaning()
            if self._wake is not None:
                events = self._wake.admit(kept, events, self._restart)
            if self._stream is not None:
                self._follow(self._stream, events, kept)
            for event in events:
                self._on_event(event, deliver)
            # A backlog of frames is there without waiting: let the barge-in lane and the
            # speaker run between them, or catching up would hold everything else back.
            await asyncio.sleep(0)
        for event in self._segmenter.flush():
            self._on_event(event, deliver)
        self._drop_early()
        for task in list(self._checks):
            task.cancel()
        self._bus.publish(InputEnded())

    def _unjudged(self) -> asyncio.Task[Heard] | None:
        """The early transcript the end of the turn waits on, while it runs (not over our reply,
        where the barge-in checks decide: frame by frame, as they always did)."""
        early = self._early
        waits = self._judge is not None and early is not self._judged and not self._guard.active
        return early if waits else None

    def _between(self, events: list[SegmenterEvent], deliver: Callable[[Utterance], None]) -> None:
        """Events decided between frames (the turn ended by its words): as a frame's would be."""
        if self._wake is not None:
            events = self._wake.admitted(events)
        if self._stream is not None and events:
            self._stream.end()
        for event in events:
            self._on_event(event, deliver)

    def _follow(self, stream: SpeechStream, events: list[SegmenterEvent], frame: bytes) -> None:
        if any(isinstance(e, UtteranceStarted) for e in events):
            stream.begin(self._segmenter.audio_so_far())
        elif self._segmenter.in_speech:
            stream.feed(frame)
        if any(isinstance(e, (UtteranceEnded, UtteranceDiscarded)) for e in events):
            stream.end()

    def _restart(self, lookback: list[bytes]) -> None:
        """The wake word was heard: drop the utterance in progress; what follows starts a new one,
        with `lookback` (the frames just before) as its pre-roll."""
        self._abandon()
        self._segmenter.reset()
        self._drop_early()
        for frame in lookback:
            self._segmenter.process(frame, False)

    def _abandon(self) -> None:
        """An utterance over our reply is given up unheard: the floor must not wait for its words."""
        if self._guard.active:
            self._guard.dropped()
            self._hooks.abandoned(self._turn)

    def _end_by_meaning(self) -> list[SegmenterEvent]:
        """The early transcript at this pause is in and a whole request: end the turn now, if the
        silence heard so far is enough (checked at each frame, and as the transcript comes in)."""
        early = self._early
        if self._judge is None or early is None or not early.done() or early is self._judged:
            return []
        self._judged = early
        if early.cancelled() or early.exception() is not None or self._guard.active:
            return []  # over our reply the barge-in checks decide, at their own pace
        self._pauses.append(self._judge(early.result()))
        needed = silence_needed(self._pauses, self._end_of_turn)
        _LOGGER.debug(
            "end of turn: %r at a pause, %s: %d ms of silence", early.result().text, self._pauses[-1], needed
        )
        return self._segmenter.commit(needed) if needed < self._config.hangover_ms else []

    def _watch(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work, name=f"ear-check-{self._turn}")
        self._checks.add(task)
        task.add_done_callback(self._checks.discard)

    async def _onset_check(self, turn: int, job: Callable[[], float | None]) -> None:
        """Speech just began over our reply: how much of it does our echo not explain?"""
        self._hooks.acoustics(turn, await self._echo_share(job))

    async def _echo_share(self, job: Callable[[], float | None]) -> float | None:
        return await asyncio.get_running_loop().run_in_executor(self._checker, job)

    def _raw_tail(self, frames: int) -> bytes:
        return b"".join(list(self._raw)[-frames:])

    def _gather(
        self,
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
        raw = self._raw_tail(frames)
        job = self._front.echo_check(speech_frames, skip)
        turn = self._turn

        async def gather() -> Evidence:
            share = await self._echo_share(job)
            self._hooks.acoustics(turn, share)  # the floor hears the acoustics before the words
            if share is not None and share <= self._echo_db:
                return Evidence("", "", share, short)  # our echo through and through: no need for words
            # Acoustically not our echo: only the words' kind is wanted, and a quick look tells it.
            quick = share is not None
            text = (await (words or self._transcribe(cleaned, early=True, urgent=True, glance=quick))).text
            raw_text = (
                "" if share is not None else (await self._transcribe(raw, early=True, urgent=True)).text
            )
            return Evidence(text, raw_text, share, short)

        return asyncio.create_task(gather(), name=f"over-reply-evidence-{self._turn}")

    def _closing_evidence(
        self, audio: bytes, trailing_silence_ms: int, *, words: asyncio.Task[Heard] | None, short: bool
    ) -> asyncio.Task[Evidence]:
        """Evidence on an utterance over our reply that has just closed, `trailing_silence_ms` ago."""
        trailing = trailing_silence_ms // self._config.frame_ms
        voiced = max(1, self._onset_frames + self._guard.frames_heard - trailing)
        return self._gather(
            len(audio) // len(self._raw[-1]),
            audio,
            speech_frames=voiced,
            skip=trailing,
            short=short,
            words=words,
        )

    def drop(self, turn: int) -> None:
        """Forget the utterance in progress if it is `turn` (it was found to be our own echo)."""
        if turn == self._turn and self._segmenter.in_speech:
            self._segmenter.reset()
            self._guard.dropped()
            self._drop_early()
            _LOGGER.debug("turn %d: dropped an utterance that was our own echo", turn)
        else:
            _LOGGER.debug(
                "turn %d: not dropped (now turn %d, in speech %s)",
                turn,
                self._turn,
                self._segmenter.in_speech,
            )

    def _transcribe(
        self, audio: bytes, *, early: bool, urgent: bool = False, glance: bool = False
    ) -> asyncio.Task[Heard]:
        """`urgent`: it decides whether to stop our reply; `glance`: only for that (a quick look,
        never a turn's text). Cancelling the task withdraws the job."""
        priority = Priority.BARGE_IN if urgent else Priority.SPECULATIVE if early else Priority.UTTERANCE
        job = self._asr.submit(np.frombuffer(audio, dtype=np.int16), priority, glance=glance)

        async def heard() -> Heard:
            hearing, took_s = await job
            return Heard(
                hearing.text, took_s, early, hearing.confidence, hearing.doubtful, hearing.alternatives
            )

        return asyncio.create_task(heard(), name=f"asr-turn-{self._turn}")

    def _drop_early(self) -> None:
        if self._early is not None:
            self._early.cancel()  # the thread finishes on its own; its result is ignored
            self._early = None

    def _on_event(
        self,
        event: SegmenterEvent,
        deliver: Callable[[Utterance], None],
    ) -> None:
        now = time.monotonic()
        _LOGGER.debug("turn %d: %s", self._turn, type(event).__name__)
        if isinstance(event, UtteranceStarted):
            self._turn += 1
            self._pauses = []
            playing = self._is_playing()
            self._bus.publish(SpeechStarted(turn=self._turn, over_reply=playing))
            if playing:
                self._segmenter.pause_after(self._config.early_asr_over_reply_ms, short_too=True)
            if self._guard.started(playing=playing) is Action.OVER_REPLY:
                self._hooks.voice_over(self._turn)
                # The onset frames as the echo path judged them: the floor may pause now, with no
                # thread to wait for (a hop of 60 ms, and 0.4 s on a busy CPU); the fit on the
                # snippet itself follows, and may still find it our echo.
                judged = self._front.judged_share(self._onset_frames)
                if judged is not None:
                    self._hooks.acoustics(self._turn, judged)
                job = self._front.echo_check(self._onset_frames + 2)
                self._watch(self._onset_check(self._turn, job))
        elif isinstance(event, UtterancePaused):
            self._drop_early()
            glance = None
            if self._guard.active and self._guard.short:  # queued first: it decides
                glance = self._transcribe(event.audio, early=True, urgent=True, glance=True)
            self._early = self._transcribe(event.audio, early=True, urgent=self._guard.active)
            if glance is not None:
                # A short burst over our reply just paused: "stop" is decided now, not after the
                # hangover, on a quick look at its words (the full transcript is the turn's).
                frames = len(event.audio) // len(self._raw[-1])
                voiced = max(1, self._onset_frames + self._guard.frames_heard - self._pause_frames)
                evidence = self._gather(
                    frames,
                    event.audio,
                    speech_frames=voiced,
                    skip=self._pause_frames,
                    short=True,
                    words=glance,
                )
                self._hooks.words(self._turn, evidence, "paused")
        elif isinstance(event, UtteranceDiscarded):
            self._drop_early()  # too short for a turn: its transcript is not wanted
            _LOGGER.debug("discarded %d ms of speech-like noise", event.speech_ms)
            if self._guard.ended() is Action.CHECK:
                # Over our reply a "stop" can be this short (the echo gate passes only part of
                # it): its words decide, at a glance. The verdict stops the reply or lets it go
                # on; it never starts a turn.
                evidence = self._closing_evidence(
                    event.audio, event.trailing_silence_ms, words=None, short=True
                )
                self._hooks.words(self._turn, evidence, "final")
        else:
            voice_end_t = now - event.trailing_silence_ms / 1000
            samples = np.frombuffer(event.audio, dtype=np.int16)
            self._bus.publish(
                SpeechEnded(turn=self._turn, duration_s=len(samples) / EAR_RATE, voice_end_t=voice_end_t)
            )
            if event.reason in ("silence", "complete") and self._early is not None:
                transcript, self._early = self._early, None
            else:
                self._drop_early()
                transcript = self._transcribe(event.audio, early=False, urgent=self._guard.active)
            if self._guard.ended() is Action.CHECK:
                short = self._guard.short  # never a turn: a glance tells what it is
                evidence = self._closing_evidence(
                    event.audio, event.trailing_silence_ms, words=None if short else transcript, short=short
                )
                self._hooks.words(self._turn, evidence, "final")
                deliver(Utterance(self._turn, samples, voice_end_t, transcript, "check", evidence))
            else:
                deliver(Utterance(self._turn, samples, voice_end_t, transcript))
