"""Every satellite of the config, each in its room, for as long as the block runs."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Sequence

from voiced.config_satellites import SatelliteConfig
from voiced.satellites.link import DEFAULT_TIMING, LinkTiming
from voiced.satellites.room import ROOM_TURNS, Home, SatelliteRoom

_LOGGER = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def serve_satellites(
    home: Home, satellites: Sequence[SatelliteConfig], timing: LinkTiming = DEFAULT_TIMING
) -> AsyncIterator[list[SatelliteRoom]]:
    """Each satellite's room, started; all of them stopped, in reverse order, when the block ends."""
    async with contextlib.AsyncExitStack() as stack:
        rooms = []
        for index, satellite in enumerate(satellites):
            room = SatelliteRoom(satellite, home, first_turn=(index + 1) * ROOM_TURNS, timing=timing)
            rooms.append(await stack.enter_async_context(room))
        if rooms:
            _LOGGER.info(
                "serving %d satellite(s): %s",
                len(rooms),
                ", ".join(f"{room.satellite.name} ({room.satellite.room})" for room in rooms),
            )
        yield rooms
