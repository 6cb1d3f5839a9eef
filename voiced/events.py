"""The event spine: small immutable events (the bus that carries them is bus.py).

Every component publishes these; the CLI's live view, the JSON event log used by
the benchmarks, the web stream and the tests all read the same stream.

A turn's events name its `room`: `audio.room` for the daemon's own microphone, the satellite's room
for a satellite's turn (relayed as the room events of voiced/satellites/events.py); "" when no room
is set, or when it is no room's (a scene's or a plan's commands, the web's controls). The speech
output's AgentText, TtsStarted and TtsStopped name none yet: on the home's bus they are the daemon's
own room's, and a satellite's stay on its room's bus.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal


def _now() -> float:
    return time.monotonic()


@dataclass(frozen=True)
class Event:
    kind: ClassVar[str] = "event"
    t: float = field(default_factory=_now, kw_only=True)  # monotonic, for durations between events
    at: float = field(default_factory=time.time, kw_only=True)  # wall-clock (Unix seconds), for people

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["kind"] = self.kind
        return data


@dataclass(frozen=True)
class Ready(Event):
    kind: ClassVar[str] = "ready"


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


@dataclass(frozen=True)
class CommandSent(Event):
    kind: ClassVar[str] = "command_sent"
    turn: int
    device: str
    topic: str
    payload: str
    task_id: str = ""  # the vibe task that sent it, if any
    room: str = ""


@dataclass(frozen=True)
class CommandRefused(Event):
    kind: ClassVar[str] = "command_refused"
    turn: int
    device: str
    reason: str
    task_id: str = ""
    room: str = ""


@dataclass(frozen=True)
class DeviceStateChanged(Event):
    kind: ClassVar[str] = "device_state"
    device: str
    state: dict[str, Any]


@dataclass(frozen=True)
class DeviceAvailability(Event):
    kind: ClassVar[str] = "device_availability"
    device: str
    online: bool


@dataclass(frozen=True)
class AgentToolCall(Event):
    """The main agent (the LLM) called one of its tools."""

    kind: ClassVar[str] = "agent_tool"
    turn: int
    tool: str
    input: str
    result: str


@dataclass(frozen=True)
class VibeStarted(Event):
    kind: ClassVar[str] = "vibe_started"
    task_id: str
    turn: int
    request: str


@dataclass(frozen=True)
class VibeToolStart(Event):
    kind: ClassVar[str] = "vibe_tool_start"
    task_id: str
    tool: str
    input: dict[str, Any]


@dataclass(frozen=True)
class VibeToolEnd(Event):
    kind: ClassVar[str] = "vibe_tool_end"
    task_id: str
    tool: str
    result: str


@dataclass(frozen=True)
class VibeComplete(Event):
    kind: ClassVar[str] = "vibe_complete"
    task_id: str
    plan: dict[str, Any]


@dataclass(frozen=True)
class VibeError(Event):
    kind: ClassVar[str] = "vibe_error"
    task_id: str
    error: str


@dataclass(frozen=True)
class VibeCancelled(Event):
    """The task was stopped: after this event it publishes nothing more."""

    kind: ClassVar[str] = "vibe_cancelled"
    task_id: str
    reason: str


@dataclass(frozen=True)
class VibeResumed(Event):
    """A scene cut off by a restart carries on: only its steps not yet done run."""

    kind: ClassVar[str] = "vibe_resumed"
    task_id: str
    request: str
    steps_done: int
    steps_left: int
    age_s: float


@dataclass(frozen=True)
class VibeDropped(Event):
    """A scene cut off by a restart that is not resumed (too old, or a newer one came after it)."""

    kind: ClassVar[str] = "vibe_dropped"
    task_id: str
    request: str
    reason: str


@dataclass(frozen=True)
class BrainFinished(Event):
    """The brain analysed a turn (or gave up on it at the barrier)."""

    kind: ClassVar[str] = "brain_finished"
    turn: int
    run_s: float
    notice: str | None = None
    failed: str | None = None  # why the analysis was not applied


@dataclass(frozen=True)
class BarrierWait(Event):
    """A turn waited for the previous turn's analysis."""

    kind: ClassVar[str] = "barrier_wait"
    turn: int
    waited_s: float
    timed_out: bool


@dataclass(frozen=True)
class StateUpdated(Event):
    kind: ClassVar[str] = "state_updated"
    state: dict[str, Any]


@dataclass(frozen=True)
class TtsStarted(Event):
    """First audio of a turn's reply reached the sink."""

    kind: ClassVar[str] = "tts_started"
    turn: int


@dataclass(frozen=True)
class TtsStopped(Event):
    kind: ClassVar[str] = "tts_stopped"
    turn: int
    audio_s: float


@dataclass(frozen=True)
class TurnFinished(Event):
    kind: ClassVar[str] = "turn_finished"
    turn: int
    room: str = ""


@dataclass(frozen=True)
class InputEnded(Event):
    kind: ClassVar[str] = "input_ended"


@dataclass(frozen=True)
class BrokerStatus(Event):
    kind: ClassVar[str] = "broker_status"
    connected: bool
    detail: str = ""


@dataclass(frozen=True)
class TaskFailed(Event):
    """A supervised background task raised; it restarts after `restart_in_s`."""

    kind: ClassVar[str] = "task_failed"
    task: str
    error: str
    restart_in_s: float


@dataclass(frozen=True)
class TaskRecovered(Event):
    """A supervised task that had failed has run long enough since its restart to count as well."""

    kind: ClassVar[str] = "task_recovered"
    task: str


@dataclass(frozen=True)
class DevicesChanged(Event):
    """Devices discovered on the broker appeared or disappeared (YAML devices never change)."""

    kind: ClassVar[str] = "devices_changed"
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()


@dataclass(frozen=True)
class HomeLearned(Event):
    """The understanding has learned the home's devices anew (after DevicesChanged): from now on
    they can be named by voice."""

    kind: ClassVar[str] = "home_learned"
    devices: tuple[str, ...] = ()
    seconds: float = 0.0


@dataclass(frozen=True)
class PayloadRejected(Event):
    """An MQTT payload refused at the edge; `excerpt` is bounded and escaped, never the payload."""

    kind: ClassVar[str] = "payload_rejected"
    topic: str
    reason: str
    excerpt: str = ""


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


@dataclass(frozen=True)
class PlanEvent(Event):
    """A plan's progress (voiced/plans): `task_id` names the plan, `detail` what happened."""

    kind: ClassVar[str] = "plan_event"
    task_id: str
    detail: str = ""
    step: int | None = None  # the step's index, for step events
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PlanCreated(PlanEvent):
    kind: ClassVar[str] = "plan_created"


@dataclass(frozen=True)
class PlanWaitingConfirmation(PlanEvent):
    kind: ClassVar[str] = "plan_waiting_confirmation"


@dataclass(frozen=True)
class PlanStepStarted(PlanEvent):
    kind: ClassVar[str] = "plan_step_started"


@dataclass(frozen=True)
class PlanStepFinished(PlanEvent):
    kind: ClassVar[str] = "plan_step_finished"


@dataclass(frozen=True)
class PlanDecision(PlanEvent):
    kind: ClassVar[str] = "plan_decision"


@dataclass(frozen=True)
class PlanCompleted(PlanEvent):
    kind: ClassVar[str] = "plan_completed"


@dataclass(frozen=True)
class PlanFailed(PlanEvent):
    kind: ClassVar[str] = "plan_failed"


@dataclass(frozen=True)
class PlanCancelled(PlanEvent):
    kind: ClassVar[str] = "plan_cancelled"
