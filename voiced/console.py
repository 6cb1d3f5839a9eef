"""Live view of the event stream: a line per thing a person cares about, all events with -v."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import TextIO

from voiced.events import (
    AgentText,
    BrokerStatus,
    CommandRefused,
    CommandSent,
    DeviceStateChanged,
    Event,
    EventBus,
    Ready,
    Transcript,
)


def describe(event: Event) -> str | None:
    if isinstance(event, Ready):
        return "voiced is ready; listening."
    if isinstance(event, Transcript):
        return f"[turn {event.turn}] you said: {event.text or '(nothing intelligible)'}"
    if isinstance(event, AgentText):
        return f"[turn {event.turn}] voiced: {event.text}"
    if isinstance(event, CommandSent):
        return f"[turn {event.turn}]   -> {event.topic} {event.payload}"
    if isinstance(event, CommandRefused):
        return f"[turn {event.turn}]   !! {event.device}: {event.reason}"
    if isinstance(event, DeviceStateChanged):
        return f"  device {event.device}: {json.dumps(event.state, separators=(',', ':'))}"
    if isinstance(event, BrokerStatus):
        return "  MQTT broker connected" if event.connected else f"  MQTT broker unavailable: {event.detail}"
    return None


async def print_events(
    bus: EventBus, *, verbose: bool, out: TextIO = sys.stdout, events_file: Path | None = None
) -> None:
    """Runs until cancelled; owned by the caller."""
    queue = bus.subscribe()
    log = events_file.open("w", encoding="utf-8") if events_file else None
    try:
        while True:
            event = await queue.get()
            if log is not None:
                log.write(json.dumps(event.to_dict(), default=str) + "\n")
                log.flush()
            line = describe(event)
            if verbose:
                fields = {k: v for k, v in event.to_dict().items() if k not in ("kind", "t")}
                line = f"{event.t:12.3f} {event.kind:<16} {json.dumps(fields, default=str)}"
            if line is not None:
                print(line, file=out, flush=True)
    finally:
        bus.unsubscribe(queue)
        if log is not None:
            log.close()


async def drain_printer(task: asyncio.Task[None]) -> None:
    """Let the printer catch up on queued events, then stop it."""
    await asyncio.sleep(0.05)
    task.cancel()
    await asyncio.wait([task], timeout=2)
