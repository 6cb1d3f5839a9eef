"""The understanding follows the home: when discovered devices come or go, the local intents
learn the new names, rooms and slot lists off the event loop, then take them in one step."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from voiced.bus import EventBus, Subscription
from voiced.devices.registry import DeviceRegistry
from voiced.events import DevicesChanged, HomeLearned
from voiced.mouth.intents import LocalIntentAgent

_LOGGER = logging.getLogger(__name__)


async def follow_home(
    bus: EventBus,
    changes: Subscription,
    registry: DeviceRegistry,
    intents: LocalIntentAgent,
    also: Callable[[], None] | None = None,
) -> None:
    """Run until cancelled; publishes HomeLearned after each change has been learned. `also`:
    run after each learning too (the ear's vocabulary). `changes`: the caller's subscription to `bus`."""
    while True:
        if not isinstance(await changes.get(), DevicesChanged):
            continue
        while not changes.empty():  # several changes in a burst: learn once for all of them
            changes.get_nowait()
        start = time.monotonic()
        # the devices as they are when learning starts: one arriving meanwhile brings its own
        # change, learned next, and must not be announced as learned by this round
        names = tuple(d.name for d in registry)
        learned = await asyncio.to_thread(intents.learn)
        intents.adopt(learned)
        if also is not None:
            also()
        seconds = time.monotonic() - start
        _LOGGER.info("learned the home's %d devices in %.2f s", len(names), seconds)
        bus.publish(HomeLearned(devices=names, seconds=seconds))
