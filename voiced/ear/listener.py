"""The ear: audio frames → webrtcvad → segmenter → transcriber; utterances out, events on the bus.

ASR starts early: when the speaker pauses (`vad.early_asr_ms`), the audio so far is transcribed
while the hangover decides whether the utterance has really ended. If it has, that transcript
is used; if speech resumes, it is dropped. Whisper calls go through one queue, most urgent first
(`asr_queue.py`): deciding a barge-in never waits behind a guess, and one Whisper shared by every
room takes each room's jobs in turn.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

import numpy as np

from voiced.audio.pcm import EAR_RATE
from voiced.audio.sources import AudioSource
from voiced.bus import EventBus
from voiced.config import VadConfig
from voiced.ear.asr_home import MICROPHONE
from voiced.ear.asr_queue import AsrQueue, HomeAsr, Priority, Reconsider
from voiced.ear.bargein import Action, BargeInGuard, Evidence, GuardSettings
from voiced.ear.between import frames_or_done
from voiced.ear.early import EarlyTranscript
from voiced.ear.end_of_turn import Pace, Pause, settings_for
from voiced.ear.evidence import OverReplyEvidence
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
        home_asr: HomeAsr | None = None,
        asr_room: str = MICROPHONE,
        room: str = "",
    ) -> None:
        """`first_turn`: turns are numbered after it (a satellite's room keeps its own range).
        `reconsider`: a second ear for turns whose words would not be acted on. `judge`:
        what the words heard at a pause are (a whole request may end the turn sooner, see
        end_of_turn.py); None: every turn waits the full hangover. `wake`: speech needs the wake word
        (or the conversation it opened) to become a turn; None: always listening. `stream`: gets
        each utterance's audio as it is spoken (a remote ASR server). `tidy`: after each Whisper
        job (asr_queue.py). `home_asr`: the Whisper queue every room shares, whose jobs are taken
        room by room, this ear's as `asr_room`; None: a queue of its own. `room`: the room it hears,
        named by its events (audio.room, or a satellite's)."""
        self._source = source
        self._stream = stream
        self._wake = wake
        self._asr = AsrQueue(transcriber, reconsider, tidy, home=home_asr, room=asr_room)
        self._config = config
        self._bus = bus
        self._room = room
        self._is_deaf = is_deaf
        self._front = front or PlainVad(config.aggressiveness)
        self._is_playing = is_playing
        self._hooks: BargeInHooks = NoHooks()
        self._guard = BargeInGuard(guard or GuardSettings(frame_ms=config.frame_ms))
        settings = settings_from(config)
        self._segmenter = Segmenter(settings)
        self._pace = Pace(
            config.careful_turns, settings.frames(config.hangover_ms), settings.frames(settings.onset_ms)
        )
        ending = settings_for(config.complete_hangover_ms, config.hangover_ms)
        self._early = EarlyTranscript(judge, ending, self._pace)
        over_ms = config.early_asr_over_reply_ms
        self._evidence = OverReplyEvidence(
            self._front, self._transcribe, settings, echo_db=echo_db, over_reply_pause_ms=over_ms
        )
        self._turn = first_turn

    async def run(self, deliver: Callable[[Utterance], None], hooks: BargeInHooks | None = None) -> None:
        """Listen until the source ends; each finished utterance is handed to `deliver`."""
        self._hooks = self._evidence.hooks = hooks or NoHooks()
        asr = asyncio.create_task(self._asr.run(), name="asr")
        try:
            await self._hear(deliver)
            await self._asr.drain()  # the last utterance's words still count
        finally:
            await cancel_and_wait([asr])
            self._evidence.shutdown()

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
            self._pace.frame()
            kept, user_speech = self._front.classify(frame)
            self._evidence.keep(frame)
            if self._segmenter.in_speech and self._guard.active and user_speech:
                self._evidence.goes_on(self._turn, self._guard.frames_heard)
            if self._segmenter.in_speech and self._guard.frame(user_speech=user_speech) is Action.CHECK_EARLY:
                count = self._segmenter.frame_count + 1
                heard = self._segmenter.audio_so_far() + kept
                evidence = self._evidence.early(self._turn, count, heard, self._guard.frames_heard)
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
        self._early.drop()
        await self._evidence.stop_checks()
        self._bus.publish(InputEnded())

    def _unjudged(self) -> asyncio.Task[Heard] | None:
        return self._early.unjudged(over_reply=self._guard.active)

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
        self._early.drop()
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
        needed = self._early.silence_needed(over_reply=self._guard.active)
        return (
            self._segmenter.commit(needed) if needed is not None and needed < self._config.hangover_ms else []
        )

    def drop(self, turn: int) -> None:
        """Forget the utterance in progress if it is `turn` (it was found to be our own echo)."""
        if turn == self._turn and self._segmenter.in_speech:
            self._segmenter.reset()
            self._guard.dropped()
            self._early.drop()
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

    def _closing(
        self, audio: bytes, trailing_silence_ms: int, *, words: asyncio.Task[Heard] | None, short: bool
    ) -> asyncio.Task[Evidence]:
        frames_heard = self._guard.frames_heard
        return self._evidence.closing(
            self._turn, audio, trailing_silence_ms, frames_heard=frames_heard, words=words, short=short
        )

    def _on_event(
        self,
        event: SegmenterEvent,
        deliver: Callable[[Utterance], None],
    ) -> None:
        now = time.monotonic()
        _LOGGER.debug("turn %d: %s", self._turn, type(event).__name__)
        if isinstance(event, UtteranceStarted):
            self._turn += 1
            self._early.new_utterance()
            if self._pace.started():
                _LOGGER.info(
                    "turn %d goes on from a turn ended early: the next %d wait the full hangover",
                    self._turn,
                    self._pace.careful_turns,
                )
            playing = self._is_playing()
            self._bus.publish(SpeechStarted(turn=self._turn, over_reply=playing, room=self._room))
            if playing:
                self._segmenter.pause_after(self._config.early_asr_over_reply_ms, short_too=True)
            if self._guard.started(playing=playing) is Action.OVER_REPLY:
                self._hooks.voice_over(self._turn)
                self._evidence.onset(self._turn)
        elif isinstance(event, UtterancePaused):
            self._early.drop()
            glance = None
            if self._guard.active and self._guard.short:  # queued first: it decides
                glance = self._transcribe(event.audio, early=True, urgent=True, glance=True)
            self._early.start(self._transcribe(event.audio, early=True, urgent=self._guard.active))
            if glance is not None:
                evidence = self._evidence.paused(self._turn, event.audio, self._guard.frames_heard, glance)
                self._hooks.words(self._turn, evidence, "paused")
        elif isinstance(event, UtteranceDiscarded):
            self._early.drop()  # too short for a turn: its transcript is not wanted
            _LOGGER.debug("discarded %d ms of speech-like noise", event.speech_ms)
            if self._guard.ended() is Action.CHECK:
                # Over our reply a "stop" can be this short (the echo gate passes only part of
                # it): its words decide, at a glance. The verdict stops the reply or lets it go
                # on; it never starts a turn.
                evidence = self._closing(event.audio, event.trailing_silence_ms, words=None, short=True)
                self._hooks.words(self._turn, evidence, "final")
        else:
            early = event.reason == "complete"
            silent = event.trailing_silence_ms // self._config.frame_ms
            self._pace.ended(early_after_frames=silent if early else None)
            voice_end_t = now - event.trailing_silence_ms / 1000
            samples = np.frombuffer(event.audio, dtype=np.int16)
            self._bus.publish(
                SpeechEnded(
                    turn=self._turn,
                    duration_s=len(samples) / EAR_RATE,
                    voice_end_t=voice_end_t,
                    room=self._room,
                )
            )
            kept = self._early.take() if event.reason in ("silence", "complete") else None
            if kept is not None:
                transcript = kept
            else:
                self._early.drop()
                transcript = self._transcribe(event.audio, early=False, urgent=self._guard.active)
            if self._guard.ended() is Action.CHECK:
                short = self._guard.short  # never a turn: a glance tells what it is
                words = None if short else transcript
                evidence = self._closing(event.audio, event.trailing_silence_ms, words=words, short=short)
                self._hooks.words(self._turn, evidence, "final")
                deliver(Utterance(self._turn, samples, voice_end_t, transcript, "check", evidence))
            else:
                deliver(Utterance(self._turn, samples, voice_end_t, transcript))
