"""The asyncio bus that carries events to subscribers; publishing never blocks.

Every subscriber has a bounded queue and says what happens when it is full:
- ``drop_oldest`` (the daemon's own parts): the oldest queued event is dropped and counted,
  so a stalled part never grows memory and still sees what happens next;
- ``disconnect`` (web clients): the subscription is closed and removed; its reader gets
  SubscriptionClosed once it has read what was queued, and may subscribe again.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Literal

from voiced.events import Event

_LOGGER = logging.getLogger(__name__)

Overflow = Literal["drop_oldest", "disconnect"]
DEFAULT_LIMIT = 10_000  # events; a turn publishes a few dozen


class SubscriptionClosed(Exception):
    """The subscriber fell too far behind (or unsubscribed) and was let go."""


class Subscription:
    """One subscriber's bounded queue; read it with `await get()`."""

    def __init__(self, name: str, limit: int, overflow: Overflow) -> None:
        self.name = name
        self.overflow = overflow
        self.dropped = 0
        self.closed = False
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue(maxsize=limit + 1)  # +1: the close mark
        self._limit = limit

    async def get(self) -> Event:
        event = await self._queue.get()
        if event is None:
            raise SubscriptionClosed(f"{self.name}: closed after {self.dropped} dropped events")
        return event

    def get_nowait(self) -> Event:
        event = self._queue.get_nowait()
        if event is None:
            raise SubscriptionClosed(f"{self.name}: closed")
        return event

    def empty(self) -> bool:
        return self._queue.empty()

    def qsize(self) -> int:
        return self._queue.qsize()

    def offer(self, event: Event) -> bool:
        """Queue `event`; False when the subscription has been closed (now or before)."""
        if self.closed:
            return False
        if self._queue.qsize() < self._limit:
            self._queue.put_nowait(event)
            return True
        self.dropped += 1
        if self.overflow == "disconnect":
            self.close()
            _LOGGER.warning(
                "subscriber %s fell %d events behind and was disconnected", self.name, self._limit
            )
            return False
        self._queue.get_nowait()
        self._queue.put_nowait(event)
        if self.dropped in (1, 10, 100) or self.dropped % 1000 == 0:
            _LOGGER.warning("subscriber %s is behind: %d events dropped so far", self.name, self.dropped)
        return True

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._queue.put_nowait(None)  # the one slot kept free for it


class EventBus:
    """Fan-out of events to bounded subscriber queues."""

    def __init__(self) -> None:
        self._subscriptions: list[Subscription] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._latest: dict[str, Event] = {}  # the last event of each kind: one per kind, ever

    def bind_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def subscribe(
        self, name: str = "subscriber", *, limit: int = DEFAULT_LIMIT, overflow: Overflow = "drop_oldest"
    ) -> Subscription:
        subscription = Subscription(name, limit, overflow)
        self._subscriptions.append(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        if subscription in self._subscriptions:
            self._subscriptions.remove(subscription)
        subscription.close()

    @property
    def subscribers(self) -> int:
        return len(self._subscriptions)

    def latest(self, kind: str) -> Event | None:
        """The last event of `kind` published, for a part that subscribes late and needs to know
        what is true now (the web hub: the assistant's state was said before it subscribed)."""
        return self._latest.get(kind)

    def publish(self, event: Event) -> None:
        _LOGGER.debug("event %s", event.kind)
        self._latest[event.kind] = event
        for subscription in list(self._subscriptions):
            if not subscription.offer(event):
                self._subscriptions.remove(subscription)

    def publish_threadsafe(self, event: Event) -> None:
        """Publish from a foreign thread (paho network thread, audio callbacks)."""
        if self._loop is None or self._loop.is_closed():
            return
        self._loop.call_soon_threadsafe(self.publish, event)
