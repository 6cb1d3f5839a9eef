"""What the assistant is doing (idle / listening / thinking / speaking / muted), derived from the bus.

The rules are pure and clock-free (`next_mode`); `publish_assistant_state` runs them over the
bus and publishes an AssistantState event whenever the mode changes.
"""

from __future__ import annotations

from voiced.bus import EventBus, Subscription
from voiced.events import (
    AssistantMode,
    AssistantState,
    BargeIn,
    Event,
    MuteChanged,
    SpeechEnded,
    SpeechStarted,
    Transcript,
    TtsStarted,
    TtsStopped,
    TurnFinished,
    WakeWindowClosed,
    WakeWordDetected,
)


def next_mode(mode: AssistantMode, event: Event, finished_turn: int = 0) -> AssistantMode:
    """The mode after `event`; speech over a reply changes nothing until the reply yields.
    `finished_turn`: the last turn that finished; speech for it (a narration after its turn, no
    TurnFinished to follow) ends in idle, not thinking."""
    if isinstance(event, MuteChanged):
        return "muted" if event.muted else "idle"
    if mode == "muted":
        return mode
    if isinstance(event, WakeWordDetected):
        return mode if mode == "speaking" else "listening"
    if isinstance(event, WakeWindowClosed):
        return "idle" if mode == "listening" else mode  # woken, but nothing was said
    if isinstance(event, SpeechStarted):
        return mode if event.over_reply and mode == "speaking" else "listening"
    if isinstance(event, (SpeechEnded, Transcript)):
        return "thinking" if mode != "speaking" else mode
    if isinstance(event, TtsStarted):
        return "speaking"
    if isinstance(event, BargeIn):
        return "listening"
    if isinstance(event, TtsStopped):
        return "idle" if event.turn <= finished_turn else "thinking"
    if isinstance(event, TurnFinished):
        return "idle"
    return mode


def _turn(event: Event) -> int:
    turn = getattr(event, "turn", 0)
    return turn if isinstance(turn, int) else 0


async def publish_assistant_state(bus: EventBus, events: Subscription, room: str = "") -> None:
    """Runs until cancelled, on `events` (the caller's subscription to `bus`); `room`: whose state
    it is (audio.room, or a satellite's on its room's own bus)."""
    mode: AssistantMode = "idle"
    finished = 0
    bus.publish(AssistantState(state=mode, room=room))
    while True:
        event = await events.get()
        new = next_mode(mode, event, finished)
        if isinstance(event, TurnFinished):
            finished = max(finished, event.turn)
        if new != mode:
            mode = new
            bus.publish(AssistantState(state=mode, turn=_turn(event), room=room))
