"""Which devices have been heard from since they last failed: a notice that a device is offline
("Just so you know, the desk lamp is offline") is dropped once it is back (issue 28), or it would
be said on the next turn, even at the next start, of a lamp that has since answered a command."""

from __future__ import annotations

import logging

from voiced.brain.state import ConversationState
from voiced.events import CommandRefused, DeviceAvailability, DeviceStateChanged, Event

_LOGGER = logging.getLogger(__name__)
_DROPPED = {
    "system_notice": None,
    "notice_say": None,
    "notice_confirm": False,
    "notice_device": None,
    "notice_room": None,
}


class DeviceNews:
    def __init__(self) -> None:
        self._back: set[str] = set()  # reported online, or a state, since their last refusal

    def seen(self, event: Event) -> None:
        """One event off the spine, in order: a refusal undoes an earlier report of being back."""
        if isinstance(event, CommandRefused):
            self._back.discard(event.device)
        elif isinstance(event, DeviceAvailability):
            (self._back.add if event.online else self._back.discard)(event.device)
        elif isinstance(event, DeviceStateChanged):
            self._back.add(event.device)

    def fresh(self, state: ConversationState) -> ConversationState:
        """`state` without its notice if that notice is about a device that is back; else as it is."""
        device = state.notice_device
        if device is None or device not in self._back:
            return state
        _LOGGER.info("the %s is back: its offline notice is dropped", device)
        return state.model_copy(update=_DROPPED)
