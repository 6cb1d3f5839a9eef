"""The MQTT link on paho-mqtt 2.x (MQTT v5).

paho runs its own network thread; every callback here is wrapped so that an
exception in our code is logged instead of killing that thread. Subscriptions
are renewed on every (re)connect. Publishing while disconnected raises
BrokerUnavailable: a voice command must not be delivered minutes later.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import secrets
import threading
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from voiced.config import MqttConfig
from voiced.devices.model import check_topic
from voiced.errors import BrokerUnavailable

_LOGGER = logging.getLogger(__name__)
_F = TypeVar("_F", bound=Callable[..., Any])

MessageHandler = Callable[[str, bytes], None]
StatusHandler = Callable[[bool, str], None]


def _guarded(func: _F) -> _F:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except Exception:
            _LOGGER.exception("MQTT callback %s failed", func.__name__)
            return None

    return wrapper  # type: ignore[return-value]


class MqttLink:
    def __init__(
        self,
        config: MqttConfig,
        *,
        client_id: str,
        subscriptions: Iterable[str],
        on_message: MessageHandler,
        on_status: StatusHandler | None = None,
    ) -> None:
        self._config = config
        self._subscriptions = list(subscriptions)
        self._on_message = on_message
        self._on_status = on_status
        self._connected = threading.Event()
        self._attempted = threading.Event()  # first connection attempt decided, either way
        self._stopping = False
        self._warned = False
        # A random suffix: two processes with one client id would throw each other off the broker.
        self.client_id = f"{client_id}-{secrets.token_hex(3)}"
        self._client = mqtt.Client(
            callback_api_version=CallbackAPIVersion.VERSION2,
            client_id=self.client_id,
            protocol=mqtt.MQTTv5,
        )
        if config.username:
            self._client.username_pw_set(config.username, config.password)
        self._client.reconnect_delay_set(min_delay=1, max_delay=5)
        self._client.on_connect = self._handle_connect
        self._client.on_disconnect = self._handle_disconnect
        self._client.on_message = self._handle_message
        self._client.on_connect_fail = self._handle_connect_fail

    @property
    def connected(self) -> bool:
        return self._connected.is_set() and self._client.is_connected()

    def start(self) -> None:
        self._client.connect_async(self._config.host, self._config.port, self._config.keepalive_s)
        self._client.loop_start()

    async def wait_connected(self, timeout: float) -> bool:
        """Wait for the first connection attempt (at most `timeout`); True if connected.

        A refused connection answers at once instead of after the whole timeout.
        """
        await asyncio.to_thread(self._attempted.wait, timeout)
        return self.connected

    def stop(self) -> None:
        self._stopping = True
        self._client.disconnect()
        self._client.loop_stop()

    def publish(self, topic: str, payload: bytes, *, retain: bool = False, qos: int = 1) -> None:
        check_topic(topic)
        if not self.connected:
            raise BrokerUnavailable(f"MQTT broker {self._config.host}:{self._config.port} is not reachable")
        info = self._client.publish(topic, payload, qos=qos, retain=retain)
        if info.rc != mqtt.MQTT_ERR_SUCCESS:
            raise BrokerUnavailable(f"publish to {topic} failed: {mqtt.error_string(info.rc)}")

    @_guarded
    def _handle_connect(
        self, client: mqtt.Client, _userdata: Any, _flags: Any, reason: Any, _props: Any
    ) -> None:
        if reason.is_failure:
            self._attempted.set()
            self._warn("MQTT broker %s refused the connection: %s", reason)
            self._notify(False, f"connect refused: {reason}")
            return
        for topic in self._subscriptions:
            client.subscribe(topic, qos=1)
        self._connected.set()
        self._attempted.set()
        self._warned = False
        _LOGGER.info("MQTT connected to %s:%s as %s", self._config.host, self._config.port, self.client_id)
        self._notify(True, "connected")

    @_guarded
    def _handle_disconnect(
        self, _client: mqtt.Client, _userdata: Any, _flags: Any, reason: Any, _props: Any
    ) -> None:
        was_connected = self._connected.is_set()
        self._connected.clear()
        self._attempted.set()
        if self._stopping:
            return
        self._warn("MQTT connection to %s lost or failed: %s; retrying", reason)
        if was_connected:
            self._notify(False, f"disconnected: {reason}")

    @_guarded
    def _handle_connect_fail(self, _client: mqtt.Client, _userdata: Any) -> None:
        self._attempted.set()
        self._warn("MQTT broker %s not reachable (%s); retrying", "connection failed")

    def _warn(self, message: str, reason: object) -> None:
        """Warn once per outage; repeats while retrying go to debug."""
        where = f"{self._config.host}:{self._config.port}"
        level = logging.DEBUG if self._warned else logging.WARNING
        self._warned = True
        _LOGGER.log(level, message, where, reason)

    @_guarded
    def _handle_message(self, _client: mqtt.Client, _userdata: Any, msg: mqtt.MQTTMessage) -> None:
        self._on_message(msg.topic, bytes(msg.payload))

    def _notify(self, connected: bool, detail: str) -> None:
        if self._on_status is not None:
            self._on_status(connected, detail)
