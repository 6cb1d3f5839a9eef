"""A stale offline notice (issue 28): "Just so you know, the kitchen light is offline" is dropped once
the light is back, so it is not said on the next turn nor at the next start. The brain, its store and
the offline thinkers are the real ones; the events are those the devices' gateway publishes."""

from __future__ import annotations

import asyncio
from pathlib import Path

from voiced.brain.setup import build_brain
from voiced.brain.state import TurnRecord
from voiced.bus import EventBus
from voiced.config import BrainConfig, Config
from voiced.devices.registry import DeviceRegistry
from voiced.events import CommandRefused, CommandSent, DeviceAvailability, DeviceStateChanged, Event

OFFLINE = "Just so you know, the kitchen light is offline."
REFUSED = CommandRefused(turn=1, device="kitchen_light", reason="kitchen light is offline; nothing sent")
ANSWERED = (
    CommandSent(
        turn=0, device="kitchen_light", topic="zigbee2mqtt/kitchen_light/set", payload='{"state":"ON"}'
    ),
    DeviceStateChanged(device="kitchen_light", state={"state": "ON"}),
)


def session(
    tmp_path: Path, registry: DeviceRegistry, during: tuple[Event, ...], after: tuple[Event, ...]
) -> tuple[str | None, str | None]:
    """Turn 1 asks for the light and it is refused as offline, with `during` on the event spine before
    its analysis; `after` it, with no turn between, the daemon stops. What the next turn would say
    first, in this run, and then in the next run, started from the saved state."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    config = Config(brain=BrainConfig(state_file=tmp_path / "state.sqlite"))

    async def first_run() -> str | None:
        bus = EventBus()
        brain = build_brain(config, registry, bus)
        bus.publish(REFUSED)
        for event in during:
            bus.publish(event)
        brain.finished(TurnRecord(turn=1, user="turn on the kitchen light", reply="It's offline."))
        assert await brain.barrier(2)
        for event in after:
            bus.publish(event)
        await asyncio.sleep(0)
        said = None
        if not after:  # with `after`, no turn before the stop; else turn 2, as the daemon has it
            said = brain.context(2).say
            brain.finished(TurnRecord(turn=2, user="thanks", reply="You're welcome."))
            assert await brain.barrier(3)
        await brain.aclose()
        return said

    async def next_run() -> str | None:
        brain = build_brain(config, registry, EventBus())
        said = brain.context(1).say
        await brain.aclose()
        return said

    in_run = asyncio.run(first_run())
    return in_run, asyncio.run(next_run())


def test_an_offline_notice_is_said_while_the_device_stays_offline(
    tmp_path: Path, registry: DeviceRegistry
) -> None:
    assert session(tmp_path, registry, during=(), after=()) == (OFFLINE, None)  # said once, then used up
    assert session(tmp_path / "again", registry, during=(), after=(REFUSED,)) == (None, OFFLINE)


def test_a_device_that_answered_a_command_since_is_not_said_offline_at_the_next_start(
    tmp_path: Path, registry: DeviceRegistry
) -> None:
    assert session(tmp_path, registry, during=(), after=ANSWERED) == (None, None)


def test_a_device_reported_online_again_drops_the_notice(tmp_path: Path, registry: DeviceRegistry) -> None:
    back = (DeviceAvailability(device="kitchen_light", online=True),)
    assert session(tmp_path, registry, during=back, after=()) == (None, None)  # back before the analysis
    assert session(tmp_path / "2", registry, during=(), after=back) == (None, None)
    # another device back says nothing of this one
    other = (DeviceAvailability(device="bedroom_light", online=True),)
    assert session(tmp_path / "3", registry, during=(), after=other) == (None, OFFLINE)
    # back, then refused as offline again: the notice stands
    assert session(tmp_path / "4", registry, during=(), after=(*back, REFUSED)) == (None, OFFLINE)
