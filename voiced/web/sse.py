"""`GET /api/events`: every bus event as SSE, with `Last-Event-ID` replay from the hub's ring."""

from __future__ import annotations

from collections.abc import AsyncIterator

from sse_starlette.sse import EventSourceResponse, ServerSentEvent
from starlette.requests import Request
from starlette.responses import Response

from voiced.bus import SubscriptionClosed
from voiced.safe_text import clean
from voiced.web.hub import EventHub, Stamped

RETRY_MS = 1000  # how soon a browser reconnects (after a daemon restart, say)
PING_S = 15


def last_event_id(request: Request) -> str | None:
    """The browser's header on a reconnect; `?last_id=` on a first connect (0 = all kept)."""
    given = request.headers.get("last-event-id") or request.query_params.get("last_id")
    return None if given is None else clean(given)


async def events(request: Request, hub: EventHub) -> Response:
    live, missed = hub.subscribe(last_event_id(request))

    async def stream() -> AsyncIterator[ServerSentEvent]:
        try:
            sent = 0
            for stamped in missed:
                sent = stamped.seq
                yield ServerSentEvent(
                    stamped.data, event=stamped.name, id=hub.event_id(stamped), retry=RETRY_MS
                )
            while True:
                try:
                    event = await live.get()
                except SubscriptionClosed:
                    return  # too far behind, or shutting down: the browser reconnects and replays
                if isinstance(event, Stamped) and event.seq > sent:
                    stamped = event
                    yield ServerSentEvent(
                        stamped.data, event=stamped.name, id=hub.event_id(stamped), retry=RETRY_MS
                    )
        finally:
            hub.unsubscribe(live)

    return EventSourceResponse(stream(), ping=PING_S, headers={"Cache-Control": "no-cache"})
