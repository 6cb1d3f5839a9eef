"""The wake word: the window's pure rules, the gate over the real segmenter, the real model, config."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import get_args

import numpy as np
import pytest
from pymicro_wakeword import Model

from tests.speech_fixtures import synthesizer
from voiced.assistant_state import next_mode
from voiced.audio.pcm import EAR_RATE, resample_band_limited
from voiced.bus import EventBus
from voiced.config import WakeWord, load_config
from voiced.ear.segmenter import (
    Segmenter,
    SegmenterEvent,
    SegmenterSettings,
    UtteranceDiscarded,
    UtteranceEnded,
    UtterancePaused,
    UtteranceStarted,
)
from voiced.ear.wake import MicroWakeDetector, Step, WakeGate, WakeSettings, WakeWindow, quiet_start
from voiced.errors import ConfigError
from voiced.events import WakeWindowClosed, WakeWordDetected

FRAME = 30
SETTINGS = WakeSettings(frame_ms=FRAME, listen_ms=300, follow_up_ms=600, refractory_ms=150)


def test_the_window_is_shut_until_the_wake_word_and_shuts_again_after_listen_ms() -> None:
    window = WakeWindow(SETTINGS)
    assert [window.frame(detected=False, busy=False) for _ in range(50)] == [Step.NONE] * 50
    assert not window.open
    assert window.frame(detected=True, busy=False) is Step.WOKE
    steps = [window.frame(detected=False, busy=False) for _ in range(10)]
    assert steps == [Step.NONE] * 9 + [Step.CLOSED]  # 300 ms = 10 frames
    assert not window.open


def test_a_turn_holds_the_window_open_and_the_follow_up_runs_from_its_end() -> None:
    window = WakeWindow(SETTINGS)
    window.frame(detected=True, busy=False)
    for _ in range(100):  # a long turn: far past listen_ms, still open
        assert window.frame(detected=False, busy=True) is Step.NONE
        assert window.open
    steps = [window.frame(detected=False, busy=False) for _ in range(20)]
    assert steps == [Step.NONE] * 19 + [Step.CLOSED]  # 600 ms = 20 frames after the turn
    # A turn from elsewhere (typed on the web) opens a follow-up too: it is a conversation.
    window.frame(detected=False, busy=True)
    assert window.open


def test_detections_within_the_refractory_time_are_the_same_wake_word() -> None:
    window = WakeWindow(SETTINGS)
    assert window.frame(detected=True, busy=False) is Step.WOKE
    # The model's averaged score stays high for several strides: one wake, not five.
    assert [window.frame(detected=True, busy=False) for _ in range(5)] == [Step.NONE] * 5
    assert window.frame(detected=True, busy=False) is Step.WOKE  # 180 ms later: a new one


class ScriptedDetector:
    """A detector that fires on chosen frames (the model itself is tested below on real speech)."""

    word = "okay_nabu"

    def __init__(self, fires_at: set[int]) -> None:
        self._fires_at = fires_at
        self._frame = -1

    def feed(self, frame: bytes) -> bool:
        self._frame += 1
        return self._frame in self._fires_at


class Ear:
    """The ear's side of the gate: the real segmenter, restarted on the wake word."""

    def __init__(self, fires_at: set[int], busy: list[bool]) -> None:
        self.bus = EventBus()
        self.seen = self.bus.subscribe("test")
        self.segmenter = Segmenter(SegmenterSettings(frame_ms=FRAME, hangover_ms=300, pause_ms=150))
        self.gate = WakeGate(ScriptedDetector(fires_at), SETTINGS, self.bus, lambda: busy[0], lookback_ms=90)
        self.lookbacks: list[list[bytes]] = []
        self.frame_no = 0

    def restart(self, lookback: list[bytes]) -> None:
        self.lookbacks.append(lookback)
        self.segmenter.reset()
        for frame in lookback:
            self.segmenter.process(frame, False)

    def feed(self, speech: list[bool]) -> list[SegmenterEvent]:
        passed = []
        for voiced in speech:
            frame = self.frame_no.to_bytes(4, "little") * (FRAME * 16 * 2 // 4)  # numbered frames
            self.frame_no += 1
            passed += self.gate.admit(frame, self.segmenter.process(frame, voiced), self.restart)
        return passed

    def bus_kinds(self) -> list[str]:
        kinds = []
        while not self.seen.empty():
            kinds.append(self.seen.get_nowait().kind)
        return kinds


def _number(frame: bytes) -> int:
    return int.from_bytes(frame[:4], "little")


def test_the_new_utterance_starts_at_the_quietest_moment_before_the_detection() -> None:
    # "...bu" loud, a 10 ms gap (a pause, or the closure of the "t" of "turn"), "turn" loud.
    rng = np.random.default_rng(1)
    audio = (rng.standard_normal(3 * 480) * 3000).astype(np.int16)
    audio[640:800] = 5  # the gap, 10 ms
    frames = [audio[i : i + 480].tobytes() for i in range(0, len(audio), 480)]
    kept = np.frombuffer(b"".join(quiet_start(frames)), dtype=np.int16)
    assert len(kept) == len(audio)
    assert not kept[:640].any()  # the end of the wake word is silenced
    assert (kept[640:] == audio[640:]).all()  # from the gap on, every sample is kept


def test_speech_without_the_wake_word_never_reaches_the_ear() -> None:
    ear = Ear(fires_at=set(), busy=[False])
    assert ear.feed([True] * 40 + [False] * 20 + [True] * 30 + [False] * 20) == []
    assert ear.bus_kinds() == []


def test_what_follows_the_wake_word_in_the_same_breath_is_the_utterance() -> None:
    ear = Ear(fires_at={20}, busy=[False])
    # "okay nabu turn on the light": speech from frame 0 to 59, the wake word ends at frame 20.
    events = ear.feed([True] * 60 + [False] * 15)
    assert [type(e) for e in events] == [UtteranceStarted, UtterancePaused, UtteranceEnded]
    assert ear.bus_kinds() == ["wake_word"]
    assert [_number(f) for f in ear.lookbacks[0]] == [18, 19, 20]  # 90 ms before the detection
    ended = events[-1]
    assert isinstance(ended, UtteranceEnded)
    frames = [_number(ended.audio[i : i + 960]) for i in range(0, len(ended.audio), 960)]
    # From the lookback on, every frame: the speech to frame 59, then 300 ms of hangover.
    assert frames == list(range(18, 59 + 10 + 1))


def test_a_wake_word_said_alone_waits_listen_ms_for_the_request() -> None:
    ear = Ear(fires_at={15}, busy=[False])
    assert ear.feed([True] * 16 + [False] * 5) == []  # "okay nabu", then a pause: no utterance yet
    events = ear.feed([True] * 20 + [False] * 15)  # "turn on the light", within listen_ms
    assert [type(e) for e in events] == [UtteranceStarted, UtterancePaused, UtteranceEnded]
    # Said alone again, with nothing after it for longer than listen_ms: the window shuts.
    later = Ear(fires_at={15}, busy=[False])
    assert later.feed([True] * 16 + [False] * 12) == []
    assert later.bus_kinds() == ["wake_word", "wake_window_closed"]
    assert later.feed([True] * 20 + [False] * 15) == []


def test_speech_inside_the_follow_up_needs_no_wake_word_and_after_it_does() -> None:
    busy = [False]
    ear = Ear(fires_at={10}, busy=busy)
    assert len(ear.feed([True] * 30 + [False] * 15)) == 3  # woken, a request
    busy[0] = True  # the reply plays
    ear.feed([False] * 40)
    busy[0] = False
    follow_up = ear.feed([False] * 5 + [True] * 10 + [False] * 15)  # begins 150 ms after the reply
    assert [type(e) for e in follow_up] == [UtteranceStarted, UtterancePaused, UtteranceEnded]
    busy[0] = True
    ear.feed([False] * 10)
    busy[0] = False
    assert ear.feed([False] * 25 + [True] * 10 + [False] * 15) == []  # 750 ms after: too late
    assert ear.bus_kinds() == ["wake_word", "wake_window_closed"]


def test_a_burst_too_short_for_a_turn_passes_as_discarded_and_the_window_goes_on() -> None:
    ear = Ear(fires_at={5}, busy=[False])
    ear.feed([True] * 6)
    events = ear.feed([True] * 4 + [False] * 10)  # a cough after the wake word
    assert [type(e) for e in events] == [UtteranceStarted, UtteranceDiscarded]
    assert len(ear.feed([True] * 12 + [False] * 12)) == 3  # the request, still in the window


def test_the_assistant_listens_on_the_wake_word_and_idles_when_nothing_follows() -> None:
    assert next_mode("idle", WakeWordDetected(word="okay_nabu")) == "listening"
    assert next_mode("speaking", WakeWordDetected(word="okay_nabu")) == "speaking"
    assert next_mode("listening", WakeWindowClosed(word="okay_nabu")) == "idle"
    assert next_mode("thinking", WakeWindowClosed(word="okay_nabu")) == "thinking"
    assert next_mode("muted", WakeWordDetected(word="okay_nabu")) == "muted"


def _spoken(text: str) -> bytes:
    voice = synthesizer()
    audio = resample_band_limited(voice.synthesize(text), voice.sample_rate, EAR_RATE)
    pad = np.zeros(EAR_RATE // 2, dtype=np.int16)
    return np.concatenate([pad, audio, pad, pad]).tobytes()


def _fires(detector: MicroWakeDetector, audio: bytes) -> list[int]:
    step = FRAME * 32
    return [i // step for i in range(0, len(audio) - step + 1, step) if detector.feed(audio[i : i + step])]


def test_the_bundled_model_hears_its_word_and_not_a_command() -> None:
    detector = MicroWakeDetector("okay_nabu")
    fired = _fires(detector, _spoken("Okay Nabu, turn on the kitchen light."))
    assert fired, "okay nabu not detected"
    assert _fires(MicroWakeDetector("okay_nabu"), _spoken("Turn on the kitchen light, please.")) == []
    jarvis = _fires(MicroWakeDetector("hey_jarvis"), _spoken("Hey Jarvis."))
    assert jarvis


def test_the_config_offers_exactly_the_bundled_models(tmp_path: Path) -> None:
    assert set(get_args(WakeWord)) == {model.value for model in Model}
    path = tmp_path / "config.yaml"
    path.write_text("wake:\n  word: hey_siri\n  follow_up_s: 5\n")
    with pytest.raises(ConfigError) as error:
        load_config(path, {})
    message = str(error.value)
    assert "wake.word" in message and "hey_siri" in message
    assert all(word in message for word in ("okay_nabu", "hey_jarvis", "hey_mycroft", "alexa")), message
    path.write_text("brain:\n  enabled: false\nwake:\n  word: okay_nabu\n  follow_up_s: 5\n  muted: true\n")
    config = load_config(path, {})
    assert (config.wake.word, config.wake.follow_up_s, config.wake.muted) == ("okay_nabu", 5.0, True)
    assert load_config(None, {}).wake.word is None  # the default: always listening, as before


def test_check_config_exits_2_naming_the_field_and_the_choices(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("wake:\n  word: hey_siri\n")
    command = [sys.executable, "-m", "voiced", "check-config", str(path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "wake.word" in done.stderr and "'okay_nabu', 'hey_jarvis', 'hey_mycroft' or 'alexa'" in done.stderr
