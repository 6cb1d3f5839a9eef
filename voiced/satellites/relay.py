"""A satellite's room, told to its satellite and to the home: voice-started, voice-stopped, the
transcript and each sentence to synthesize go to the satellite (its lights and sounds); what it heard
and said, its assistant state, its barge-ins, each finished turn with its stages' latency and each
time its understanding learned the home anew go to the home's bus as room events
(voiced/satellites/events.py), each naming the satellite and its room."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from wyoming.asr import Transcript as WyomingTranscript
from wyoming.tts import Synthesize
from wyoming.vad import VoiceStarted, VoiceStopped

from voiced.bus import EventBus, Subscription
from voiced.config_satellites import SatelliteConfig
from voiced.events import (
    AgentText,
    AssistantState,
    BargeIn,
    BargeInIgnored,
    Event,
    HomeLearned,
    SpeechEnded,
    SpeechStarted,
    Transcript,
    TtsStarted,
    TurnFinished,
)
from voiced.satellites.events import (
    RoomBargeIn,
    RoomHeard,
    RoomLearned,
    RoomSaid,
    RoomState,
    RoomTurnFinished,
)
from voiced.satellites.link import SatelliteLink
from voiced.turn_stages import mark, stages

OPEN_KEPT = 20  # turns begun but not finished (a burst dropped as echo) are forgotten past this many


async def relay(
    events: Subscription, *, link: SatelliteLink, home_bus: EventBus, satellite: SatelliteConfig
) -> None:
    """Run until cancelled: the room's events (`events`, of its own bus), told to its satellite over
    `link` and to the home on `home_bus`."""
    name, room = satellite.name, satellite.room
    turns: OrderedDict[int, _Turn] = OrderedDict()  # those begun and not finished
    while True:
        event = await events.get()
        _note(turns, event)
        if isinstance(event, SpeechStarted):
            link.send(VoiceStarted().event())
        elif isinstance(event, SpeechEnded):
            link.send(VoiceStopped().event())
        elif isinstance(event, Transcript) and event.text:
            link.send(WyomingTranscript(text=event.text).event())
            home_bus.publish(RoomHeard(satellite=name, room=room, turn=event.turn, text=event.text))
        elif isinstance(event, AgentText):
            link.send(Synthesize(text=event.text).event())
            home_bus.publish(RoomSaid(satellite=name, room=room, turn=event.turn, text=event.text))
        elif isinstance(event, TurnFinished):
            turn = turns.pop(event.turn, _Turn())
            finished = RoomTurnFinished(
                satellite=name,
                room=room,
                turn=event.turn,
                stages=stages(turn.marks),
                understood=turn.understood,
            )
            home_bus.publish(finished)
        elif isinstance(event, AssistantState):
            home_bus.publish(RoomState(satellite=name, room=room, state=event.state, turn=event.turn))
        elif isinstance(event, BargeIn):
            home_bus.publish(
                RoomBargeIn(satellite=name, room=room, turn=event.turn, stopped=True, detail=event.reason)
            )
        elif isinstance(event, BargeInIgnored):
            home_bus.publish(
                RoomBargeIn(satellite=name, room=room, turn=event.turn, stopped=False, detail=event.heard)
            )
        elif isinstance(event, HomeLearned):
            learned = RoomLearned(satellite=name, room=room, devices=event.devices, seconds=event.seconds)
            home_bus.publish(learned)


@dataclass
class _Turn:
    """A room's turn as its events go by: when each stage ended, and whether it was understood."""

    marks: dict[str, float] = field(default_factory=dict)
    understood: bool = True


def _note(turns: OrderedDict[int, _Turn], event: Event) -> None:
    """Mark `event` on its turn (kept in `turns` until it finishes; at most OPEN_KEPT of them)."""
    if not isinstance(event, SpeechEnded | Transcript | AgentText | TtsStarted):
        return
    turn = turns.get(event.turn)
    if turn is None:
        turn = turns[event.turn] = _Turn()
        while len(turns) > OPEN_KEPT:
            turns.popitem(last=False)
    mark(turn.marks, event)
    if isinstance(event, AgentText):
        turn.understood = turn.understood and event.understood
