"""Muting (POST /api/mute): the ear, on real speech and real Whisper, drops what it hears."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np

from tests.test_ear import speech
from voiced.audio.pcm import EAR_RATE, silence, write_wav
from voiced.audio.sources import WavFileSource
from voiced.bus import EventBus
from voiced.config import AsrConfig, VadConfig
from voiced.ear.listener import Ear
from voiced.ear.mute import MuteSwitch
from voiced.ear.utterance import Utterance
from voiced.ear.whisper import WhisperTranscriber
from voiced.events import MuteChanged, SpeechStarted


def test_a_muted_ear_hears_nothing_and_unmuted_hears_again(tmp_path: Path) -> None:
    audio = np.concatenate(
        [silence(0.5, EAR_RATE), speech("Turn on the kitchen light."), silence(1.0, EAR_RATE)]
    )
    write_wav(tmp_path / "in.wav", audio, EAR_RATE)
    transcriber = WhisperTranscriber(AsrConfig(), Path("models"))

    async def hear(muted: bool) -> tuple[list[Utterance], int, list[MuteChanged]]:
        bus = EventBus()
        events = bus.subscribe()
        mute = MuteSwitch(bus)
        mute.set(muted)
        ear = Ear(
            WavFileSource(tmp_path / "in.wav", realtime=False), VadConfig(), transcriber, bus, is_deaf=mute
        )
        utterances: list[Utterance] = []
        await asyncio.wait_for(ear.run(utterances.append), timeout=60)
        seen = []
        while not events.empty():
            seen.append(events.get_nowait())
        started = sum(isinstance(event, SpeechStarted) for event in seen)
        return utterances, started, [event for event in seen if isinstance(event, MuteChanged)]

    utterances, started, changes = asyncio.run(hear(True))
    assert (len(utterances), started) == (0, 0)
    assert changes == [MuteChanged(muted=True, t=changes[0].t, at=changes[0].at)]
    utterances, started, changes = asyncio.run(hear(False))
    assert (len(utterances), started, changes) == (1, 1, [])
