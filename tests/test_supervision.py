"""Background tasks kept running (voiced/supervision.py): restarted after a failure, degraded until
well again, counted on the bus; and in the daemon's own pieces against a real Mosquitto."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Broker
from tests.test_ha_entities import Retained, is_, until
from voiced.brain.brain import Brain
from voiced.brain.setup import home_slots, offline_thinkers
from voiced.brain.state import TurnRecord
from voiced.brain.store import StateStore
from voiced.bus import EventBus
from voiced.config import BrainConfig, Config, HomeAssistantConfig
from voiced.devices.registry import DeviceRegistry
from voiced.ear.mute import MuteSwitch
from voiced.events import AssistantState, TaskFailed, TaskRecovered, Transcript
from voiced.ha_entities import HaEntities
from voiced.safe_text import REPLACEMENT
from voiced.supervision import Supervision
from voiced.web.metrics import Metrics


async def _next(events: object, kind: type, timeout: float = 5.0) -> object:
    while True:
        event = await asyncio.wait_for(events.get(), timeout)  # type: ignore[attr-defined]
        if isinstance(event, kind):
            return event


def test_a_task_that_raises_is_restarted_with_backoff_and_degraded_until_well() -> None:
    async def scenario() -> None:
        bus = EventBus()
        seen = bus.subscribe("test")
        supervision = Supervision(bus, backoff_s=(0.05, 0.1), healthy_after_s=0.3)
        starts: list[int] = []

        async def flaky() -> None:
            starts.append(len(starts))
            if len(starts) <= 2:
                raise OSError(f"failure {len(starts)}")
            await asyncio.sleep(3600)

        supervision.start("flaky", flaky)
        failed = await _next(seen, TaskFailed)
        assert isinstance(failed, TaskFailed)
        assert (failed.task, failed.error, failed.restart_in_s) == ("flaky", "OSError: failure 1", 0.05)
        failed = await _next(seen, TaskFailed)
        assert failed.restart_in_s == 0.1  # type: ignore[attr-defined]
        assert supervision.degraded == ("flaky",)
        recovered = await _next(seen, TaskRecovered)
        assert recovered.task == "flaky"  # type: ignore[attr-defined]
        assert supervision.degraded == () and supervision.failures["flaky"] == 2 and len(starts) == 3
        assert supervision.running("flaky")

        supervision.crash("flaky", ValueError("injected"))
        failed = await _next(seen, TaskFailed)
        assert failed.error == "ValueError: injected" and failed.restart_in_s == 0.05  # type: ignore[attr-defined]
        await _next(seen, TaskRecovered)
        assert len(starts) == 4 and supervision.running("flaky")

        await supervision.stop("flaky")  # its owner closing is no failure
        assert not supervision.running("flaky") and supervision.failures["flaky"] == 3
        with pytest.raises(KeyError):
            supervision.crash("flaky")
        await supervision.aclose()

    asyncio.run(scenario())


def test_a_task_that_returns_is_done_and_cancelling_the_owner_stops_everything() -> None:
    async def scenario() -> None:
        supervision = Supervision()
        ran = asyncio.Event()

        async def once() -> None:
            ran.set()

        supervision.start("once", once)
        supervision.start("forever", lambda: asyncio.sleep(3600))
        with pytest.raises(ValueError, match="supervised already"):
            supervision.start("once", once)
        await asyncio.wait_for(ran.wait(), 5)
        await asyncio.sleep(0.05)
        assert not supervision.running("once") and supervision.running("forever")
        await supervision.aclose()
        assert not supervision.running("forever") and supervision.degraded == ()

    asyncio.run(scenario())


def test_the_home_assistant_entities_come_back_after_their_task_fails(
    broker: Broker, caplog: pytest.LogCaptureFixture
) -> None:
    """Killed by an exception, then a lone surrogate in a transcript: both times the entities go
    on publishing what the assistant does."""
    ha = Retained(broker)

    async def scenario() -> None:
        bus = EventBus()
        seen = bus.subscribe("test")
        mute = MuteSwitch(bus)
        supervision = Supervision(bus, backoff_s=(0.1,), healthy_after_s=0.5)
        entities = HaEntities(
            HomeAssistantConfig(node_id="kitchen"),
            broker.mqtt_config("voiced-ha-test"),
            bus,
            mute=mute.set,
            is_muted=mute,
            supervision=supervision,
        )
        await entities.start()
        try:
            await asyncio.to_thread(ha.wait, "voiced/kitchen/state", is_("idle"))
            supervision.crash("ha-entities")
            await _next(seen, TaskFailed)
            assert supervision.degraded == ("ha-entities",)
            bus.publish(AssistantState(state="listening"))  # while it waits to restart: not lost
            await asyncio.to_thread(ha.wait, "voiced/kitchen/state", is_("listening"))
            await _next(seen, TaskRecovered)

            bus.publish(Transcript(turn=1, text="lights\ud800 on"))
            bus.publish(AssistantState(state="speaking"))
            await asyncio.to_thread(ha.wait, "voiced/kitchen/transcript", is_(f"lights{REPLACEMENT} on"))
            await asyncio.to_thread(ha.wait, "voiced/kitchen/state", is_("speaking"))
            assert supervision.failures["ha-entities"] == 1 and supervision.degraded == ()
        finally:
            await entities.stop()
            await supervision.aclose()

    with caplog.at_level(logging.ERROR, logger="voiced.supervision"):
        try:
            asyncio.run(scenario())
        finally:
            ha.close()
    assert [r.getMessage() for r in caplog.records] == [
        "task ha-entities failed (1 in a row); restarting it in 0.1 s"
    ]


def test_our_availability_is_said_again_when_another_client_overwrites_it(broker: Broker) -> None:
    ha = Retained(broker)
    topic = "voiced/kitchen/availability"
    heard: list[str] = []  # every payload on the topic, in the broker's order
    ha.client.message_callback_add(topic, lambda _c, _u, m: heard.append(json.loads(m.payload)["state"]))

    async def scenario() -> None:
        bus = EventBus()
        mute = MuteSwitch(bus)
        entities = HaEntities(
            HomeAssistantConfig(node_id="kitchen"),
            broker.mqtt_config("voiced-ha-test"),
            bus,
            mute=mute.set,
            is_muted=mute,
        )
        await entities.start()
        try:
            await until(lambda: heard[-1:] == ["online"])
            for _ in range(3):  # a neighbour that keeps at it is answered at most once a second
                seen = len(heard)
                ha.say(topic, '{"state":"offline"}', retain=True)
                await until(lambda: heard[seen:] == ["offline", "online"], timeout=5.0)  # noqa: B023
        finally:
            await entities.stop()
        await until(lambda: heard[-1:] == ["offline"])  # its own, at stop
        await asyncio.sleep(1.5)
        assert heard[-1] == "offline"  # not said again after the stop

    try:
        asyncio.run(scenario())
    finally:
        ha.close()


class _FailsOnce:
    """An analyst (injected, as the LLM's is) whose first analysis raises."""

    def __init__(self, rules: Any) -> None:
        self._rules = rules
        self.calls = 0

    async def analyse(self, state: Any, record: Any) -> Any:
        self.calls += 1
        if self.calls == 1:
            raise ZeroDivisionError("a broken analysis")
        return await self._rules.analyse(state, record)


def test_a_failed_analysis_degrades_the_brain_until_the_next_turn_is_analysed(
    tmp_path: Path, registry: DeviceRegistry
) -> None:
    async def scenario() -> None:
        bus = EventBus()
        seen = bus.subscribe("test")
        supervision = Supervision(bus)
        config = Config(brain=BrainConfig(state_file=tmp_path / "state.sqlite"))
        rules = offline_thinkers(config, registry)
        store = StateStore(config.brain.state_file)
        brain = Brain(
            store=store,
            state=store.open_session(new=True),
            thinkers=dataclasses.replace(rules, analyst=_FailsOnce(rules.analyst)),
            bus=bus,
            config=config.brain,
            supervision=supervision,
            slots=home_slots(registry),
        )
        brain.finished(TurnRecord(turn=1, user="play some jazz", reply="Playing jazz."))
        assert await brain.barrier(2)
        failed = await _next(seen, TaskFailed)
        assert (failed.task, failed.error) == ("brain", "ZeroDivisionError: a broken analysis")  # type: ignore[attr-defined]
        assert supervision.degraded == ("brain",) and brain.state.processed_turns == 0
        brain.finished(TurnRecord(turn=2, user="play some jazz", reply="Playing jazz."))
        assert await brain.barrier(3)
        assert (await _next(seen, TaskRecovered)).task == "brain"  # type: ignore[attr-defined]
        assert supervision.degraded == () and brain.state.processed_turns == 1
        assert brain.state.preferences.genres == ["jazz"]
        await brain.aclose()

    asyncio.run(scenario())


def test_metrics_count_failures_and_the_tasks_still_degraded() -> None:
    metrics = Metrics()
    metrics.observe(TaskFailed(task="web-hub", error="RuntimeError: x", restart_in_s=0.5), None)
    metrics.observe(TaskFailed(task="web-hub", error="RuntimeError: x", restart_in_s=1.0), None)
    metrics.observe(TaskFailed(task="brain", error="ValueError: y", restart_in_s=0.0), None)
    text = metrics.render().decode()
    assert 'voiced_task_failures_total{task="web-hub"} 2.0' in text
    assert "voiced_tasks_degraded 2.0" in text
    metrics.observe(TaskRecovered(task="web-hub"), None)
    assert "voiced_tasks_degraded 1.0" in metrics.render().decode()
