"""The hardened MQTT payload reader, alone and in the gateway and simulator against a real broker."""

from __future__ import annotations

import asyncio
import io
import logging

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from tests.conftest import Broker
from voiced.bus import EventBus
from voiced.config import Config
from voiced.console import print_events
from voiced.devices.gateway import DeviceGateway
from voiced.devices.payloads import (
    MAX_BYTES,
    PayloadError,
    Rejections,
    excerpt,
    read_availability,
    read_json,
    read_state,
)
from voiced.devices.registry import DeviceRegistry
from voiced.devices.simulator import DeviceSimulator
from voiced.events import DeviceStateChanged, PayloadRejected
from voiced.mouth.intents import LocalIntentAgent


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (b"x" * (MAX_BYTES + 1), "over the 65536 byte limit"),
        (b"[" * 600 + b"]" * 600, "nested 600 deep"),
        (b'{"a":' * 100 + b"1" + b"}" * 100, "nested 100 deep"),
        (b'{"brightness":Infinity}', "Infinity is not a number"),
        (b'{"brightness":NaN}', "NaN is not a number"),
        (b'{"brightness":-Infinity}', "-Infinity is not a number"),
        (b'{"brightness":1e999}', "out of range"),
        (b'{"brightness":' + b"9" * 5000 + b"}", "not JSON"),
        (b"\xff\xfe", "not UTF-8"),
        (b"", "not JSON"),
        (b"[1,", "not JSON"),
    ],
)
def test_hostile_json_is_refused_with_a_reason(payload: bytes, reason: str) -> None:
    with pytest.raises(PayloadError, match=reason.replace("+", r"\+")):
        read_json(payload)


def test_brackets_inside_strings_do_not_count_as_depth() -> None:
    assert read_json(b'{"name":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\\"[[["}') == {
        "name": '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["[[['
    }


def test_states_are_validated_per_kind_and_extra_fields_pass() -> None:
    assert read_state("light", b'{"state":"ON","brightness":254,"linkquality":90}')["linkquality"] == 90
    with pytest.raises(PayloadError, match="brightness"):
        read_state("light", b'{"state":"ON","brightness":"bright"}')
    with pytest.raises(PayloadError, match="brightness"):
        read_state("light", b'{"state":"ON","brightness":true}')
    with pytest.raises(PayloadError, match="intensity"):
        read_state("diffuser", b'{"intensity":-1}')
    with pytest.raises(PayloadError, match="tracks"):
        read_state("music", b'{"tracks":[1,2]}')
    with pytest.raises(PayloadError, match="expected a JSON object, got list"):
        read_state("music", b"[]")
    assert read_availability(b"online") is True
    assert read_availability(b'{"state":"offline"}') is False
    with pytest.raises(PayloadError, match="too long"):
        read_availability(b" " * 2000 + b"online")


def test_excerpts_are_bounded_and_escape_control_characters() -> None:
    assert excerpt(b"a\nb\rc\x1b[2J\xe2\x80\xa8") == "a\\x0ab\\x0dc\\x1b[2J\\u2028"
    big = excerpt(b"x" * 1_000_000)
    assert big == "x" * 200 + "..."


def test_rejections_are_logged_once_per_topic_per_minute(caplog: pytest.LogCaptureFixture) -> None:
    now = [100.0]
    seen: list[tuple[str, str, str]] = []
    rejections = Rejections("devices", clock=lambda: now[0], on_reject=lambda *a: seen.append(a))
    with caplog.at_level(logging.WARNING, logger="voiced.devices.payloads"):
        for _ in range(5):
            rejections.reject("zigbee2mqtt/kitchen_light", "nested 600 deep", b"[" * 600)
        rejections.reject("zigbee2mqtt/bedroom_light", "forged\nline", b"x")
        now[0] += 61
        rejections.reject("zigbee2mqtt/kitchen_light", "nested 600 deep", b"[" * 600)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 3
    assert "ignored 1 payload(s) on zigbee2mqtt/kitchen_light: nested 600 deep (600 bytes: " in lines[0]
    assert "forged\\x0aline" in lines[1] and "\n" not in lines[1]
    assert "ignored 5 payload(s) on zigbee2mqtt/kitchen_light" in lines[2]  # the 4 unlogged and this one
    assert rejections.total == 7 and len(seen) == 7
    assert all(len(sample) <= 203 for _t, _r, sample in seen)


def publisher(port: int) -> mqtt.Client:
    client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    client.connect("127.0.0.1", port)
    client.loop_start()
    return client


def test_infinity_never_reaches_the_intents_and_brighter_still_works(
    registry: DeviceRegistry, broker: Broker, caplog: pytest.LogCaptureFixture
) -> None:
    async def scenario() -> tuple[list[object], str, list[str]]:
        bus = EventBus()
        bus.bind_loop(asyncio.get_running_loop())
        queue = bus.subscribe()
        out = io.StringIO()
        printer = asyncio.create_task(print_events(bus, verbose=True, out=out), name="printer")
        gateway = DeviceGateway(registry, broker.mqtt_config("gw-payloads"), bus)
        gateway.start()
        client = publisher(broker.port)
        try:
            assert await gateway.wait_connected(5)
            await asyncio.sleep(0.2)
            topic = "zigbee2mqtt/living_room_light"
            client.publish(topic, b'{"state":"ON","brightness":100}', qos=1).wait_for_publish(5)
            client.publish(topic, b'{"state":"ON","brightness":Infinity}', qos=1).wait_for_publish(5)
            client.publish(topic, b'{"state":"ON","brightness":1e999}', qos=1).wait_for_publish(5)
            client.publish(topic, b"[" * 600 + b"]" * 600, qos=1).wait_for_publish(5)
            client.publish(topic, b'{"state":"ON","x":"' + b"y" * 1_000_000 + b'"}', qos=1)
            client.publish(topic, b'{"state":"ON","brightness":120}', qos=1).wait_for_publish(5)
            events: list[object] = []
            while not any(isinstance(e, DeviceStateChanged) and e.state["brightness"] == 120 for e in events):
                events.append(await asyncio.wait_for(queue.get(), timeout=5))
            outcome = LocalIntentAgent(registry, gateway.state_of).understand(
                "make the living room light brighter"
            )
            commands = [c.model_dump(exclude_none=True) for c in outcome.commands]
            await asyncio.sleep(0.1)
            return events, out.getvalue(), [str(c) for c in commands]
        finally:
            printer.cancel()
            await asyncio.wait([printer], timeout=2)
            client.loop_stop()
            client.disconnect()
            gateway.stop()

    with caplog.at_level(logging.WARNING):
        events, printed, commands = asyncio.run(scenario())
    rejected = [e for e in events if isinstance(e, PayloadRejected)]
    assert [e.reason.split(": ", 2)[-1][:22] for e in rejected] == [
        "Infinity is not a numb",
        "1e999 is out of range",
        "nested 600 deep, over ",
        "1000021 bytes, over th",
    ]
    assert all(len(e.excerpt) <= 203 for e in rejected)
    states = [e.state for e in events if isinstance(e, DeviceStateChanged)]
    assert states == [{"state": "ON", "brightness": 100}, {"state": "ON", "brightness": 120}]
    assert commands and "'brightness'" in commands[0] and "living_room_light" in commands[0]
    assert len(printed) < 10_000  # the 1 MB payload is not printed
    assert not [r for r in caplog.records if r.exc_info]
    # Logged once per topic per minute: the first rejection only.
    assert len([r for r in caplog.records if "ignored" in r.getMessage()]) == 1


def test_retained_junk_at_start_up_gives_no_tracebacks(
    registry: DeviceRegistry, broker: Broker, caplog: pytest.LogCaptureFixture
) -> None:
    client = publisher(broker.port)
    junk = [b"[" * 5000, b'{"state":NaN}', b"\xff", b"x" * 200_000, b'{"a\n":"b"}', b'{"tracks":{}}']
    try:
        for i, device in enumerate(registry):
            topics = [device.state_topic, device.command_topic, device.availability_topic]
            for j, topic in enumerate(topics):
                if topic is not None:
                    body = junk[(i + j) % len(junk)]
                    client.publish(topic, body, qos=1, retain=True).wait_for_publish(5)
    finally:
        client.loop_stop()
        client.disconnect()

    async def scenario() -> tuple[int, int]:
        config = Config(mqtt=broker.mqtt_config("voiced-junk"))
        simulator = DeviceSimulator(registry, broker.mqtt_config("sim-junk"))
        gateway = DeviceGateway(registry, config.mqtt, EventBus())
        gateway.start()
        try:
            assert await gateway.wait_connected(5)
            # The junk states first; then the simulator overwrites them with its own.
            deadline = asyncio.get_running_loop().time() + 5
            while gateway.rejections.total < 2 * len(registry):
                assert asyncio.get_running_loop().time() < deadline, gateway.rejections.total
                await asyncio.sleep(0.05)
            simulator.start()
            assert await simulator.wait_connected(5)
            deadline = asyncio.get_running_loop().time() + 5
            while not all(gateway.state_of(d.name) for d in registry):
                assert asyncio.get_running_loop().time() < deadline, "the simulator's states never came"
                await asyncio.sleep(0.05)
            return gateway.rejections.total, simulator.rejected
        finally:
            gateway.stop()
            simulator.stop()

    with caplog.at_level(logging.INFO):
        gateway_rejected, simulator_rejected = asyncio.run(scenario())
    assert gateway_rejected == 2 * len(registry)  # each state and availability topic
    assert simulator_rejected == len(registry)  # each command topic
    assert not [r for r in caplog.records if r.exc_info]
    assert not [r for r in caplog.records if "\n" in r.getMessage()]


def test_a_key_or_value_with_control_characters_cannot_forge_a_simulator_log_line(
    registry: DeviceRegistry, broker: Broker, caplog: pytest.LogCaptureFixture
) -> None:
    async def scenario() -> None:
        simulator = DeviceSimulator(registry, broker.mqtt_config("sim-forge"))
        simulator.start()
        client = publisher(broker.port)
        try:
            assert await simulator.wait_connected(5)
            await asyncio.sleep(0.2)
            forged = b'{"state":"ON","x\\n2026-01-01 INFO forged":1}'
            client.publish("zigbee2mqtt/kitchen_light/set", forged, qos=1).wait_for_publish(5)
            client.publish("voiced/music/set", b'{"genre":"jazz\\r\\n\\u001b[2J"}', qos=1).wait_for_publish(5)
            client.publish("zigbee2mqtt/kitchen_light/set", b'{"state":"ON"}', qos=1).wait_for_publish(5)
            deadline = asyncio.get_running_loop().time() + 5
            while simulator.state_of("kitchen_light")["state"] != "ON":
                assert asyncio.get_running_loop().time() < deadline
                await asyncio.sleep(0.05)
        finally:
            client.loop_stop()
            client.disconnect()
            simulator.stop()

    with caplog.at_level(logging.INFO):
        asyncio.run(scenario())
    messages = [r.getMessage() for r in caplog.records]
    assert not [m for m in messages if "\n" in m or "\r" in m or "\x1b" in m]
    # cleaned where the payload was read: the line break a space, the escape character U+FFFD
    assert [m for m in messages if "x 2026-01-01 INFO forged" in m]
    assert [m for m in messages if "unknown genre 'jazz  \ufffd[2J'" in m]


def test_the_console_shows_a_bounded_state_line() -> None:
    from voiced.console import describe

    line = describe(DeviceStateChanged(device="music", state={"track": "y" * 100_000, "k\n": 1}))
    assert line is not None and len(line) < 600 and "\n" not in line
