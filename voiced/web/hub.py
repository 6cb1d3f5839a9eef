"""One bus subscriber for the whole web side: numbers each event, keeps a bounded ring for
`Last-Event-ID` replay, feeds the turn log and the metrics, and fans out to web clients.

Each event is serialised once here, not once per client. Clients subscribe to the hub's own
bus with `overflow="disconnect"`: one that stops reading is dropped, never grows memory.

Some events say what is true now (the assistant's state, the broker link, mute): the hub starts
with the last of each that was published before it subscribed, and a client that connects is
sent the last of each even when the ring has long moved past it, so a page shows the truth from
its first paint, not "connecting…" until something changes.
"""

from __future__ import annotations

import contextlib
import json
import logging
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from voiced.bus import EventBus, Subscription, SubscriptionClosed
from voiced.console import thought
from voiced.events import Event

_LOGGER = logging.getLogger(__name__)

RING_SIZE = 1000  # events kept for replay
CLIENT_LIMIT = 256  # events a client may fall behind before it is let go
CURRENT_KINDS = ("assistant_state", "broker_status", "mute_changed")  # each one says what is true now
# Each says what is true now in one satellite's room: kept per satellite, not per kind.
SATELLITE_KINDS = {
    "satellite_connected": "link",
    "satellite_disconnected": "link",
    "room_heard": "heard",
    "room_said": "said",
    "room_turn_finished": "finished",
    "room_state": "state",
}
Annotate = Callable[[Event], dict[str, Any]]  # extra fields for an event's JSON (words for people)


@dataclass(frozen=True)
class Stamped(Event):
    """A bus event as the web sends it: its SSE id, its name (the event's kind) and JSON data."""

    kind: ClassVar[str] = "stamped"
    seq: int
    name: str
    data: str


class EventHub:
    def __init__(
        self,
        bus: EventBus,
        observers: list[Callable[[Event], None]],
        ring_size: int = RING_SIZE,
        annotate: Annotate | None = None,
    ) -> None:
        self._bus = bus
        self._observers = observers
        self._annotate = annotate
        self._clients = EventBus()
        self._ring: deque[Stamped] = deque(maxlen=ring_size)
        self._seq = 0
        self._live: set[Subscription] = set()
        self._current: dict[str, Stamped] = {}  # the last of each of CURRENT_KINDS, and per satellite
        # Ids are "<boot>-<seq>": after a daemon restart an old Last-Event-ID means "replay all".
        self.boot = uuid.uuid4().hex[:8]
        # Subscribed now, kept across a restart of `run`: nothing is lost. What was said before
        # now is taken from the bus's last word of each current kind, in the same breath.
        self._events: Subscription | None = bus.subscribe("web-hub")
        for kind in CURRENT_KINDS:
            if (said := bus.latest(kind)) is not None:
                self.take(said)

    @property
    def seen(self) -> int:
        """Events taken from the bus so far."""
        return self._seq

    @property
    def kept(self) -> int:
        return len(self._ring)

    @property
    def clients(self) -> int:
        return self._clients.subscribers

    def event_id(self, stamped: Stamped) -> str:
        return f"{self.boot}-{stamped.seq}"

    async def run(self) -> None:
        """Runs until cancelled (supervised: started again if it raises); `close_all` ends it."""
        if self._events is None:
            self._events = self._bus.subscribe("web-hub")
        events = self._events
        with contextlib.suppress(SubscriptionClosed):  # closed by `close_all`: the web is stopping
            while True:
                self.take(await events.get())

    def take(self, event: Event) -> None:
        for observe in self._observers:
            try:
                observe(event)
            except Exception:  # one bad observer must not stop the stream
                _LOGGER.exception("web observer failed on %s", event.kind)
        self._seq += 1
        data = event.to_dict()
        if (line := thought(event)) is not None:
            data["thought"] = line
        if self._annotate is not None:
            try:
                data.update(self._annotate(event))
            except Exception:  # words for people are a nicety: the event goes out without them
                _LOGGER.exception("web: could not describe %s", event.kind)
        stamped = Stamped(seq=self._seq, name=event.kind, data=json.dumps(data, default=str))
        self._ring.append(stamped)
        if (key := current_key(event.kind, data)) is not None:
            self._current[key] = stamped
        self._clients.publish(stamped)

    def current(self, kind: str) -> dict[str, Any] | None:
        """The last event of one of CURRENT_KINDS, as the web sends it (None: none yet)."""
        stamped = self._current.get(kind)
        return None if stamped is None else dict(json.loads(stamped.data))

    def subscribe(self, last_id: str | None) -> tuple[Subscription, list[Stamped]]:
        """A live subscription, and what it missed after `last_id` (None: nothing; "0": all kept)."""
        live = self._clients.subscribe("web-client", limit=CLIENT_LIMIT, overflow="disconnect")
        self._live.add(live)
        return live, self._replay(last_id)

    def unsubscribe(self, subscription: Subscription) -> None:
        self._live.discard(subscription)
        self._clients.unsubscribe(subscription)

    def close_all(self) -> None:
        """Shutting down: every stream ends once it has sent what it has."""
        for subscription in list(self._live):
            self.unsubscribe(subscription)
        if self._events is not None:
            self._bus.unsubscribe(self._events)
            self._events = None

    def _replay(self, last_id: str | None) -> list[Stamped]:
        if last_id is None:
            return []
        boot, _, seq = last_id.partition("-")
        # isascii: "²".isdigit() is true, and int("²") a ValueError; so is int() of 4,301 digits.
        after = int(seq) if boot == self.boot and seq.isascii() and seq.isdigit() and len(seq) < 19 else 0
        kept = [stamped for stamped in self._ring if stamped.seq > after]
        # What is true now, said before the oldest event kept (or before `after`, and so seen):
        # sent first, in the order it was said.
        oldest = self._ring[0].seq if self._ring else self._seq + 1
        missed = sorted((s for s in self._current.values() if after < s.seq < oldest), key=lambda s: s.seq)
        return missed + kept


def current_key(kind: str, data: dict[str, Any]) -> str | None:
    """Where the hub keeps an event that says what is true now (None: it does not)."""
    if kind in CURRENT_KINDS:
        return kind
    if (part := SATELLITE_KINDS.get(kind)) is not None and isinstance(data.get("satellite"), str):
        return f"{part}:{data['satellite']}"
    return None
