"""A simulator that plays every declared device on the broker.

It applies each valid command and publishes the new state on the device's state topic (after
`delay_s`, as real radios take a moment). A malformed payload is logged and ignored. Devices with
an availability topic are announced online (retained); `offline` ones are announced offline and
ignore commands, `silent` ones take commands but never report (a device that does not confirm).

Zigbee2MQTT's devices (voiced/devices/z2m.py) behave as Zigbee2MQTT does by default: their state
is not retained, a colour is reported as the xy the bulb took (with `color_mode`), `<name>/get` is
answered with the state, and `bridge/state` is retained online (offline as the will and on stop).
Other devices (the MQTT music player) keep their retained state.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError

from voiced.config import MqttConfig
from voiced.devices.colours import hex_to_xy
from voiced.devices.model import (
    Device,
    DiffuserDevice,
    DiffuserSet,
    LightDevice,
    LightSet,
    MusicSet,
    SwitchDevice,
    SwitchSet,
)
from voiced.devices.mqtt import MqttLink
from voiced.devices.payloads import (
    PayloadError,
    Rejections,
    excerpt,
    problems,
    read_availability,
    read_object,
)
from voiced.devices.registry import DeviceRegistry
from voiced.devices.z2m import bridge_topic, friendly_name, get_topic
from voiced.errors import BrokerUnavailable, DeviceError
from voiced.safe_text import decode

_LOGGER = logging.getLogger(__name__)


def initial_state(device: Device) -> dict[str, Any]:
    if isinstance(device, LightDevice):
        return {"state": "OFF", "brightness": 127, "color_temp": 300, "color_mode": "color_temp"}
    if isinstance(device, DiffuserDevice):
        return {"state": "OFF", "scent": device.scents[0], "intensity": 50}
    if isinstance(device, SwitchDevice):
        return {"state": "OFF"}
    return {"state": "stopped", "genre": None, "volume": 50}


Command = LightSet | DiffuserSet | MusicSet | SwitchSet


def parse_command(device: Device, raw: bytes) -> Command:
    """Parse a wire payload into the device's typed command; raises ValueError naming the problem."""
    if isinstance(device, SwitchDevice):
        said: object = decode(raw)
        if device.command_key is not None:
            said = read_object(raw).get(device.command_key)
        if said not in (device.payload_on, device.payload_off):
            raise ValueError(f"neither {device.payload_on!r} nor {device.payload_off!r}")
        return SwitchSet(device=device.name, state="ON" if said == device.payload_on else "OFF")
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


def apply(state: dict[str, Any], command: Command) -> dict[str, Any]:
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
    elif isinstance(command, LightSet):
        new.update(command.payload())
        if command.color_hex is not None:
            new["color"], new["color_mode"] = bulb_xy(command.color_hex), "xy"
        elif command.color_temp is not None:
            new["color_mode"] = "color_temp"
    else:
        new.update(command.payload())
    return new


def bulb_xy(hex_colour: str) -> dict[str, float]:
    """What a Zigbee bulb reports for a colour: xy through its 16-bit registers, 4 places."""
    x, y = hex_to_xy(hex_colour)
    return {"x": round(int(x * 65535) / 65535, 4), "y": round(int(y * 65535) / 65535, 4)}


class DeviceSimulator:
    def __init__(
        self,
        registry: DeviceRegistry,
        mqtt_config: MqttConfig,
        *,
        delay_s: float = 0.0,
        silent: Iterable[str] = (),
        offline: Iterable[str] = (),
        uncached: Iterable[str] = (),
        get_delay_s: float = 0.0,
    ) -> None:
        self._delay_s = delay_s
        self._get_delay_s = get_delay_s  # the answer to `/get` (Zigbee2MQTT answers from its cache at once)
        self._silent = set(silent)
        self._offline = set(offline)
        self._uncached = set(uncached)  # no state sent at start: never reported since the bridge started
        for name in self._silent | self._offline | self._uncached:
            registry.get(name)  # DeviceError for a name that is not declared
        self._timers: set[threading.Timer] = set()
        self._registry = registry
        self._by_command_topic = {d.command_topic: d for d in registry}
        self._by_get_topic = {t: d for d in registry if (t := get_topic(d)) is not None}
        self._zigbee = any(friendly_name(d) is not None for d in registry)
        self._states = {d.name: initial_state(d) for d in registry}
        self._lock = threading.Lock()
        self._bridge_down = False
        self.applied = 0
        self._rejections = Rejections("simulator")
        self._link = MqttLink(
            mqtt_config,
            client_id=f"{mqtt_config.client_id}-simulator",
            subscriptions=[*self._by_command_topic, *self._by_get_topic],
            on_message=self._handle,
            on_status=self._publish_all_on_connect,
            # Zigbee2MQTT's bridge: retained online on connect, offline on stop and as the will.
            availability_topic=bridge_topic() if self._zigbee else None,
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
                # Zigbee2MQTT sends its cached states at start (cache_state_send_on_startup), not
                # retained: whoever subscribes later has to ask. It has no cache for some.
                if device.name not in self._uncached:
                    self._publish_state(device)

    def set_bridge_online(self, online: bool) -> None:
        """Zigbee2MQTT's bridge going down (or back): every Zigbee device is out of reach."""
        self._bridge_down = not online
        self._link.publish(
            bridge_topic(), json.dumps({"state": "online" if online else "offline"}).encode(), retain=True
        )

    def _publish_state(self, device: Device) -> None:
        state = self.state_of(device.name)
        payload = json.dumps(state).encode()
        if isinstance(device, SwitchDevice):  # as an HA MQTT switch reports: a word, or one JSON field
            word = (
                device.state_on or device.payload_on
                if state["state"] == "ON"
                else device.state_off or device.payload_off
            )
            payload = (
                word.encode() if device.value_key is None else json.dumps({device.value_key: word}).encode()
            )
        self._link.publish(device.state_topic, payload, retain=friendly_name(device) is None)

    def _handle(self, topic: str, payload: bytes) -> None:
        if self._bridge_down:
            return
        asked = self._by_get_topic.get(topic)
        if asked is not None:
            if asked.name not in self._offline and asked.name not in self._silent:
                self._report_soon(asked, self._get_delay_s)
            return
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
        if device.name not in self._silent:
            self._report_soon(device, self._delay_s)

    def _report_soon(self, device: Device, delay_s: float) -> None:
        """The device's state, after `delay_s` as a radio answers."""
        if delay_s <= 0:
            self._publish_state(device)
            return
        timer = threading.Timer(delay_s, self._publish_later, args=(device,))
        timer.daemon = True
        self._timers.add(timer)
        timer.start()

    def _publish_later(self, device: Device) -> None:
        self._timers.difference_update([t for t in self._timers if not t.is_alive()])
        try:
            self._publish_state(device)
        except BrokerUnavailable as exc:
            _LOGGER.warning("%s: state not published: %s", device.name, exc)


async def bridge_already_online(mqtt_config: MqttConfig, wait_s: float = 1.0) -> bool:
    """Whether a Zigbee2MQTT bridge (a real one, or another simulator) already says online on this
    broker: its retained `bridge/state`. A simulator must never play devices beside a real home."""
    said: list[bytes] = []
    probe = MqttLink(
        mqtt_config,
        client_id=f"{mqtt_config.client_id}-bridge-check",
        subscriptions=[bridge_topic()],
        on_message=lambda _topic, payload: said.append(payload),
    )
    probe.start()
    try:
        if not await probe.wait_connected(mqtt_config.connect_timeout_s):
            return False  # no broker yet: the simulator waits for it and checks nothing more
        await asyncio.sleep(wait_s)  # a retained message comes right after the subscription
    finally:
        probe.stop()
    try:
        return bool(said) and read_availability(said[-1])
    except PayloadError:
        return False
