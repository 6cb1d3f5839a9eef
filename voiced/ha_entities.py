"""voiced as Home Assistant sees it: its own entities, by Home Assistant's MQTT discovery.

- a sensor with the assistant's state (idle / listening / thinking / speaking / muted);
- a sensor with the last transcript;
- a switch that mutes the microphone (ON = muted), the same switch as SIGUSR1 and the web's;
- a select with the wake word, when one is configured (choosing another loads its model).

The configs are published retained under `<prefix>/<component>/<node_id>/<object>/config` on
connect and again whenever Home Assistant says `online` on `<prefix>/status` (its birth message);
availability is this link's own retained online and its will, offline. States follow the bus.
A command that is not one of the documented payloads is logged with its topic and ignored.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from voiced import __version__
from voiced.bus import EventBus, Subscription
from voiced.config import HomeAssistantConfig, MqttConfig
from voiced.devices.mqtt import MqttLink
from voiced.errors import BrokerUnavailable
from voiced.events import AssistantState, MuteChanged, Transcript
from voiced.safe_text import clean, decode
from voiced.supervision import Supervision

_LOGGER = logging.getLogger(__name__)
MODES = ("idle", "listening", "thinking", "speaking", "muted")
TRANSCRIPT_LIMIT = 255  # Home Assistant keeps a sensor's state to 255 characters


class WakeChoice(Protocol):
    @property
    def word(self) -> str: ...

    @property
    def words(self) -> tuple[str, ...]: ...

    def choose(self, word: str) -> None: ...


@dataclass(frozen=True)
class Topics:
    prefix: str
    node_id: str

    @property
    def base(self) -> str:
        return f"voiced/{self.node_id}"

    def of(self, name: str) -> str:
        return f"{self.base}/{name}"

    def config(self, component: str, name: str) -> str:
        return f"{self.prefix}/{component}/{self.node_id}/{name}/config"


def discovery(topics: Topics, room: str | None, wake: WakeChoice | None) -> dict[str, dict[str, Any]]:
    """Each config topic and its payload, in the shape Home Assistant documents."""
    shared = {
        "availability": [{"topic": topics.of("availability"), "value_template": "{{ value_json.state }}"}],
        "payload_available": "online",
        "payload_not_available": "offline",
        "device": {
            "identifiers": [f"voiced_{topics.node_id}"],
            "name": f"voiced ({room})" if room else "voiced",
            "manufacturer": "voiced",  # devices/ha_discovery.py leaves these out of the home
            "model": "offline voice assistant",
            "sw_version": __version__,
        },
    }

    def entity(name: str, label: str, **fields: Any) -> dict[str, Any]:
        return {"name": label, "unique_id": f"voiced_{topics.node_id}_{name}", **shared, **fields}

    configs = {
        topics.config("sensor", "state"): entity(
            "state",
            "State",
            state_topic=topics.of("state"),
            device_class="enum",
            options=list(MODES),
            icon="mdi:account-voice",
        ),
        topics.config("sensor", "transcript"): entity(
            "transcript", "Last transcript", state_topic=topics.of("transcript"), icon="mdi:text-to-speech"
        ),
        topics.config("switch", "mute"): entity(
            "mute",
            "Mute",
            state_topic=topics.of("mute"),
            command_topic=topics.of("mute/set"),
            payload_on="ON",
            payload_off="OFF",
            icon="mdi:microphone-off",
        ),
    }
    if wake is not None:
        configs[topics.config("select", "wake_word")] = entity(
            "wake_word",
            "Wake word",
            state_topic=topics.of("wake_word"),
            command_topic=topics.of("wake_word/set"),
            options=list(wake.words),
            icon="mdi:microphone-message",
        )
    return configs


class HaEntities:
    """Owns its MQTT link and one task that follows the bus; `start` then `stop`."""

    def __init__(
        self,
        config: HomeAssistantConfig,
        mqtt: MqttConfig,
        bus: EventBus,
        *,
        mute: Callable[[bool], None],
        is_muted: Callable[[], bool],
        wake: WakeChoice | None = None,
        room: str | None = None,
        supervision: Supervision | None = None,
    ) -> None:
        """`supervision`: restarts the task that follows the bus if it raises (the daemon's own)."""
        self._supervision = supervision or Supervision()
        self._topics = Topics(config.prefix, config.node_id)
        self._configs = discovery(self._topics, room, wake)
        self._bus, self._mute, self._is_muted, self._wake = bus, mute, is_muted, wake
        self._status = f"{config.prefix}/status"
        commands = [self._topics.of("mute/set")] + ([self._topics.of("wake_word/set")] if wake else [])
        self._link = MqttLink(
            mqtt,
            client_id=f"{mqtt.client_id}-ha",
            subscriptions=[self._status, *commands],
            on_message=self._from_broker,
            on_status=self._on_status,
            availability_topic=self._topics.of("availability"),
            reassert=True,
        )
        self._mode = "muted" if is_muted() else "idle"
        self._transcript = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._events: Subscription | None = None

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        events = self._events = self._bus.subscribe("ha-entities")  # kept across restarts
        self._supervision.start("ha-entities", lambda: self._follow(events))
        self._link.start()

    async def stop(self) -> None:
        await self._supervision.stop("ha-entities")
        if self._events is not None:
            self._bus.unsubscribe(self._events)
        await asyncio.to_thread(self._link.stop)

    # -- the broker's side (paho's thread hands over to the loop) -----------------------------------

    def _on_status(self, connected: bool, _detail: str) -> None:
        if connected and self._loop is not None:
            self._loop.call_soon_threadsafe(self._announce)

    def _from_broker(self, topic: str, payload: bytes) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._command, topic, payload)

    def _command(self, topic: str, payload: bytes) -> None:
        text = decode(payload).strip()
        if topic == self._status:
            if text == "online":
                _LOGGER.info("Home Assistant is online: publishing voiced's entities again")
                self._announce()
            return
        if topic == self._topics.of("mute/set"):
            if text not in ("ON", "OFF"):
                _LOGGER.warning("ignored %r on %s: the mute switch takes ON or OFF", text[:40], topic)
                return
            self._mute(text == "ON")
            # the switch shows what is, not what was asked
            self._send("mute", "ON" if self._is_muted() else "OFF")
            return
        if self._wake is not None and topic == self._topics.of("wake_word/set"):
            if text not in self._wake.words:
                words = ", ".join(self._wake.words)
                _LOGGER.warning("ignored %r on %s: the wake word is one of %s", text[:40], topic, words)
            else:
                self._wake.choose(text)
            self._send("wake_word", self._wake.word)

    def _announce(self) -> None:
        for topic, config in self._configs.items():
            self._send_raw(topic, json.dumps(config))
        self._send("state", self._mode)
        self._send("transcript", self._transcript)
        self._send("mute", "ON" if self._is_muted() else "OFF")
        if self._wake is not None:
            self._send("wake_word", self._wake.word)

    def _send(self, name: str, value: str) -> None:
        self._send_raw(self._topics.of(name), value)

    def _send_raw(self, topic: str, payload: str) -> None:
        with contextlib.suppress(BrokerUnavailable):  # published again on the next connect
            self._link.publish(topic, clean(payload).encode(), retain=True)

    # -- the bus's side ------------------------------------------------------------------------------

    async def _follow(self, events: Subscription) -> None:
        while True:
            event = await events.get()
            if isinstance(event, AssistantState):
                self._mode = event.state
                self._send("state", event.state)
            elif isinstance(event, Transcript) and event.text.strip():
                self._transcript = event.text.strip()[:TRANSCRIPT_LIMIT]
                self._send("transcript", self._transcript)
            elif isinstance(event, MuteChanged):
                self._send("mute", "ON" if event.muted else "OFF")
