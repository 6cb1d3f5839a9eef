"""The rooms on the page's first paint: what is true now in each satellite's room is kept per
satellite, and replayed to a page that connects after the ring has moved past it."""

from __future__ import annotations

import json

from voiced.bus import EventBus
from voiced.events import Transcript
from voiced.satellites.events import RoomHeard, RoomSaid, RoomTurnFinished, SatelliteConnected
from voiced.web.hub import EventHub, current_key


def test_each_satellite_keeps_its_own_link_heard_and_said_past_the_ring() -> None:
    bus = EventBus()
    hub = EventHub(bus, observers=[], ring_size=3)
    for name, room in (("kitchen-sat", "kitchen"), ("office-sat", "office")):
        hub.take(SatelliteConnected(satellite=name, room=room, uri="tcp://x"))
        hub.take(RoomHeard(satellite=name, room=room, turn=1, text=f"<b>{room}</b> on"))
        hub.take(RoomSaid(satellite=name, room=room, turn=1, text=f"{room} done"))
    hub.take(RoomTurnFinished(satellite="kitchen-sat", room="kitchen", turn=1))
    for n in range(5):  # the ring moves past every satellite event
        hub.take(Transcript(turn=9, text=f"filler {n}"))
    live, replay = hub.subscribe("0")
    hub.unsubscribe(live)
    sent = [(s.name, json.loads(s.data)) for s in replay]
    rooms = [(name, d["satellite"], d.get("text")) for name, d in sent if "satellite" in d]
    assert rooms == [
        ("satellite_connected", "kitchen-sat", None),
        ("room_heard", "kitchen-sat", "<b>kitchen</b> on"),
        ("room_said", "kitchen-sat", "kitchen done"),
        ("satellite_connected", "office-sat", None),
        ("room_heard", "office-sat", "<b>office</b> on"),
        ("room_said", "office-sat", "office done"),
        ("room_turn_finished", "kitchen-sat", None),
    ]
    assert [name for name, _ in sent[-3:]] == ["transcript"] * 3


def test_current_keys() -> None:
    assert current_key("assistant_state", {}) == "assistant_state"
    assert current_key("satellite_disconnected", {"satellite": "k"}) == "link:k"
    assert current_key("satellite_connected", {"satellite": "k"}) == "link:k"
    assert current_key("room_said", {"satellite": "k"}) == "said:k"
    assert current_key("room_state", {"satellite": "k"}) == "state:k"
    assert current_key("transcript", {"satellite": "k"}) is None
    assert current_key("room_heard", {}) is None
