"""Live view of the event stream: a line per thing a person cares about, all events with -v."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from pathlib import Path
from typing import TextIO

from voiced.bus import EventBus
from voiced.devices.payloads import excerpt
from voiced.events import (
    AgentText,
    AgentToolCall,
    BarrierWait,
    BrainFinished,
    BrokerStatus,
    CommandRefused,
    CommandSent,
    DeviceAvailability,
    DeviceStateChanged,
    Event,
    MuteChanged,
    PlanEvent,
    Ready,
    Transcript,
    VibeCancelled,
    VibeComplete,
    VibeDropped,
    VibeError,
    VibeResumed,
    VibeStarted,
    VibeToolEnd,
    VibeToolStart,
    WakeWindowClosed,
    WakeWordDetected,
)
from voiced.satellites.events import SatelliteEvent
from voiced.tasks import cancel_and_wait

_LOGGER = logging.getLogger(__name__)
# A device state is under 1 KB; a hostile one must not flood the terminal or the log.
# The --events file keeps each event whole (payloads over 64 KB never get that far).
STATE_CHARS = 500
LINE_CHARS = 300


def _compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), default=str)


def _clock(at: float) -> str:
    """Wall-clock time of day with milliseconds, as a person reads a log."""
    return time.strftime("%H:%M:%S", time.localtime(at)) + f".{int(at % 1 * 1000):03d}"


def thought(event: Event) -> str | None:
    """The thought chain of `voiced run -v`: what the main agent and the vibe agent are doing."""
    if isinstance(event, AgentText):
        return f"[MASTER] {event.text}"
    if isinstance(event, AgentToolCall):
        return f"[MASTER] {event.tool}({event.input}) -> {event.result}"
    if isinstance(event, VibeStarted):
        return f"[VIBE] {event.task_id} started for {event.request!r}"
    if isinstance(event, VibeToolStart):
        return f"[VIBE] {event.task_id} {event.tool} {_compact(event.input)} ..."
    if isinstance(event, VibeToolEnd):
        return f"[VIBE] {event.task_id} {event.tool} -> {event.result}"
    if isinstance(event, VibeComplete):
        steps = len(event.plan.get("steps", []))
        return f"[VIBE] {event.task_id} complete ({event.plan.get('name')}, {steps} steps)"
    if isinstance(event, BrainFinished):
        if event.failed:
            return f"[BRAIN] turn {event.turn}: analysis not applied ({event.failed})"
        notice = f"; notice: {event.notice}" if event.notice else ""
        return f"[BRAIN] turn {event.turn} analysed in {event.run_s:.2f} s{notice}"
    if isinstance(event, BarrierWait):
        outcome = "gave up" if event.timed_out else "done"
        return f"[BRAIN] turn {event.turn} waited {event.waited_s:.2f} s for the last analysis ({outcome})"
    if isinstance(event, VibeError):
        return f"[VIBE] {event.task_id} failed: {event.error}"
    if isinstance(event, PlanEvent):
        step = f" step {event.step}" if event.step is not None else ""
        extra = f" {_compact(event.data)}" if event.data else ""
        return f"[PLAN] {event.task_id} {event.kind.removeprefix('plan_')}{step}: {event.detail}{extra}"
    if isinstance(event, VibeCancelled):
        return f"[VIBE] {event.task_id} cancelled: {event.reason}"
    if isinstance(event, VibeResumed):
        return (
            f"[VIBE] {event.task_id} resumed after a restart for {event.request!r} "
            f"({event.steps_done} device steps done, {event.steps_left} left; begun {event.age_s:.0f} s ago)"
        )
    if isinstance(event, VibeDropped):
        return f"[VIBE] {event.task_id} not resumed: {event.reason}"
    return None


def describe(event: Event) -> str | None:
    if isinstance(event, SatelliteEvent):
        return event.described()
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
        return f"  device {event.device}: {excerpt(_compact(event.state), STATE_CHARS)}"
    if isinstance(event, DeviceAvailability):
        return f"  device {event.device} is {'online' if event.online else 'offline'}"
    if isinstance(
        event, VibeStarted | VibeComplete | VibeError | VibeCancelled | VibeResumed | VibeDropped | PlanEvent
    ):
        return thought(event)
    if isinstance(event, WakeWordDetected):
        return f"  ({event.word}: listening)"
    if isinstance(event, WakeWindowClosed):
        return f"  (waiting for {event.word})"
    if isinstance(event, MuteChanged):
        return "  microphone muted" if event.muted else "  microphone on"
    if isinstance(event, BrokerStatus):
        return "  MQTT broker connected" if event.connected else f"  MQTT broker unavailable: {event.detail}"
    return None


async def print_events(
    bus: EventBus, *, verbose: bool, out: TextIO = sys.stdout, events_file: Path | None = None
) -> None:
    """Runs until cancelled; owned by the caller."""
    queue = bus.subscribe("console")
    log = events_file.open("w", encoding="utf-8") if events_file else None
    try:
        while True:
            event = await queue.get()
            try:
                _show(event, verbose, out, log)
            except (ValueError, TypeError, RecursionError) as exc:
                # One odd event must not silence the printer for the rest of the run.
                _LOGGER.warning("event %s not shown: %s", event.kind, excerpt(str(exc)))
    finally:
        bus.unsubscribe(queue)
        if log is not None:
            log.close()


def _show(event: Event, verbose: bool, out: TextIO, log: TextIO | None) -> None:
    if log is not None:
        log.write(json.dumps(event.to_dict(), default=str) + "\n")
        log.flush()
    line = describe(event)
    if verbose:
        fields = {k: v for k, v in event.to_dict().items() if k not in ("kind", "t", "at")}
        line = (
            thought(event) or f"{_clock(event.at)} {event.kind:<16} {excerpt(_compact(fields), LINE_CHARS)}"
        )
    if line is not None:
        print(line, file=out, flush=True)


async def drain_printer(task: asyncio.Task[None]) -> None:
    """Let the printer catch up on queued events, then stop it."""
    await asyncio.sleep(0.05)
    await cancel_and_wait([task], timeout_s=2)
