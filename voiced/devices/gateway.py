"""The daemon's side of the devices: sends checked commands, tracks reported state and availability."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from voiced.bus import EventBus, Subscription
from voiced.config import DevicesConfig, MqttConfig, SafetyConfig
from voiced.devices.confirm import expected_state, mismatches
from voiced.devices.discovery import Change, Discovery
from voiced.devices.model import Device, DeviceCommand
from voiced.devices.mqtt import MqttLink
from voiced.devices.payloads import PayloadError, Rejections, escape, read_availability
from voiced.devices.registry import DeviceRegistry
from voiced.devices.safety import SafetyGate
from voiced.devices.wire import from_wire, to_wire
from voiced.devices.z2m import bridge_topic, friendly_name, get_payload, get_topic
from voiced.errors import BrokerUnavailable, DeviceError
from voiced.events import (
    BrokerStatus,
    DeviceAvailability,
    DevicesChanged,
    DeviceStateChanged,
    PayloadRejected,
)

_LOGGER = logging.getLogger(__name__)


def parse_availability(payload: bytes) -> bool | None:
    """Zigbee2MQTT's `{"state":"online"}` (or the legacy plain `online`); None if neither."""
    try:
        return read_availability(payload)
    except PayloadError:
        return None


class Sent:
    """A published command: where it went, what it said, and the broker's answer to come."""

    def __init__(
        self, command: DeviceCommand, topic: str, payload: str, delivered: Future[None], reports_before: int
    ) -> None:
        self.reports_before = reports_before  # state reports seen from the device before this command
        self.command = command
        self.topic = topic
        self.payload = payload
        self.delivered = delivered


class DeviceGateway:
    def __init__(
        self,
        registry: DeviceRegistry,
        mqtt_config: MqttConfig,
        bus: EventBus,
        safety: SafetyConfig | None = None,
        clock: Callable[[], float] = time.monotonic,
        devices: DevicesConfig | None = None,
    ) -> None:
        """`devices`: its `discovery` sources add the devices found on the broker to `registry`."""
        self._registry = registry
        self._bus = bus
        self._safety = SafetyGate(safety or SafetyConfig())
        self._clock = clock
        self._expiry_s = mqtt_config.command_expiry_s
        self._ask_again_s = mqtt_config.state_ask_again_s
        self._ask_again: threading.Timer | None = None  # the one pending second `/get` (stop cancels it)
        self._states: dict[str, dict[str, Any]] = {}
        self._online: dict[str, bool] = {}
        self._reports: dict[str, int] = {}  # state messages received per device
        self._asked_at: dict[str, float] = {}  # when each device was last asked for its state
        self._lock = threading.Lock()
        self._followed: dict[str, list[str]] = {}  # a discovered device's topics we subscribed to
        self.rejections = Rejections(
            "devices",
            clock=clock,
            on_reject=lambda topic, why, sample: bus.publish_threadsafe(
                PayloadRejected(topic=topic, reason=why, excerpt=sample)
            ),
        )
        self._bridge_online = True  # Zigbee2MQTT's bridge/state; offline takes every Zigbee device along
        subscriptions = [device.state_topic for device in registry]
        subscriptions += [d.availability_topic for d in registry if d.availability_topic]
        subscriptions.append(bridge_topic())
        self._discovery = None
        if devices is not None and devices.discovery:
            self._discovery = Discovery(registry, devices, self.rejections, self._discovered)
            subscriptions += self._discovery.topics()
        self._link = MqttLink(
            mqtt_config,
            client_id=mqtt_config.client_id,
            subscriptions=subscriptions,
            on_message=self._handle_message,
            on_status=self._handle_status,
            availability_topic=mqtt_config.availability_topic,
            reassert=True,
        )

    @property
    def connected(self) -> bool:
        return self._link.connected

    def start(self) -> None:
        self._link.start()

    async def wait_connected(self, timeout: float) -> bool:
        return await self._link.wait_connected(timeout)

    def stop(self) -> None:
        with self._lock:
            again, self._ask_again = self._ask_again, None
        if again is not None:
            again.cancel()
            again.join(timeout=1.0)
        self._link.stop()

    async def responsive(self, timeout: float) -> bool:
        """True when the broker answers a round trip within `timeout` (see MqttLink.probe)."""
        try:
            async with asyncio.timeout(timeout):
                await asyncio.wrap_future(self._link.probe())
        except (TimeoutError, BrokerUnavailable):
            return False
        return True

    def kinds(self) -> dict[str, str]:
        """Every device's kind, by name (discovered ones too)."""
        return {device.name: device.kind for device in self._registry}

    def state_of(self, name: str) -> dict[str, Any] | None:
        with self._lock:
            state = self._states.get(name)
            return dict(state) if state is not None else None

    def is_online(self, name: str) -> bool:
        """False when the device's availability topic said offline, or it is a Zigbee2MQTT device
        and the bridge said offline."""
        try:
            device = self._registry.get(name)
        except DeviceError:
            return False  # a discovered device that has gone
        with self._lock:
            if not self._bridge_online and friendly_name(device) is not None:
                return False
            return self._online.get(name, True)

    def availability(self, name: str) -> bool | None:
        """As shown to people: None until the device has been heard from (its availability, or
        for one without an availability topic its state); commands are not refused meanwhile."""
        if not self.is_online(name):
            return False
        with self._lock:
            return True if name in self._online or name in self._states else None

    def _handle_status(self, connected: bool, detail: str) -> None:
        self._bus.publish_threadsafe(BrokerStatus(connected=connected, detail=detail))
        if connected:  # Zigbee2MQTT retains no state: ask for what we do not know
            self.ask([d.name for d in self._registry if self.state_of(d.name) is None])

    def ask(self, names: list[str]) -> list[str]:
        """Ask Zigbee2MQTT (`<name>/get`) for these devices' states; returns those asked."""
        asked = []
        for name in names:
            device = self._registry.get(name)
            topic = get_topic(device)
            if topic is None or not self.connected:
                continue
            try:
                self._link.publish(topic, get_payload(device), expiry_s=self._expiry_s)
            except BrokerUnavailable as exc:
                _LOGGER.warning("%s: state not asked for: %s", name, exc)
                continue
            with self._lock:
                self._asked_at.setdefault(name, self._clock())
            asked.append(name)
        return asked

    async def refresh(self, names: list[str], timeout: float) -> list[str]:
        """Ask for these devices' states and wait (at most `timeout`) for their reports; returns
        the names still without a report since asking."""
        before = {name: self._report(name)[0] for name in names}
        now = self._clock()
        with self._lock:
            # asked before, longer ago than we would wait now, and still nothing: a device that
            # does not answer `/get` is asked again but not waited for a second time
            deaf = {n for n in names if now - self._asked_at.get(n, now) > timeout}
        reports = self._bus.subscribe("refresh")
        try:
            waiting = set(self.ask(names)) - {n for n in deaf if before[n] == 0}
            async with asyncio.timeout(timeout):
                while waiting := {n for n in waiting if self._report(n)[0] <= before[n]}:
                    await reports.get()
        except TimeoutError:
            pass
        finally:
            self._bus.unsubscribe(reports)
        return sorted(n for n in names if self._report(n)[0] <= before[n])

    def send(self, command: DeviceCommand) -> Sent:
        """Check, clamp, cap and publish; raises DeviceError or BrokerUnavailable."""
        topic, prepared = self._registry.prepare(command)
        # A broker that is down says more than what the devices said before it went (a broker
        # stopping sends Zigbee2MQTT's will: "bridge offline").
        self._link.ensure_connected()
        if not self.is_online(prepared.device):
            raise DeviceError(f"{prepared.device.replace('_', ' ')} is offline; nothing sent")
        prepared, notes = self._safety.check(prepared, self._clock())
        for note in notes:
            _LOGGER.info("%s: %s", prepared.device, note)
        payload = to_wire(self._registry.get(prepared.device), prepared)
        with self._lock:
            reports = self._reports.get(prepared.device, 0)
        delivered = self._link.publish(topic, payload, expiry_s=self._expiry_s)
        return Sent(prepared, topic, payload.decode(), delivered, reports)

    def _report(self, name: str) -> tuple[int, dict[str, Any] | None]:
        with self._lock:
            state = self._states.get(name)
            return self._reports.get(name, 0), dict(state) if state is not None else None

    def reports_since(self, sent: Sent) -> int:
        """How many state reports the device has sent since `sent` went out."""
        return self._report(sent.command.device)[0] - sent.reports_before

    def _missing(self, sent: Sent, expected: dict[str, Any]) -> list[str]:
        reports, state = self._report(sent.command.device)
        if reports <= sent.reports_before:
            return ["no state report since the command"]  # a retained old state proves nothing
        return mismatches(state, expected)

    async def wait_for_state(self, sent: Sent, timeout: float) -> list[str]:
        """Wait for a report after `sent` that shows what it asked for; returns what is still missing."""
        name, expected = sent.command.device, expected_state(sent.command)
        # Its reports come as DeviceStateChanged on the bus, published after the state is stored.
        reports = self._bus.subscribe(f"confirm-{name}")
        try:
            async with asyncio.timeout(timeout):
                while self._missing(sent, expected):
                    await self._next_report(reports, name)
            return []
        except TimeoutError:
            return self._missing(sent, expected)
        finally:
            self._bus.unsubscribe(reports)

    @staticmethod
    async def _next_report(reports: Subscription, name: str) -> None:
        while not (isinstance(event := await reports.get(), DeviceStateChanged) and event.device == name):
            pass

    def _handle_bridge(self, topic: str, payload: bytes) -> None:
        try:
            online = read_availability(payload)
        except PayloadError as exc:
            self.rejections.reject(topic, f"Zigbee2MQTT bridge: malformed state: {exc}", payload)
            return
        with self._lock:
            changed, self._bridge_online = self._bridge_online != online, online
        if not changed:
            return
        _LOGGER.warning("Zigbee2MQTT bridge is %s", "online" if online else "offline")
        for device in self._registry:
            if friendly_name(device) is not None:
                self._bus.publish_threadsafe(
                    DeviceAvailability(device=device.name, online=self.is_online(device.name))
                )
        if online:  # what happened while it was down, we do not know
            self._ask_twice([d.name for d in self._registry if friendly_name(d) is not None])

    def _ask_twice(self, names: list[str]) -> None:
        """Ask now, and once more after `state_ask_again_s` those that have not reported since:
        Zigbee2MQTT says online before it subscribes to `<name>/get`, so the first ask may be lost."""
        before = {name: self._report(name)[0] for name in names}
        asked = self.ask(names)
        if not asked or self._ask_again_s <= 0:
            return

        def again() -> None:
            with self._lock:
                if self._ask_again is not timer or not self._bridge_online:
                    return  # stopped, superseded by a later online, or the bridge went again
            still = [n for n in asked if self._report(n)[0] <= before[n]]
            if still:
                _LOGGER.info("no state yet from %s: asking Zigbee2MQTT again", ", ".join(still))
                self.ask(still)

        timer = threading.Timer(self._ask_again_s, again)
        timer.name, timer.daemon = "z2m-ask-again", True
        with self._lock:  # started under the lock: stop() may join it the moment it is seen
            previous, self._ask_again = self._ask_again, timer
            timer.start()
        if previous is not None:
            previous.cancel()

    def _discovered(self, change: Change) -> None:
        """Devices came or went on the broker: follow their topics, ask for their state, tell."""
        before = {t for n in change.removed + change.changed for t in self._followed.pop(n, [])}
        with self._lock:
            for name in change.removed:
                self._states.pop(name, None)
                self._online.pop(name, None)
        for name in change.added + change.changed:
            device = self._registry.get(name)
            self._followed[name] = [t for t in (device.state_topic, device.availability_topic) if t]
        # a changed device's old topics, and a removed one's, unless a device still reads them
        still = {t for d in self._registry for t in (d.state_topic, d.availability_topic) if t}
        still.add(bridge_topic())
        self._link.unsubscribe(sorted(before - still))
        self._link.subscribe(t for n in change.added + change.changed for t in self._followed[n])
        self.ask([n for n in change.added if self.state_of(n) is None])
        self._bus.publish_threadsafe(
            DevicesChanged(added=change.added, removed=change.removed, changed=change.changed)
        )

    def _handle_message(self, topic: str, payload: bytes) -> None:
        if self._discovery is not None and self._discovery.handle(topic, payload):
            return
        if topic == bridge_topic():
            self._handle_bridge(topic, payload)
            return
        device = self._registry.by_state_topic(topic)
        if device is not None:
            self._handle_state(device, topic, payload)
            return
        device = self._registry.by_availability_topic(topic)
        if device is None:
            return
        try:
            online = read_availability(payload)
        except PayloadError as exc:
            self.rejections.reject(topic, f"{escape(device.name)}: malformed availability: {exc}", payload)
            return
        with self._lock:
            self._online[device.name] = online
        self._bus.publish_threadsafe(
            DeviceAvailability(device=device.name, online=self.is_online(device.name))
        )

    def _handle_state(self, device: Device, topic: str, payload: bytes) -> None:
        name = device.name
        try:
            state = from_wire(device, payload)
        except PayloadError as exc:
            self.rejections.reject(topic, f"{name}: malformed state: {exc}", payload)
            return
        with self._lock:
            self._states[name] = state
            self._reports[name] = self._reports.get(name, 0) + 1
        self._bus.publish_threadsafe(DeviceStateChanged(device=name, state=state))
