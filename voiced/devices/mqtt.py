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
import socket
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from typing import Any, TypeVar

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from voiced.config import MqttConfig
from voiced.devices.payloads import excerpt
from voiced.errors import BrokerUnavailable
from voiced.topics import check_topic

_LOGGER = logging.getLogger(__name__)
_F = TypeVar("_F", bound=Callable[..., Any])

MessageHandler = Callable[[str, bytes], None]
StatusHandler = Callable[[bool, str], None]
ONLINE = b'{"state":"online"}'
OFFLINE = b'{"state":"offline"}'
_MAX_EARLY = 64
REASSERT_EVERY_S = 1.0
# Unsubscribing from a topic we never subscribed to publishes nothing, yet the broker must answer.
_PROBE_TOPIC = "voiced/probe/unused"


class PublishRejected(Exception):
    """The broker answered a publish with a failure reason code (MQTT v5), e.g. not authorized."""


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
        availability_topic: str | None = None,
        reassert: bool = False,
    ) -> None:
        """`availability_topic`: publish retained online there on every connect, offline as the will;
        `reassert`: and again whenever someone else overwrites it while we are connected."""
        self._config = config
        self._availability = availability_topic
        self._reassert = reassert and availability_topic is not None
        self._reasserted_at = 0.0
        self._reassert_timer: threading.Timer | None = None
        self._pending: dict[int, Future[None]] = {}
        self._early: dict[int, Exception | None] = {}  # PUBACKs that beat publish() returning
        self._pending_lock = threading.Lock()
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
        if config.tls.enabled:
            tls = config.tls
            self._client.tls_set(
                ca_certs=str(tls.ca_file) if tls.ca_file else None,
                certfile=str(tls.cert_file) if tls.cert_file else None,
                keyfile=str(tls.key_file) if tls.key_file else None,
            )
            self._client.tls_insecure_set(tls.insecure)
        if availability_topic is not None:
            self._client.will_set(availability_topic, OFFLINE, qos=1, retain=True)
        self._client.reconnect_delay_set(min_delay=1, max_delay=5)
        self._client.on_connect = self._handle_connect
        self._client.on_disconnect = self._handle_disconnect
        self._client.on_message = self._handle_message
        self._client.on_connect_fail = self._handle_connect_fail
        self._client.on_publish = self._handle_publish
        self._client.on_unsubscribe = self._handle_unsubscribe
        self._client.on_socket_open = self._handle_socket_open

    @property
    def connected(self) -> bool:
        return self._connected.is_set() and self._client.is_connected()

    def subscribe(self, topics: Iterable[str]) -> None:
        """Subscribe to more topics now (if connected) and on every reconnect."""
        for topic in topics:
            if topic in self._subscriptions:
                continue
            self._subscriptions.append(topic)
            if self.connected:
                self._client.subscribe(topic, qos=1)

    def unsubscribe(self, topics: Iterable[str]) -> None:
        for topic in topics:
            if topic in self._subscriptions:
                self._subscriptions.remove(topic)
                if self.connected:
                    self._client.unsubscribe(topic)

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
        if self._reassert_timer is not None:
            self._reassert_timer.cancel()
        if self._availability is not None and self.connected:
            # A clean stop sends no will: say offline ourselves.
            info = self._client.publish(self._availability, OFFLINE, qos=1, retain=True)
            info.wait_for_publish(timeout=2)
        self._client.disconnect()
        self._client.loop_stop()
        self._fail_pending("the MQTT link was stopped before the broker confirmed")

    def publish(
        self, topic: str, payload: bytes, *, retain: bool = False, qos: int = 1, expiry_s: int | None = None
    ) -> Future[None]:
        """Hand a message to the broker; the future settles on its PUBACK (PublishRejected on refusal).

        `expiry_s`: MQTT v5 message expiry; a broker holding the message longer drops it.
        """
        check_topic(topic)
        self.ensure_connected()
        properties = None
        if expiry_s is not None:
            properties = Properties(PacketTypes.PUBLISH)
            properties.MessageExpiryInterval = expiry_s
        info = self._client.publish(topic, payload, qos=qos, retain=retain, properties=properties)
        if info.rc != mqtt.MQTT_ERR_SUCCESS:
            # paho keeps it queued even so; the next connect drops it (see _handle_connect).
            raise BrokerUnavailable(f"publish to {topic} failed: {mqtt.error_string(info.rc)}")
        return self._awaiting(info.mid)

    def ensure_connected(self) -> None:
        """Raise BrokerUnavailable unless connected."""
        if not self.connected:
            raise BrokerUnavailable(f"MQTT broker {self._config.host}:{self._config.port} is not reachable")

    def probe(self) -> Future[None]:
        """A round trip that publishes nothing; it settles when the broker answers.

        A frozen broker (SIGSTOP) still accepts bytes into its socket and, once resumed, delivers
        a command however old; the expiry interval counts from when it reads it. So a command is
        sent only after the broker has just shown it is alive.
        """
        if not self.connected:
            raise BrokerUnavailable(f"MQTT broker {self._config.host}:{self._config.port} is not reachable")
        rc, mid = self._client.unsubscribe(_PROBE_TOPIC)
        if rc != mqtt.MQTT_ERR_SUCCESS or mid is None:
            raise BrokerUnavailable(f"probe failed: {mqtt.error_string(rc)}")
        return self._awaiting(mid)

    def _awaiting(self, mid: int) -> Future[None]:
        answered: Future[None] = Future()
        with self._pending_lock:
            if mid in self._early:
                self._settle(answered, self._early.pop(mid))
            else:
                self._pending[mid] = answered
        return answered

    @staticmethod
    def _settle(future: Future[None], error: Exception | None) -> None:
        if future.done():
            return
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(error)

    def _fail_pending(self, why: str) -> None:
        with self._pending_lock:
            pending, self._pending = self._pending, {}
        for future in pending.values():
            self._settle(future, BrokerUnavailable(why))

    @_guarded
    def _handle_publish(
        self, _client: mqtt.Client, _userdata: Any, mid: int, reason: Any, _props: Any
    ) -> None:
        error = PublishRejected(str(reason)) if getattr(reason, "is_failure", False) else None
        with self._pending_lock:
            future = self._pending.pop(mid, None)
            if future is None:  # publish() has not stored it yet, or a message nobody waits on
                self._early[mid] = error
                while len(self._early) > _MAX_EARLY:
                    del self._early[next(iter(self._early))]
                return
        self._settle(future, error)

    @_guarded
    def _handle_unsubscribe(
        self, _client: mqtt.Client, _userdata: Any, mid: int, _reasons: Any, _props: Any
    ) -> None:
        # Any answer will do: "no subscription existed" is the expected one.
        self._handle_publish(_client, _userdata, mid, None, None)

    @_guarded
    def _handle_socket_open(self, _client: mqtt.Client, _userdata: Any, sock: Any) -> None:
        # paho leaves Nagle on: a small command would wait ~40 ms for the last packet's ACK.
        if isinstance(sock, socket.socket):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    @_guarded
    def _handle_connect(
        self, client: mqtt.Client, _userdata: Any, _flags: Any, reason: Any, _props: Any
    ) -> None:
        if reason.is_failure:
            self._attempted.set()
            self._warn("MQTT broker %s refused the connection: %s", reason)
            self._notify(False, f"connect refused: {reason}")
            return
        # paho would resend what the broker never acknowledged before the outage; those commands
        # were already reported as failed, and a late "lights on" is worse than none.
        stale = client.drop_out_messages()
        if stale:
            _LOGGER.warning("MQTT: dropped %d message(s) unconfirmed before the outage", len(stale))
        for topic in list(self._subscriptions):
            client.subscribe(topic, qos=1)
        if self._availability is not None:
            client.publish(self._availability, ONLINE, qos=1, retain=True)
            if self._reassert:  # after our publish: what the broker keeps is ours when this answers
                client.subscribe(self._availability, qos=1)
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
        self._fail_pending(f"the connection to the broker was lost ({reason}) before it confirmed")
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
        if self._reassert and msg.topic == self._availability:
            self._overwritten(bytes(msg.payload))
            return
        self._on_message(msg.topic, bytes(msg.payload))

    def _overwritten(self, payload: bytes) -> None:
        """Someone published on our availability topic: say we are online again (at most once a
        second, so two clients that disagree cannot flood the broker)."""
        if payload == ONLINE or self._stopping or self._reassert_timer is not None:
            return
        _LOGGER.warning(
            "MQTT: %s was overwritten with %s by another client; publishing online again",
            self._availability,
            excerpt(payload, 60),
        )
        wait_s = max(0.0, self._reasserted_at + REASSERT_EVERY_S - time.monotonic())
        self._reassert_timer = threading.Timer(wait_s, self._publish_online)
        self._reassert_timer.daemon = True
        self._reassert_timer.start()

    def _publish_online(self) -> None:
        self._reassert_timer = None
        self._reasserted_at = time.monotonic()
        if self._availability is not None and self.connected and not self._stopping:
            self._client.publish(self._availability, ONLINE, qos=1, retain=True)

    def _notify(self, connected: bool, detail: str) -> None:
        if self._on_status is not None:
            self._on_status(connected, detail)
