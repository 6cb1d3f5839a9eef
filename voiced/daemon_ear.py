"""The daemon's own ear, built from config (its microphone's room is `audio.room`), and what its
end-of-turn rule is told of words heard at a pause."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from voiced.audio.reference import PlaybackReference
from voiced.audio.sources import AudioSource
from voiced.bus import EventBus
from voiced.config import Config
from voiced.daemon import HalfDuplexGuard
from voiced.ear.asr_queue import HomeAsr, Reconsider
from voiced.ear.bargein import GuardSettings
from voiced.ear.end_of_turn import Pause, words_of
from voiced.ear.frontend import echo_front
from voiced.ear.listener import Ear
from voiced.ear.utterance import Heard
from voiced.ear.wake import WakeGate
from voiced.ear.wyoming_asr import WyomingTranscriber
from voiced.engines import Engines, judges_pauses
from voiced.memory import give_back
from voiced.mouth.intents import LocalIntentAgent
from voiced.mouth.speech import SpeechOutput

COMPLETE_MIN_CONFIDENCE = 0.5  # Whisper's mean token probability; misheard words run lower


def build_ear(
    config: Config,
    engines: Engines,
    source: AudioSource,
    bus: EventBus,
    speech: SpeechOutput,
    reference: PlaybackReference | None,
    stack: contextlib.AsyncExitStack,
    judge: Callable[[Heard], Pause] | None = None,
    muted: Callable[[], bool] = lambda: False,
    wake: WakeGate | None = None,
    reconsider: Reconsider | None = None,
    home_asr: HomeAsr | None = None,
) -> Ear:
    """The ear; what it opens that must be closed (the echo canceller) goes on `stack`. `home_asr`:
    the Whisper queue the satellites' rooms share with it (asr_home.py)."""
    transcriber = engines.transcriber
    if transcriber is None:
        raise ValueError("an ear needs Whisper: load the engines with whisper=True")
    stream = transcriber.stream if isinstance(transcriber, WyomingTranscriber) else None
    tidy = give_back if config.memory.give_back_after_turn else None
    audio = config.audio
    guard = GuardSettings(frame_ms=config.vad.frame_ms, confirm_ms=audio.barge_in_confirm_ms)
    room = audio.room or ""  # what its events name
    if reference is None or audio.echo == "off":
        return Ear(
            source,
            config.vad,
            transcriber,
            bus,
            is_deaf=muted,
            judge=judge,
            wake=wake,
            stream=stream,
            reconsider=reconsider,
            tidy=tidy,
            home_asr=home_asr,
            room=room,
        )
    if audio.echo == "half_duplex":
        half = HalfDuplexGuard(speech)
        deaf = lambda: muted() or half()  # noqa: E731
        return Ear(
            source,
            config.vad,
            transcriber,
            bus,
            is_deaf=deaf,
            judge=judge,
            wake=wake,
            stream=stream,
            reconsider=reconsider,
            tidy=tidy,
            home_asr=home_asr,
            room=room,
        )
    front = echo_front(reference, config.vad, audio)
    stack.callback(front.close)
    return Ear(
        source,
        config.vad,
        transcriber,
        bus,
        front=front,
        is_playing=lambda: speech.speaking or front.playing,
        guard=guard,
        echo_db=audio.echo_unexplained_db,
        is_deaf=muted,
        judge=judge,
        wake=wake,
        stream=stream,
        reconsider=reconsider,
        tidy=tidy,
        home_asr=home_asr,
        room=room,
    )


def ends_request(
    config: Config, intents: LocalIntentAgent, foresee: Callable[[str], None] | None = None
) -> Callable[[Heard], Pause] | None:
    """What the ear's end-of-turn rule is told of words heard at a pause: whether the local intents
    take them as a whole request and Whisper is sure of them. Not for the LLM alone, which takes
    anything. `foresee`: given the words of a whole, confident request, to synthesize its reply
    while the silence decides (Foresight.foresee)."""
    if not judges_pauses(config):
        return None

    def judged(heard: Heard) -> Pause:
        pause = Pause(
            whole=intents.complete(heard.text),
            confident=heard.confidence >= COMPLETE_MIN_CONFIDENCE,
            words=words_of(heard.text),
        )
        if foresee is not None and pause.whole and pause.confident:
            foresee(heard.text)
        return pause

    return judged
