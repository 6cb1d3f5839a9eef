"""A frozen broker (SIGSTOP) must never deliver a command late, and the reply must say it was not sent.

Against a real Mosquitto: it is frozen, a spoken command is carried out, and the broker is resumed
after longer than the command expiry; a subscriber must never see the command.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import threading
import time
from pathlib import Path

from tests.conftest import Broker
from tests.vibe_home import Home, reply_of
from voiced.config import Config
from voiced.devices.actions import DeviceActions
from voiced.devices.registry import DeviceRegistry
from voiced.mouth.intents import LocalIntentAgent
from voiced.mouth.local_agent import NO_BROKER_REPLY, LocalAgent

EXPIRY_S = 1


class FreezableBroker(Broker):
    def signal(self, number: signal.Signals) -> None:
        assert self._proc is not None
        os.kill(self._proc.pid, number)


def test_a_frozen_broker_gets_no_command_and_the_reply_says_nothing_was_changed(
    tmp_path: Path, registry: DeviceRegistry
) -> None:
    broker = FreezableBroker(tmp_path)
    broker.start()

    async def scenario() -> tuple[str, float, list[str], int]:
        mqtt = broker.mqtt_config("voiced-frozen").model_copy(
            update={"command_expiry_s": EXPIRY_S, "ack_timeout_s": 1.0}
        )
        async with Home(broker, registry, Config(mqtt=mqtt)) as home:
            actions = DeviceActions(home.gateway, home.bus, ack_timeout_s=1.0)
            agent = LocalAgent(LocalIntentAgent(registry, home.gateway.state_of), actions, home.vibe)
            assert home.watcher is not None
            broker.signal(signal.SIGSTOP)
            try:
                start = time.monotonic()
                said = await asyncio.wait_for(reply_of(agent, 1, "Turn on the kitchen light."), timeout=10)
                took = time.monotonic() - start
                await asyncio.sleep(EXPIRY_S + 2.0)  # frozen for longer than the expiry
            finally:
                broker.signal(signal.SIGCONT)
            # Resumed: anything the broker held would arrive now.
            await asyncio.sleep(2.0)
            late = [payload for _t, topic, payload in home.watcher.commands() if "kitchen" in topic]
            refused = len(home.of("command_refused"))
            return said, took, late, refused

    try:
        said, took, late, refused = asyncio.run(scenario())
    finally:
        broker.stop()
    assert said == NO_BROKER_REPLY
    assert took < 3.0  # answered within about the acknowledgement timeout
    assert late == []
    assert refused == 1


class PubackSwallower:
    """A TCP proxy to the broker that drops every PUBACK on its way back: commands arrive, unconfirmed."""

    def __init__(self, broker_port: int) -> None:
        self._broker_port = broker_port
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._server.getsockname()[1])
        self._sockets: list[socket.socket] = [self._server]
        self._threads = [threading.Thread(target=self._accept, name="proxy-accept", daemon=True)]
        self._threads[0].start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                client, _ = self._server.accept()
                upstream = socket.create_connection(("127.0.0.1", self._broker_port))
                self._sockets += [client, upstream]
                for target, args in ((self._pump, (client, upstream)), (self._filter, (upstream, client))):
                    thread = threading.Thread(target=target, args=args, name="proxy-pump", daemon=True)
                    self._threads.append(thread)
                    thread.start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while chunk := source.recv(65536):
                sink.sendall(chunk)

    @staticmethod
    def _filter(source: socket.socket, sink: socket.socket) -> None:
        buffer = b""
        with contextlib.suppress(OSError):
            while chunk := source.recv(65536):
                buffer += chunk
                while (packet := _whole_packet(buffer)) is not None:
                    buffer = buffer[len(packet) :]
                    if packet[0] >> 4 != 4:  # 4: PUBACK
                        sink.sendall(packet)

    def close(self) -> None:
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        for thread in self._threads:
            thread.join(timeout=5)


def _whole_packet(buffer: bytes) -> bytes | None:
    """The first complete MQTT packet in `buffer` (fixed header, variable-length remaining length)."""
    length, shift = 0, 0
    for i in range(1, min(len(buffer), 5)):
        length |= (buffer[i] & 0x7F) << shift
        shift += 7
        if not buffer[i] & 0x80:
            end = i + 1 + length
            return buffer[:end] if len(buffer) >= end else None
    return None


def test_without_a_puback_the_reply_says_the_broker_has_not_confirmed(
    broker: Broker, registry: DeviceRegistry
) -> None:
    proxy = PubackSwallower(broker.port)

    async def scenario() -> tuple[str, str]:
        through_proxy = broker.mqtt_config("voiced-unacked").model_copy(update={"port": proxy.port})
        async with Home(broker, registry, Config(mqtt=through_proxy)) as home:
            agent = LocalAgent(
                LocalIntentAgent(registry, home.gateway.state_of),
                DeviceActions(home.gateway, home.bus, ack_timeout_s=0.5),
                home.vibe,
            )
            said = await asyncio.wait_for(reply_of(agent, 1, "Turn on the kitchen light."), timeout=10)
            await home.until(lambda: home.simulator.state_of("kitchen_light")["state"] == "ON", "the light")
            return said, home.simulator.state_of("kitchen_light")["state"]

    try:
        said, state = asyncio.run(scenario())
    finally:
        proxy.close()
    assert said == (
        "Turning on the kitchen light. "
        "But the broker hasn't confirmed the command for the kitchen light, so it may not change."
    )
    assert state == "ON"  # it did arrive: the caveat is about what we know, not what happened
