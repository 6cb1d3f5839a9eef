"""The ear on real speech and real Whisper: early ASR is used at a true end, dropped when speech resumes."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np

from tests.speech_fixtures import synthesizer
from voiced.audio.pcm import EAR_RATE, resample, silence, write_wav
from voiced.audio.sources import WavFileSource
from voiced.bus import EventBus
from voiced.config import AsrConfig, VadConfig
from voiced.ear.listener import Ear
from voiced.ear.utterance import Utterance
from voiced.ear.whisper import WhisperTranscriber
from voiced.events import Event, SpeechEnded, SpeechStarted


def speech(text: str) -> np.ndarray:
    tts = synthesizer()
    return resample(tts.synthesize(text), tts.sample_rate, EAR_RATE)


def listen(path: Path, vad: VadConfig) -> tuple[list[Utterance], list[str], list[Event]]:
    async def scenario() -> tuple[list[Utterance], list[str], list[Event]]:
        bus = EventBus()
        events = bus.subscribe()
        transcriber = WhisperTranscriber(AsrConfig(), Path("models"))
        ear = Ear(WavFileSource(path, realtime=False), vad, transcriber, bus)
        utterances: list[Utterance] = []
        await asyncio.wait_for(ear.run(utterances.append), timeout=60)
        texts = [(await asyncio.wait_for(u.transcript, timeout=60)).text for u in utterances]
        seen = []
        while not events.empty():
            seen.append(events.get_nowait())
        return utterances, texts, seen

    return asyncio.run(scenario())


def test_a_mid_sentence_pause_does_not_cut_the_request(tmp_path: Path) -> None:
    audio = np.concatenate(
        [
            silence(0.5, EAR_RATE),
            speech("Turn on the kitchen light"),
            silence(0.35, EAR_RATE),  # longer than early_asr_ms, shorter than the hangover
            speech("and play some jazz."),
            silence(1.0, EAR_RATE),
        ]
    )
    write_wav(tmp_path / "in.wav", audio, EAR_RATE)
    utterances, texts, events = listen(tmp_path / "in.wav", VadConfig(early_asr_ms=150, hangover_ms=600))
    assert len(utterances) == 1
    assert "jazz" in texts[0].lower() and "kitchen" in texts[0].lower()
    assert [type(e) for e in events if isinstance(e, (SpeechStarted, SpeechEnded))] == [
        SpeechStarted,
        SpeechEnded,
    ]


def test_two_requests_make_two_utterances_with_their_own_text(tmp_path: Path) -> None:
    audio = np.concatenate(
        [
            speech("Pause the music."),
            silence(1.0, EAR_RATE),
            speech("Set the diffuser to citrus."),  # no silence after: the input just ends
        ]
    )
    write_wav(tmp_path / "in.wav", audio, EAR_RATE)
    utterances, texts, _ = listen(tmp_path / "in.wav", VadConfig())
    assert len(utterances) == 2
    assert "pause" in texts[0].lower() and "music" in texts[0].lower()
    assert "citrus" in texts[1].lower()
    assert utterances[0].turn == 1 and utterances[1].turn == 2
