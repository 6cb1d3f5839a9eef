"""A line outside a turn's reply (a scene's narration, the interview's closing summary, a plan's news)
is said in the room of its turn (issue 29): a satellite's room registers its voice for the turns it
numbers while it is served; any other turn's line, or one for a satellite that is away, is the daemon's
own speaker's. The line waits for a pause of its own room, not of another. Real speech outputs with
piper's voice, each on its own bus and speaker (one that takes as long as the audio would)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import pytest

from tests.speech_fixtures import RealTimeSink, synthesizer
from voiced.bus import EventBus, Subscription
from voiced.daemon import OUTSIDE_TURN_BASE
from voiced.events import AgentText, TurnFinished
from voiced.mouth.speech import SpeechOutput
from voiced.satellites.room import ROOM_TURNS
from voiced.vibe.narrator import RoomVoice, RoomVoices, SpokenNarrator

KITCHEN, BEDROOM = ROOM_TURNS, 2 * ROOM_TURNS  # the first two satellites' rooms, as serve_satellites numbers


@dataclass
class Room:
    """A room's voice as the daemon (or a satellite's room) builds it: its speech on its own bus and
    speaker; whether a turn of its own is under way, and whether its satellite is connected."""

    name: str
    bus: EventBus = field(default_factory=EventBus)
    sink: RealTimeSink = field(default_factory=RealTimeSink)
    busy: bool = False
    connected: bool = True

    def __post_init__(self) -> None:
        self.speech = SpeechOutput(
            synthesizer(), self.sink, self.bus, sentence_silence_s=0.05, room=self.name
        )
        self.voice = RoomVoice(self.name, self.speech, self.bus, lambda: self.busy, lambda: self.connected)
        self.events: Subscription = self.bus.subscribe(f"{self.name}-test", limit=10_000)

    def said(self) -> list[tuple[int, str, str]]:
        """(turn, text, room) of each line this room's speech said since the last call."""
        lines = []
        while not self.events.empty():
            event = self.events.get_nowait()
            if isinstance(event, AgentText):
                lines.append((event.turn, event.text, event.room))
        return lines


def turns_of(base: int) -> range:
    return range(base + 1, base + ROOM_TURNS)


def test_a_turn_s_line_is_its_room_s_and_any_other_the_local_speaker_s() -> None:
    local, kitchen, bedroom = Room("the daemon's own speaker"), Room("kitchen"), Room("bedroom")
    voices = RoomVoices(local.voice)
    assert voices.of_turn(KITCHEN + 3) is local.voice  # no satellite's room is served yet
    with voices.serving(turns_of(KITCHEN), kitchen.voice), voices.serving(turns_of(BEDROOM), bedroom.voice):
        assert voices.of_turn(KITCHEN + 1) is kitchen.voice and voices.of_turn(BEDROOM - 1) is kitchen.voice
        assert voices.of_turn(BEDROOM + 1) is bedroom.voice
        # the daemon's own microphone's turns, the web's typed ones, a plan's news (turn 0), a satellite's
        # room not served: the local speaker
        for turn in (0, 7, OUTSIDE_TURN_BASE + 1, 3 * ROOM_TURNS + 1):
            assert voices.of_turn(turn) is local.voice, turn
        kitchen.connected = False  # its satellite is away: its line is not lost in the void
        assert voices.of_turn(KITCHEN + 2) is local.voice and voices.of_turn(BEDROOM + 2) is bedroom.voice
        kitchen.connected = True
        assert voices.of_turn(KITCHEN + 2) is kitchen.voice
        hall = Room("hall").voice  # two rooms never number the same turns
        with (
            pytest.raises(ValueError, match="kitchen"),
            voices.serving(range(BEDROOM - 5, BEDROOM + 5), hall),
        ):
            pass
    assert voices.of_turn(KITCHEN + 1) is local.voice and voices.of_turn(BEDROOM + 1) is local.voice


def test_a_kitchen_line_waits_for_the_kitchen_s_pause_and_is_said_there_only() -> None:
    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        local, kitchen = Room("bedroom"), Room("kitchen")
        for room in (local, kitchen):
            room.bus.bind_loop(loop)
        voices = RoomVoices(local.voice)
        narrator = SpokenNarrator(voices, wait_s=20.0)
        summary = "I've set up 4 scenes for you."
        with voices.serving(turns_of(KITCHEN), kitchen.voice):
            kitchen.busy = True  # the kitchen's turn is still under way; the daemon's own room is quiet
            line = asyncio.create_task(narrator(summary, KITCHEN + 6))
            await asyncio.sleep(0.5)
            assert not line.done() and kitchen.said() == [] and local.said() == []
            kitchen.busy = False  # its turn ends: the kitchen's bus says so, and the line goes
            kitchen.bus.publish(TurnFinished(turn=KITCHEN + 6, room="kitchen"))
            assert await asyncio.wait_for(line, 20)
            assert kitchen.said() == [(KITCHEN + 6, summary, "kitchen")]
            assert local.said() == [] and local.sink.played_s == 0.0 and kitchen.sink.played_s > 1.0

            # a line of no room's turn (a scene begun on the web) does not wait for the kitchen
            kitchen.busy = True
            news = "The evening scene is on."
            assert await asyncio.wait_for(narrator(news, OUTSIDE_TURN_BASE + 1), 20)
            assert local.said() == [(OUTSIDE_TURN_BASE + 1, news, "bedroom")] and kitchen.said() == []

            # the kitchen's satellite is away: its line is said on the daemon's own speaker
            kitchen.connected = False
            assert await asyncio.wait_for(narrator(summary, KITCHEN + 7), 20)
            assert local.said() == [(KITCHEN + 7, summary, "bedroom")] and kitchen.said() == []

            # the room's floor never frees within the wait: the line is skipped, said nowhere
            kitchen.connected = True
            short = SpokenNarrator(voices, wait_s=0.3)
            assert not await asyncio.wait_for(short(summary, KITCHEN + 8), 5)
            assert kitchen.said() == [] and local.said() == []

    asyncio.run(asyncio.wait_for(scenario(), 90))
