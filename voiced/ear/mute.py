"""The microphone's mute switch: while it is on, the ear is deaf (it drops what it hears)."""

from __future__ import annotations

import logging

from voiced.bus import EventBus
from voiced.events import MuteChanged

_LOGGER = logging.getLogger(__name__)


class MuteSwitch:
    def __init__(self, bus: EventBus) -> None:
        self._bus = bus
        self.muted = False

    def set(self, muted: bool) -> None:
        if muted != self.muted:
            self.muted = muted
            _LOGGER.info("microphone %s", "muted" if muted else "unmuted")
            self._bus.publish(MuteChanged(muted=muted))

    def toggle(self) -> None:
        """SIGUSR1: mute if listening, listen if muted."""
        self.set(not self.muted)

    def __call__(self) -> bool:
        """The ear's `is_deaf` check."""
        return self.muted
