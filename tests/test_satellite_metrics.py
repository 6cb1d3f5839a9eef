"""/metrics labels the satellites' connection and turns by satellite and room, and every room's
commands, turns, stages and barge-ins by room (the local room's too)."""

from __future__ import annotations

from voiced.events import (
    AgentText,
    BargeIn,
    CommandRefused,
    CommandSent,
    SpeechEnded,
    Transcript,
    TurnFinished,
)
from voiced.satellites.events import RoomBargeIn, RoomTurnFinished, SatelliteConnected, SatelliteDisconnected
from voiced.web.metrics import Metrics
from voiced.web.turns import TurnLog


def test_satellites_and_their_rooms_turns_are_metrics() -> None:
    metrics = Metrics()
    kitchen = {"satellite": "kitchen_satellite", "room": "kitchen"}
    bedroom = {"satellite": "bedroom_satellite", "room": "bedroom"}
    metrics.observe(SatelliteConnected(**kitchen, uri="tcp://127.0.0.1:10700"), None)
    metrics.observe(SatelliteConnected(**bedroom, uri="tcp://127.0.0.1:10701"), None)
    metrics.observe(SatelliteDisconnected(**bedroom, reason="it closed the connection", retry_s=0.5), None)
    for turn in (20000001, 20000002):
        metrics.observe(RoomTurnFinished(**kitchen, turn=turn), None)
    text = metrics.render().decode()
    assert 'voiced_satellite_connected{room="kitchen",satellite="kitchen_satellite"} 1.0' in text
    assert 'voiced_satellite_connected{room="bedroom",satellite="bedroom_satellite"} 0.0' in text
    assert 'voiced_room_turns_total{room="kitchen",satellite="kitchen_satellite"} 2.0' in text


def test_a_room_s_commands_turn_stages_and_barge_ins_are_labelled_by_its_room() -> None:
    metrics = Metrics()
    kitchen = {"satellite": "kitchen_satellite", "room": "kitchen"}
    sent = CommandSent(turn=20000001, device="kitchen_light", topic="z/set", payload="{}", room="kitchen")
    metrics.observe(sent, None)
    metrics.observe(CommandRefused(turn=20000002, device="diffuser", reason="offline", room="kitchen"), None)
    metrics.observe(CommandSent(turn=0, device="diffuser", topic="z/set", payload="{}", task_id="v1"), None)
    stages = {"asr": 0.4, "agent": 0.02, "speech_end_to_audio": 1.1}
    metrics.observe(RoomTurnFinished(**kitchen, turn=20000001, stages=stages, understood=False), None)
    metrics.observe(RoomBargeIn(**kitchen, turn=20000001, stopped=True, detail="heard 'stop'"), None)
    metrics.observe(RoomBargeIn(**kitchen, turn=20000001, stopped=False, detail="uh-huh"), None)
    text = metrics.render().decode()
    assert 'voiced_device_commands_total{device="kitchen_light",result="sent",room="kitchen"} 1.0' in text
    assert 'voiced_device_commands_total{device="diffuser",result="refused",room="kitchen"} 1.0' in text
    assert 'voiced_device_commands_total{device="diffuser",result="sent",room=""} 1.0' in text  # a scene's
    assert 'voiced_stage_seconds_count{room="kitchen",stage="asr"} 1.0' in text
    assert 'voiced_stage_seconds_sum{room="kitchen",stage="speech_end_to_audio"} 1.1' in text
    assert 'voiced_turns_total{room="kitchen"} 1.0' in text
    assert 'voiced_turns_not_understood_total{room="kitchen"} 1.0' in text
    assert 'voiced_barge_ins_total{room="kitchen"} 1.0' in text
    assert 'voiced_barge_ins_ignored_total{room="kitchen"} 1.0' in text


def test_the_local_room_s_turns_are_labelled_by_the_room_its_turn_finished_names() -> None:
    """The web's turn log and the metrics, fed the local daemon's events as the hub feeds them."""
    metrics, turns = Metrics(), TurnLog()
    events = [
        SpeechEnded(turn=3, duration_s=1.2, voice_end_t=10.0, room="bedroom", t=10.3),
        Transcript(turn=3, text="turn on the bedroom light", room="bedroom", t=10.8),
        AgentText(turn=3, text="Bedroom light on.", understood=True, t=10.85),
        BargeIn(turn=3, reason="heard 'stop'", room="bedroom"),
        TurnFinished(turn=3, room="bedroom"),
    ]
    for event in events:
        metrics.observe(event, turns.observe(event))
    text = metrics.render().decode()
    assert 'voiced_stage_seconds_count{room="bedroom",stage="hangover"} 1.0' in text
    assert 'voiced_stage_seconds_count{room="bedroom",stage="asr"} 1.0' in text
    assert 'voiced_turns_total{room="bedroom"} 1.0' in text
    assert 'voiced_barge_ins_total{room="bedroom"} 1.0' in text
    assert turns.recent(1)[0]["room"] == "bedroom"
