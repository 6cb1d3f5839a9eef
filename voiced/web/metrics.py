"""Prometheus metrics, all fed from bus events (through the hub's one subscriber).

A turn's stages, turns, commands and barge-ins are labelled by the room their events name: the
daemon's own (`audio.room`), each satellite's (from its room events), or "" (none set, or no room's:
a scene's commands, the web's). Rooms come from the config, so the labels stay few.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from voiced.events import (
    BargeIn,
    BargeInIgnored,
    BarrierWait,
    BrokerStatus,
    CommandRefused,
    CommandSent,
    Event,
    TaskFailed,
    TaskRecovered,
)
from voiced.satellites.events import RoomBargeIn, RoomTurnFinished, SatelliteConnected, SatelliteDisconnected
from voiced.web.turns import TurnRecord

# Seconds: a stage takes tens of milliseconds to a few seconds.
STAGE_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class Metrics:
    """Its own registry, so several daemons (tests) in one process never share counters."""

    def __init__(self, broker_connected: bool = False) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.stage = Histogram(
            "voiced_stage_seconds",
            "Latency of each stage of a turn",
            ["stage", "room"],
            buckets=STAGE_BUCKETS,
            registry=r,
        )
        self.turns = Counter("voiced_turns", "Turns taken", ["room"], registry=r)
        self.not_understood = Counter(
            "voiced_turns_not_understood", "Turns the agent did not understand", ["room"], registry=r
        )
        self.barge_ins = Counter(
            "voiced_barge_ins", "Replies stopped by the user talking over them", ["room"], registry=r
        )
        self.barge_ins_ignored = Counter(
            "voiced_barge_ins_ignored", "Speech over a reply judged echo or backchannel", ["room"], registry=r
        )
        self.commands = Counter(
            "voiced_device_commands",
            "Device commands by device, result and the room that asked",
            ["device", "result", "room"],
            registry=r,
        )
        self.broker = Gauge("voiced_broker_connected", "1 while the MQTT broker is connected", registry=r)
        self.broker.set(1 if broker_connected else 0)
        self.barrier = Histogram(
            "voiced_brain_barrier_wait_seconds",
            "How long a turn waited for the brain's last analysis",
            buckets=STAGE_BUCKETS,
            registry=r,
        )

        self.task_failures = Counter(
            "voiced_task_failures", "Background task failures (each is restarted)", ["task"], registry=r
        )
        self.degraded = Gauge(
            "voiced_tasks_degraded", "Background tasks failing or not yet well since a restart", registry=r
        )
        self._failing: set[str] = set()
        self.satellites = Gauge(
            "voiced_satellite_connected",
            "1 while the satellite is connected",
            ["satellite", "room"],
            registry=r,
        )
        self.room_turns = Counter(
            "voiced_room_turns",
            "Turns taken through a satellite, by its room",
            ["room", "satellite"],
            registry=r,
        )

    def observe(self, event: Event, finished: TurnRecord | None) -> None:
        if finished is not None:
            self._turn(finished.room, finished.understood, finished.stages())
        if isinstance(event, BargeIn):
            self.barge_ins.labels(room=event.room).inc()
        elif isinstance(event, BargeInIgnored):
            self.barge_ins_ignored.labels(room=event.room).inc()
        elif isinstance(event, RoomBargeIn):
            (self.barge_ins if event.stopped else self.barge_ins_ignored).labels(room=event.room).inc()
        elif isinstance(event, CommandSent):
            self.commands.labels(device=event.device, result="sent", room=event.room).inc()
        elif isinstance(event, CommandRefused):
            self.commands.labels(device=event.device, result="refused", room=event.room).inc()
        elif isinstance(event, BrokerStatus):
            self.broker.set(1 if event.connected else 0)
        elif isinstance(event, BarrierWait):
            self.barrier.observe(event.waited_s)
        elif isinstance(event, TaskFailed):
            self.task_failures.labels(task=event.task).inc()
            self._failing.add(event.task)
            self.degraded.set(len(self._failing))
        elif isinstance(event, SatelliteConnected | SatelliteDisconnected):
            up = isinstance(event, SatelliteConnected)
            self.satellites.labels(satellite=event.satellite, room=event.room).set(1 if up else 0)
        elif isinstance(event, RoomTurnFinished):
            self.room_turns.labels(room=event.room, satellite=event.satellite).inc()
            self._turn(event.room, event.understood, event.stages)
        elif isinstance(event, TaskRecovered):
            self._failing.discard(event.task)
            self.degraded.set(len(self._failing))

    def _turn(self, room: str, understood: bool, stages: dict[str, float]) -> None:
        self.turns.labels(room=room).inc()
        if not understood:
            self.not_understood.labels(room=room).inc()
        for stage, seconds in stages.items():
            self.stage.labels(stage=stage, room=room).observe(max(0.0, seconds))

    def render(self) -> bytes:
        return generate_latest(self.registry)
