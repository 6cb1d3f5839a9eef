"""A turn's events, from the ear to the voice: speech heard, its words, the reply and its audio,
barge-in, the assistant's state, mute and the wake word. The rooms they name: see voiced/events."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from voiced.events.base import Event


@dataclass(frozen=True)
class SpeechStarted(Event):
    kind: ClassVar[str] = "speech_started"
    turn: int
    over_reply: bool = False  # the daemon was speaking when this began
    room: str = ""


@dataclass(frozen=True)
class BargeIn(Event):
    """The user talked over a reply and it was stopped."""

    kind: ClassVar[str] = "barge_in"
    turn: int  # the reply's turn
    reason: str
    room: str = ""


@dataclass(frozen=True)
class BargeInIgnored(Event):
    """Speech over a reply that was our own echo or a backchannel; the reply went on."""

    kind: ClassVar[str] = "barge_in_ignored"
    turn: int
    heard: str
    verdict: str
    room: str = ""


@dataclass(frozen=True)
class ReplyPaused(Event):
    """Speech over a reply was not our echo: the reply fell silent, its place kept, until the words decide."""

    kind: ClassVar[str] = "reply_paused"
    turn: int  # the reply's turn
    by_turn: int  # the speech over it
    unexplained_db: float  # how much of that speech our echo does not explain
    room: str = ""


@dataclass(frozen=True)
class ReplyResumed(Event):
    """The speech over a paused reply was a backchannel or our echo: it goes on where it paused."""

    kind: ClassVar[str] = "reply_resumed"
    turn: int
    by_turn: int
    room: str = ""


@dataclass(frozen=True)
class SpeechEnded(Event):
    """The segmenter closed an utterance; `voice_end_t` is when the last voiced frame arrived."""

    kind: ClassVar[str] = "speech_ended"
    turn: int
    duration_s: float
    voice_end_t: float
    room: str = ""


@dataclass(frozen=True)
class Transcript(Event):
    kind: ClassVar[str] = "transcript"
    turn: int
    text: str
    asr_s: float = 0.0
    early: bool = False  # ASR started at a pause, while the hangover was still running
    confidence: float = 1.0  # how sure the ASR was, 0..1
    doubtful: tuple[str, ...] = ()  # words the ASR was unsure of (weighed only in titles to search)
    alternatives: tuple[str, ...] = ()  # other readings of the same audio, most likely first
    room: str = ""


@dataclass(frozen=True)
class AgentText(Event):
    kind: ClassVar[str] = "agent_text"
    turn: int
    text: str
    understood: bool
    room: str = ""  # the room whose speaker says it


@dataclass(frozen=True)
class AgentToolCall(Event):
    """The main agent (the LLM) called one of its tools."""

    kind: ClassVar[str] = "agent_tool"
    turn: int
    tool: str
    input: str
    result: str


@dataclass(frozen=True)
class TtsStarted(Event):
    """First audio of a turn's reply reached the sink."""

    kind: ClassVar[str] = "tts_started"
    turn: int
    room: str = ""


@dataclass(frozen=True)
class TtsStopped(Event):
    kind: ClassVar[str] = "tts_stopped"
    turn: int
    audio_s: float
    room: str = ""


@dataclass(frozen=True)
class TurnFinished(Event):
    kind: ClassVar[str] = "turn_finished"
    turn: int
    room: str = ""


AssistantMode = Literal["idle", "listening", "thinking", "speaking", "muted"]


@dataclass(frozen=True)
class AssistantState(Event):
    """What the assistant is doing now, published when it changes."""

    kind: ClassVar[str] = "assistant_state"
    state: AssistantMode
    turn: int = 0
    room: str = ""  # the daemon's own room (audio.room); a satellite's room says its own (RoomState)


@dataclass(frozen=True)
class MuteChanged(Event):
    """The microphone was muted or unmuted (config, SIGUSR1, the web); muted, the ear drops all."""

    kind: ClassVar[str] = "mute_changed"
    muted: bool


@dataclass(frozen=True)
class WakeWordDetected(Event):
    """The wake word was heard: what follows it (in the same breath or after a pause) is a turn."""

    kind: ClassVar[str] = "wake_word"
    word: str


@dataclass(frozen=True)
class WakeWindowClosed(Event):
    """The conversation the wake word opened is over: speech needs the wake word again."""

    kind: ClassVar[str] = "wake_window_closed"
    word: str
