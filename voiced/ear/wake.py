"""The wake word: speech becomes a turn only after it, or in the conversation it opened.

`WakeWindow` is the pure, clock-free part: fed one frame at a time with whether the detector
fired and whether a turn is under way, it says whether speech that begins now may become a
turn. `WakeGate` puts it between the ear's segmenter and the rest of the ear: utterances that
begin while the window is shut are never transcribed, and when the wake word is heard the
utterance in progress is dropped and what follows the wake word (in the same breath or after a
pause) starts a new one. `MicroWakeDetector` is the model: microWakeWord (TensorFlow Lite) from
the `pymicro-wakeword` package, which ships the four models and the runtime.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

import numpy as np

from voiced.audio.pcm import EAR_RATE
from voiced.bus import EventBus
from voiced.config import Config, WakeWord
from voiced.ear.segmenter import SegmenterEvent, UtteranceDiscarded, UtteranceEnded, UtteranceStarted
from voiced.events import WakeWindowClosed, WakeWordDetected

_LOGGER = logging.getLogger(__name__)
# The detector fires up to ~200 ms after the wake word has ended (its 150 ms averaging window and
# more). Speech that follows without a pause ("okay nabu turn on ...") begins in that gap, so the
# new utterance starts at the quietest 10 ms of the last LOOKBACK_MS before the detection: the
# pause between the words, or a stop consonant's closure. A fixed cut did not do on piper and
# espeak-ng voices: 90 ms before still cut "turn" to "on", 270 ms let "-bu" in ("be turned on").
LOOKBACK_MS = 240
CUT_MS = 10
REFRACTORY_MS = 1500  # detections this soon after one are the same wake word, still in the window


class WakeDetector(Protocol):
    word: str

    def feed(self, frame: bytes) -> bool:
        """One frame of 16 kHz mono int16: did the wake word end in it?"""
        ...


class MicroWakeDetector:
    """microWakeWord, streaming: features every 10 ms, one model run every 30 ms (~1 % of a core)."""

    def __init__(self, word: str) -> None:
        from pymicro_wakeword import MicroWakeWord, MicroWakeWordFeatures, Model

        self.word = word
        self._model = MicroWakeWord.from_builtin(Model(word))
        self._features = MicroWakeWordFeatures()

    def feed(self, frame: bytes) -> bool:
        heard = False
        for features in self._features.process_streaming(frame):
            heard = bool(self._model.process_streaming(features)) or heard
        return heard


class Step(Enum):
    NONE = "none"
    WOKE = "woke"  # the wake word was heard in this frame
    CLOSED = "closed"  # the window shut in this frame: back to waiting for the wake word


@dataclass(frozen=True)
class WakeSettings:
    frame_ms: int = 30
    listen_ms: int = 5000  # after the wake word, how long speech has to begin
    follow_up_ms: int = 8000  # after a turn, how long speech goes on without the wake word
    refractory_ms: int = REFRACTORY_MS

    def frames(self, ms: int) -> int:
        return max(0, -(-ms // self.frame_ms))


class WakeWindow:
    """Whether speech that begins now may become a turn. Counted in frames, never a clock.

    The window opens for `listen_ms` when the wake word is heard; it stays open while a turn is
    under way (`busy`: heard, thought about, answered), and for `follow_up_ms` after that.
    """

    def __init__(self, settings: WakeSettings) -> None:
        self._listen = settings.frames(settings.listen_ms)
        self._follow_up = settings.frames(settings.follow_up_ms)
        self._refractory = settings.frames(settings.refractory_ms)
        self._left = 0  # frames the window stays open
        self._since_wake = self._refractory  # a first detection always counts

    @property
    def open(self) -> bool:
        return self._left > 0

    def frame(self, *, detected: bool, busy: bool, held: bool = False) -> Step:
        """`held`: speech let in is still going on; the window does not run down under it."""
        self._since_wake += 1
        if detected and self._since_wake > self._refractory:
            self._since_wake = 0
            self._left = max(self._left, self._listen)
            return Step.WOKE
        if busy:
            self._left = max(self._left, self._follow_up)
            return Step.NONE
        if self._left > 0 and not held:
            self._left -= 1
            return Step.CLOSED if self._left == 0 else Step.NONE
        return Step.NONE


class WakeGate:
    """Between the segmenter and the ear: only utterances that begin while the window is open
    pass; the rest are dropped before anything is transcribed."""

    def __init__(
        self,
        detector: WakeDetector,
        settings: WakeSettings,
        bus: EventBus,
        busy: Callable[[], bool],
        *,
        lookback_ms: int = LOOKBACK_MS,
    ) -> None:
        self._detector = detector
        self._window = WakeWindow(settings)
        self._bus = bus
        self._busy = busy
        self._admitted: bool | None = None  # the utterance in progress passes; None: none open
        self._recent: deque[bytes] = deque(maxlen=max(1, -(-lookback_ms // settings.frame_ms)))

    @property
    def word(self) -> str:
        return self._detector.word

    def listen_for(self, detector: WakeDetector) -> None:
        """Another wake word from the next frame on (Home Assistant's select, say)."""
        _LOGGER.info("wake word: %s (was %s)", detector.word, self._detector.word)
        self._detector = detector

    def admit(
        self, frame: bytes, events: list[SegmenterEvent], restart: Callable[[list[bytes]], None]
    ) -> list[SegmenterEvent]:
        """`frame` went through the segmenter and gave `events`: the ones the ear may act on.

        On the wake word, `restart` gets the last frames (the lookback): the ear drops the
        utterance in progress and starts over from them, so what follows is a new utterance.
        """
        self._recent.append(frame)
        detected = self._detector.feed(frame)
        step = self._window.frame(detected=detected, busy=self._busy(), held=bool(self._admitted))
        if step is Step.WOKE:
            _LOGGER.info("wake word %r heard", self.word)
            self._bus.publish(WakeWordDetected(word=self.word))
            self._admitted = None
            restart(quiet_start(list(self._recent)))
            return []  # this frame's events belonged to the utterance just dropped
        if step is Step.CLOSED:
            _LOGGER.info("conversation over: waiting for the wake word %r", self.word)
            self._bus.publish(WakeWindowClosed(word=self.word))
        return self.admitted(events)

    def admitted(self, events: list[SegmenterEvent]) -> list[SegmenterEvent]:
        """Of `events` (a frame's, or decided between frames), the ones the ear may act on."""
        passed: list[SegmenterEvent] = []
        for event in events:
            if isinstance(event, UtteranceStarted):
                self._admitted = self._window.open
                if not self._admitted:
                    _LOGGER.debug("speech without the wake word: not a turn")
            if self._admitted:
                passed.append(event)
            if isinstance(event, UtteranceEnded | UtteranceDiscarded):
                self._admitted = None
        return passed


def quiet_start(frames: list[bytes], cut_ms: int = CUT_MS) -> list[bytes]:
    """`frames` (16 kHz int16) silenced up to their quietest `cut_ms`: what follows is kept."""
    audio = np.frombuffer(b"".join(frames), dtype=np.int16).astype(np.float64)
    block = EAR_RATE * cut_ms // 1000
    if len(audio) < block:
        return frames
    energy = [float(np.mean(audio[i : i + block] ** 2)) for i in range(0, len(audio) - block + 1, block)]
    start = block * int(np.argmin(energy))
    audio[:start] = 0
    data = audio.astype(np.int16).tobytes()
    size = len(frames[0])
    return [data[i : i + size] for i in range(0, len(data), size)]


class WakeWordChoice:
    """The wake word as a choice among the models pymicro-wakeword ships (Home Assistant's select)."""

    def __init__(self, gate: WakeGate, words: tuple[str, ...]) -> None:
        self._gate = gate
        self.words = words

    @property
    def word(self) -> str:
        return self._gate.word

    def choose(self, word: str) -> None:
        if word != self._gate.word:
            self._gate.listen_for(MicroWakeDetector(word))  # a few ms: its model ships in the package


def wake_gate(
    word: WakeWord | None, config: Config, bus: EventBus, busy: Callable[[], bool]
) -> WakeGate | None:
    """A gate listening for `word` (its model loaded, a few ms); None when always listening.

    `busy`: a turn is under way (the wake word's window stays open through it)."""
    if word is None:
        return None
    settings = WakeSettings(
        frame_ms=config.vad.frame_ms,
        listen_ms=round(config.wake.listen_s * 1000),
        follow_up_ms=round(config.wake.follow_up_s * 1000),
    )
    return WakeGate(MicroWakeDetector(word), settings, bus, busy)
