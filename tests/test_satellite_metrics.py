"""/metrics labels the satellites' connection and turns by satellite and room."""

from __future__ import annotations

from voiced.satellites.events import RoomTurnFinished, SatelliteConnected, SatelliteDisconnected
from voiced.web.metrics import Metrics


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
