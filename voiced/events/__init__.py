"""The event spine: small immutable events (the bus that carries them is bus.py).

Every component publishes these; the CLI's live view, the JSON event log used by
the benchmarks, the web stream and the tests all read the same stream.

A turn's events name its `room`: `audio.room` for the daemon's own microphone, the satellite's room
for a satellite's turn (relayed as the room events of voiced/satellites/events.py); "" when no room
is set, or when it is no room's (a scene's or a plan's commands, the web's controls). The speech
output's AgentText, TtsStarted and TtsStopped name the room whose speaker plays them (a narration on
the daemon's own speaker: its room); a satellite's stay on its room's bus.

By theme: `base.py` (Event, and the daemon's own life), `turns.py` (a turn, from the ear to the
voice), `home.py` (the devices), `background.py` (scenes, the brain, plans). Every event is
imported from here, `voiced.events`.
"""

from voiced.events.background import (
    BarrierWait,
    BrainFinished,
    PlanCancelled,
    PlanCompleted,
    PlanCreated,
    PlanDecision,
    PlanEvent,
    PlanFailed,
    PlanStepFinished,
    PlanStepStarted,
    PlanWaitingConfirmation,
    StateUpdated,
    VibeCancelled,
    VibeComplete,
    VibeDropped,
    VibeError,
    VibeResumed,
    VibeStarted,
    VibeToolEnd,
    VibeToolStart,
)
from voiced.events.base import (
    BrokerStatus,
    Event,
    InputEnded,
    PayloadRejected,
    Ready,
    TaskFailed,
    TaskRecovered,
)
from voiced.events.home import (
    CommandRefused,
    CommandSent,
    DeviceAvailability,
    DevicesChanged,
    DeviceStateChanged,
    HomeLearned,
)
from voiced.events.turns import (
    AgentText,
    AgentToolCall,
    AssistantMode,
    AssistantState,
    BargeIn,
    BargeInIgnored,
    MuteChanged,
    ReplyPaused,
    ReplyResumed,
    SpeechEnded,
    SpeechStarted,
    Transcript,
    TtsStarted,
    TtsStopped,
    TurnFinished,
    WakeWindowClosed,
    WakeWordDetected,
)

__all__ = [
    "AgentText",
    "AgentToolCall",
    "AssistantMode",
    "AssistantState",
    "BargeIn",
    "BargeInIgnored",
    "BarrierWait",
    "BrainFinished",
    "BrokerStatus",
    "CommandRefused",
    "CommandSent",
    "DeviceAvailability",
    "DeviceStateChanged",
    "DevicesChanged",
    "Event",
    "HomeLearned",
    "InputEnded",
    "MuteChanged",
    "PayloadRejected",
    "PlanCancelled",
    "PlanCompleted",
    "PlanCreated",
    "PlanDecision",
    "PlanEvent",
    "PlanFailed",
    "PlanStepFinished",
    "PlanStepStarted",
    "PlanWaitingConfirmation",
    "Ready",
    "ReplyPaused",
    "ReplyResumed",
    "SpeechEnded",
    "SpeechStarted",
    "StateUpdated",
    "TaskFailed",
    "TaskRecovered",
    "Transcript",
    "TtsStarted",
    "TtsStopped",
    "TurnFinished",
    "VibeCancelled",
    "VibeComplete",
    "VibeDropped",
    "VibeError",
    "VibeResumed",
    "VibeStarted",
    "VibeToolEnd",
    "VibeToolStart",
    "WakeWindowClosed",
    "WakeWordDetected",
]
