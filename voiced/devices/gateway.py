"""The daemon's side of the devices: sends checked commands, tracks reported state."""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

from voiced.config import MqttConfig
from voiced.devices.model import DeviceCommand, encode
from voiced.devices.mqtt import MqttLink
from voiced.devices.registry import DeviceRegistry
from voiced.events import BrokerStatus, DeviceStateChanged, EventBus

_LOGGER = logging.getLogger(__name__)


class DeviceGateway:
    def __init__(self, registry: DeviceRegistry, mqtt_config: MqttConfig, bus: EventBus) -> None:
        self._registry = registry
        self._bus = bus
        self._states: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._link = MqttLink(
            mqtt_config,
            client_id=mqtt_config.client_id,
            subscriptions=[device.state_topic for device in registry],
            on_message=self._handle_state,
            on_status=lambda up, detail: bus.publish_threadsafe(BrokerStatus(connected=up, detail=detail)),
        )

    @property
    def connected(self) -> bool:
        return self._link.connected

    def start(self) -> None:
        self._link.start()

    async def wait_connected(self, timeout: float) -> bool:
        return await self._link.wait_connected(timeout)

    def stop(self) -> None:
        self._link.stop()

    def state_of(self, name: str) -> dict[str, Any] | None:
        with self._lock:
            state = self._states.get(name)
            return dict(state) if state is not None else None

    def send(self, command: DeviceCommand) -> tuple[str, str]:
        """Check, clamp and publish; raises DeviceError or BrokerUnavailable. Returns topic, payload."""
        topic, prepared = self._registry.prepare(command)
        payload = encode(prepared)
        self._link.publish(topic, payload)
        return topic, payload.decode()

    def _handle_state(self, topic: str, payload: bytes) -> None:
        device = self._registry.by_state_topic(topic)
        if device is None:
            return
        try:
            state = json.loads(payload)
        except (UnicodeDecodeError, json.JSONDecodeError):
            _LOGGER.warning("%s: ignoring malformed state on %s: %r", device.name, topic, payload[:200])
            return
        if not isinstance(state, dict):
            _LOGGER.warning("%s: ignoring state that is not a JSON object: %r", device.name, payload[:200])
            return
        with self._lock:
            self._states[device.name] = state
        self._bus.publish_threadsafe(DeviceStateChanged(device=device.name, state=state))
