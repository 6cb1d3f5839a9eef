"""A simulator that plays every declared device on the broker.

It applies each valid command and publishes the new state, retained, on the
device's state topic (after `delay_s`, as real radios take a moment). A malformed
payload is logged and ignored. Devices with an availability topic are announced
online; `offline` ones are announced offline and ignore commands, `silent` ones
take commands but never report (a device that does not confirm).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError

from voiced.config import MqttConfig
from voiced.devices.model import (
    Device,
    DiffuserDevice,
    DiffuserSet,
    LightDevice,
    LightSet,
    MusicSet,
)
from voiced.devices.mqtt import MqttLink
from voiced.devices.payloads import Rejections, excerpt, problems, read_object
from voiced.devices.registry import DeviceRegistry
from voiced.errors import BrokerUnavailable, DeviceError

_LOGGER = logging.getLogger(__name__)


def initial_state(device: Device) -> dict[str, Any]:
    if isinstance(device, LightDevice):
        return {"state": "OFF", "brightness": 127, "color_temp": 300}
    if isinstance(device, DiffuserDevice):
        return {"state": "OFF", "scent": device.scents[0], "intensity": 50}
    return {"state": "stopped", "genre": None, "volume": 50}


def parse_command(device: Device, raw: bytes) -> LightSet | DiffuserSet | MusicSet:
    """Parse a wire payload into the device's typed command; raises ValueError naming the problem."""
    body = dict(read_object(raw), device=device.name)  # PayloadError is a ValueError
    try:
        if isinstance(device, LightDevice):
            color = body.pop("color", None)
            if color is not None:
                if not isinstance(color, dict) or "hex" not in color:
                    raise ValueError("color must be an object with a 'hex' field")
                body["color_hex"] = color["hex"]
            return LightSet.model_validate(body)
        if isinstance(device, DiffuserDevice):
            return DiffuserSet.model_validate(body)
        return MusicSet.model_validate(body)
    except ValidationError as exc:
        raise ValueError(problems(exc)) from None


def apply(state: dict[str, Any], command: LightSet | DiffuserSet | MusicSet) -> dict[str, Any]:
    new = dict(state)
    if isinstance(command, MusicSet):
        if command.action is not None:
            states = {"play": "playing", "pause": "paused", "stop": "stopped"}
            new["state"] = states.get(command.action, "playing")  # next/previous: a new track plays
        if command.genre is not None:
            new["genre"] = command.genre
            new.pop("query", None)
        if command.query is not None:  # the MQTT player passes the search on; it has no library
            new["query"], new["genre"] = command.query, None
        if command.volume is not None:
            new["volume"] = command.volume
        if command.tracks is not None:
            new["tracks"] = list(command.tracks)
            new["track"] = command.tracks[0]
    else:
        new.update(command.payload())
    return new


class DeviceSimulator:
    def __init__(
        self,
        registry: DeviceRegistry,
        mqtt_config: MqttConfig,
        *,
        delay_s: float = 0.0,
        silent: Iterable[str] = (),
        offline: Iterable[str] = (),
    ) -> None:
        self._delay_s = delay_s
        self._silent = set(silent)
        self._offline = set(offline)
        for name in self._silent | self._offline:
            registry.get(name)  # DeviceError for a name that is not declared
        self._timers: set[threading.Timer] = set()
        self._registry = registry
        self._by_command_topic = {d.command_topic: d for d in registry}
        self._states = {d.name: initial_state(d) for d in registry}
        self._lock = threading.Lock()
        self.applied = 0
        self._rejections = Rejections("simulator")
        self._link = MqttLink(
            mqtt_config,
            client_id=f"{mqtt_config.client_id}-simulator",
            subscriptions=list(self._by_command_topic),
            on_message=self._handle,
            on_status=self._publish_all_on_connect,
            availability_topic=None,
        )

    def start(self) -> None:
        self._link.start()

    async def wait_connected(self, timeout: float) -> bool:
        return await self._link.wait_connected(timeout)

    def stop(self) -> None:
        for timer in list(self._timers):
            timer.cancel()
        self._link.stop()

    def set_online(self, name: str, online: bool) -> None:
        """Announce a device on- or offline on its availability topic (as Zigbee2MQTT does)."""
        (self._offline.discard if online else self._offline.add)(name)
        self._publish_availability(self._registry.get(name))

    def _publish_availability(self, device: Device) -> None:
        if device.availability_topic is not None:
            state = "offline" if device.name in self._offline else "online"
            self._link.publish(device.availability_topic, json.dumps({"state": state}).encode(), retain=True)

    @property
    def rejected(self) -> int:
        return self._rejections.total

    def state_of(self, name: str) -> dict[str, Any]:
        with self._lock:
            return dict(self._states[name])

    def _publish_all_on_connect(self, connected: bool, _detail: str) -> None:
        if connected:
            for device in self._registry:
                self._publish_availability(device)
                self._publish_state(device)

    def _publish_state(self, device: Device) -> None:
        payload = json.dumps(self.state_of(device.name)).encode()
        self._link.publish(device.state_topic, payload, retain=True)

    def _handle(self, topic: str, payload: bytes) -> None:
        device = self._by_command_topic.get(topic)
        if device is None or device.name in self._offline:
            return
        try:
            command = parse_command(device, payload)
            _, command = self._registry.prepare(command)
        except (ValueError, DeviceError) as exc:
            self._rejections.reject(topic, f"{device.name}: malformed command: {exc}", payload)
            return
        with self._lock:
            self._states[device.name] = apply(self._states[device.name], command)
        self.applied += 1
        _LOGGER.info("%s <- %s", device.name, excerpt(payload))
        if device.name in self._silent:
            return
        if self._delay_s <= 0:
            self._publish_state(device)
            return
        timer = threading.Timer(self._delay_s, self._publish_later, args=(device,))
        timer.daemon = True
        self._timers.add(timer)
        timer.start()

    def _publish_later(self, device: Device) -> None:
        self._timers.difference_update([t for t in self._timers if not t.is_alive()])
        try:
            self._publish_state(device)
        except BrokerUnavailable as exc:
            _LOGGER.warning("%s: state not published: %s", device.name, exc)
