"""Devices found on the broker while the daemon runs: Home Assistant MQTT discovery configs and
Zigbee2MQTT's `bridge/devices`, both retained, so a daemon started later finds them too.

Each config or device list is parsed (voiced/devices/ha_discovery.py, z2m_devices.py) and put in
the registry under its source; an empty retained config removes its device, a device gone from
Zigbee2MQTT's list is removed. YAML devices win: a discovered device with a YAML device's name
or topics is left out (said once, at info). A payload we cannot use is logged with its topic and
what is wrong (through the gateway's rate-limited Rejections), and nothing else changes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from voiced.config import DevicesConfig
from voiced.devices.ha_discovery import DiscoveryError, parse_config
from voiced.devices.model import Device
from voiced.devices.payloads import PayloadError, Rejections, escape, read_json
from voiced.devices.registry import DeviceRegistry
from voiced.devices.z2m import BASE
from voiced.devices.z2m_devices import parse_bridge_devices

_LOGGER = logging.getLogger(__name__)
Z2M_SOURCE = f"zigbee2mqtt {BASE}/bridge/devices"


@dataclass(frozen=True)
class Change:
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)


class Discovery:
    def __init__(
        self,
        registry: DeviceRegistry,
        config: DevicesConfig,
        rejections: Rejections,
        on_change: Callable[[Change], None],
    ) -> None:
        self._registry = registry
        self._prefix = config.homeassistant_prefix
        self._ha = "homeassistant" in config.discovery
        self._z2m = "zigbee2mqtt" in config.discovery
        self._rejections = rejections
        self._on_change = on_change
        self._by_topic: dict[str, str] = {}  # a discovery config's topic → the device it made
        self._from_bridge: set[str] = set()
        self._told: set[str] = set()  # clashes already said

    def topics(self) -> list[str]:
        found = []
        if self._ha:  # <prefix>/<component>/[<node_id>/]<object_id>/config
            found += [f"{self._prefix}/+/+/config", f"{self._prefix}/+/+/+/config"]
        if self._z2m:
            found.append(f"{BASE}/bridge/devices")
        return found

    def handle(self, topic: str, payload: bytes) -> bool:
        """Take a message if it is discovery's; False if it is not."""
        if self._z2m and topic == f"{BASE}/bridge/devices":
            self._bridge(topic, payload)
            return True
        levels = topic.split("/")
        prefix = self._prefix.split("/")
        if not self._ha or levels[: len(prefix)] != prefix or levels[-1] != "config":
            return False
        rest = levels[len(prefix) : -1]
        if len(rest) not in (2, 3):
            return False
        self._config(topic, rest[0], rest[-1], payload)
        return True

    def _config(self, topic: str, component: str, object_id: str, payload: bytes) -> None:
        source = f"homeassistant {topic}"
        before = self._by_topic.get(topic)
        if not payload:  # an empty retained config: the device is gone
            self._by_topic.pop(topic, None)
            if before is not None and self._registry.remove(before, source):
                self._on_change(Change(removed=(before,)))
            return
        try:
            device = parse_config(component, object_id, read_json(payload), self._registry.areas)
        except (PayloadError, DiscoveryError) as exc:
            self._rejections.reject(topic, f"discovery config not used: {exc}", payload)
            return
        if device is None:
            return  # a sensor, a cover...: not a device we drive
        removed: tuple[str, ...] = ()
        if before is not None and before != device.name and self._registry.remove(before, source):
            removed = (before,)  # renamed
        self._by_topic[topic] = device.name
        known = device.name in {d.name for d in self._registry}
        if self._put(device, source, topic):
            self._on_change(
                Change(
                    added=() if known else (device.name,),
                    removed=removed,
                    changed=(device.name,) if known else (),
                )
            )
        elif removed:
            self._on_change(Change(removed=removed))

    def _bridge(self, topic: str, payload: bytes) -> None:
        try:
            found = parse_bridge_devices(read_json(payload), self._registry.areas)
        except (PayloadError, DiscoveryError) as exc:
            self._rejections.reject(topic, f"device list not used: {exc}", payload)
            return
        for why in found.skipped:
            _LOGGER.info("%s: left out %s", escape(topic), escape(why))
        present = {d.name for d in self._registry}
        added: list[str] = []
        changed: list[str] = []
        for device in found.devices:
            if self._put(device, Z2M_SOURCE, topic):
                (changed if device.name in present else added).append(device.name)
        now = {d.name for d in found.devices}
        gone = [n for n in sorted(self._from_bridge - now) if self._registry.remove(n, Z2M_SOURCE)]
        self._from_bridge = {n for n in now if self._registry.source_of(n) == Z2M_SOURCE}
        change = Change(tuple(added), tuple(gone), tuple(changed))
        if change:
            self._on_change(change)

    def _put(self, device: Device, source: str, topic: str) -> bool:
        try:
            return self._registry.put(device, source)
        except ValueError as exc:
            said = f"{topic}: {exc}"
            if said not in self._told:  # Zigbee2MQTT republishes the same configs: say it once
                self._told.add(said)
                _LOGGER.info("%s: %s left out: %s", escape(topic), device.name, escape(str(exc)))
            return False
