"""Device actions for agents: every command is checked, published, and reported on the bus."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from voiced.devices.gateway import DeviceGateway
from voiced.devices.model import DeviceCommand
from voiced.errors import BrokerUnavailable, DeviceError
from voiced.events import CommandRefused, CommandSent, EventBus

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class ActionResult:
    ok: bool
    message: str  # for a model: what was sent, or why nothing was
    broker_down: bool = False


class DeviceActions:
    def __init__(self, gateway: DeviceGateway, bus: EventBus) -> None:
        self._gateway = gateway
        self._bus = bus

    def state_of(self, name: str) -> dict[str, Any] | None:
        return self._gateway.state_of(name)

    def execute(self, turn: int, command: DeviceCommand) -> ActionResult:
        try:
            topic, payload = self._gateway.send(command)
        except BrokerUnavailable as exc:
            _LOGGER.warning("turn %d: %s", turn, exc)
            self._bus.publish(CommandRefused(turn=turn, device=command.device, reason=str(exc)))
            return ActionResult(False, f"not sent: {exc}", broker_down=True)
        except DeviceError as exc:
            _LOGGER.warning("turn %d: %s", turn, exc)
            self._bus.publish(CommandRefused(turn=turn, device=command.device, reason=str(exc)))
            return ActionResult(False, f"not sent: {exc}")
        self._bus.publish(CommandSent(turn=turn, device=command.device, topic=topic, payload=payload))
        return ActionResult(True, f"sent {payload} to {command.device}")
