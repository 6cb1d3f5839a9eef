"""Whisper's encoder window for short commands (`asr.short_window_s`): the real tiny.en hears the
same commands over a 10 s window as over its own 30 s (a reading that loops, "… to 40%. … to 40%.",
is read again over 30 s), and a window too small for the speech falls back to 30 s rather than
cutting the speech off."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from tests.speech_fixtures import spoken
from voiced.config import AsrConfig
from voiced.ear.whisper import WhisperTranscriber

COMMANDS = ["Turn on the kitchen light.", "Set the bedroom light to 40 percent.", "Play some jazz."]


def test_commands_are_heard_the_same_over_a_ten_second_window() -> None:
    short = WhisperTranscriber(AsrConfig(short_window_s=10), Path("models"))
    full = WhisperTranscriber(AsrConfig(short_window_s=30), Path("models"))
    for text in COMMANDS:
        audio = spoken(text)
        heard = full.transcribe(audio)
        assert heard.rstrip(".").replace("%", " percent") == text.rstrip(".")
        assert short.transcribe(audio) == heard  # "Set the bedroom light to 40%." looped here once


def test_speech_longer_than_the_window_is_heard_whole() -> None:
    tight = WhisperTranscriber(AsrConfig(short_window_s=2), Path("models"))
    full = WhisperTranscriber(AsrConfig(short_window_s=30), Path("models"))
    audio = spoken("Set the bedroom light to 40 percent.")  # 2.6 s: heard over Whisper's own 30 s
    assert tight.transcribe(audio) == full.transcribe(audio)


def test_a_window_under_two_seconds_is_a_config_error() -> None:
    with pytest.raises(ValidationError, match="short_window_s"):
        AsrConfig(short_window_s=1)
