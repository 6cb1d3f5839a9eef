"""Devices and brokers misbehaving: restarts, an ACL, offline devices, floods, forbidden topics."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import Broker
from tests.vibe_home import Home, reply_of, write_presets
from voiced.config import Config, MqttConfig, SafetyConfig, VibeConfig
from voiced.devices.model import DiffuserSet, LightSet
from voiced.devices.mqtt import MqttLink
from voiced.devices.registry import DeviceRegistry
from voiced.errors import DeviceError
from voiced.mouth.intents import LocalIntentAgent
from voiced.mouth.local_agent import NO_BROKER_REPLY, LocalAgent


def test_broker_restart_mid_scene_reports_the_failed_steps_and_nothing_stale_is_sent(
    broker: Broker, registry: DeviceRegistry, tmp_path: Path
) -> None:
    presets = write_presets(
        tmp_path / "scenes.yaml",
        """
evening:
  steps:
    - {tool: set_light, device: living_room_light, state: "on", brightness_pct: 40}
    - {tool: set_light, device: living_room_light, color_temp: warm}
    - {tool: set_scent, state: "on", scent: sandalwood, intensity: 20}
    - {tool: set_scent, intensity: 25}
""",
    )

    async def scenario() -> None:
        config = Config(
            mqtt=broker.mqtt_config("voiced-vibe"),
            vibe=VibeConfig(presets_file=presets, default_preset="evening", confirm_timeout_s=1.0),
        )
        async with Home(broker, registry, config, simulator_options={"delay_s": 0.5}) as home:
            agent = LocalAgent(LocalIntentAgent(registry, home.gateway.state_of), home.actions, home.vibe)
            await home.vibe.start("evening", turn=1)
            await home.until(lambda: len(home.watcher.commands()) >= 2, "the first step of each device")
            broker.stop()  # before any device could confirm
            done = await home.finished("vibe-1")
            assert done.kind == "vibe_error"
            # Which steps failed and why: the first went unconfirmed, the second were refused.
            results = [(e.tool, e.result) for e in home.of("vibe_tool_end", "vibe-1")]
            assert len(results) == 4 and all(result.startswith("error: ") for _tool, result in results)
            assert sum("did not confirm" in result or "lost" in result for _t, result in results) == 2
            refused = [result for _t, result in results if "not reachable" in result]
            assert len(refused) == 2 and any("living room light: MQTT broker" in r for r in refused)
            assert await reply_of(agent, 2, "turn on the kitchen light") == NO_BROKER_REPLY
            restarted = asyncio.get_running_loop().time()
            broker.start()
            await home.until(lambda: home.gateway.connected, "the gateway to reconnect")
            # The broker sent Zigbee2MQTT's will as it stopped: its devices are offline until the
            # bridge, reconnected, says online again.
            await home.until(lambda: home.gateway.is_online("bedroom_light"), "the Zigbee bridge to be back")
            # the watcher reconnects on its own schedule: what it missed before that is not seen
            await home.until(home.watcher.listening.is_set, "the watcher to subscribe again")
            stale = [c for c in home.watcher.commands() if c[0] >= restarted]
            assert stale == []  # nothing refused during the outage comes out later
            assert await reply_of(agent, 3, "turn on the bedroom light") == "Turning on the bedroom light."
            await home.until(lambda: home.watcher.commands(restarted), "the new command on the broker")
            after = [(topic, payload) for _t, topic, payload in home.watcher.commands(restarted)]
            assert after == [("zigbee2mqtt/bedroom_light/set", '{"state":"ON"}')]
            assert home.narrations == [  # told at once; turn 2 then carried the Failed message away
                "Sorry, I couldn't set up the scene: none of the devices could be set."
            ]
            assert home.vibe.poll_messages() == []

    asyncio.run(scenario())


def _acl_broker(tmp_path: Path) -> Broker:
    password_file = tmp_path / "passwords"
    for user, password in (("voiced", "secret-v"), ("sim", "secret-s")):
        create = ["-c"] if not password_file.exists() else []
        subprocess.run(["mosquitto_passwd", "-b", *create, str(password_file), user, password], check=True)
    acl = tmp_path / "acl"
    # voiced may drive everything but the diffuser; the simulator may do anything.
    acl.write_text(
        "user voiced\ntopic readwrite voiced/#\ntopic read zigbee2mqtt/#\ntopic write zigbee2mqtt/+/get\n"
        "topic write zigbee2mqtt/living_room_light/set\ntopic write zigbee2mqtt/kitchen_light/set\n"
        "topic write zigbee2mqtt/bedroom_light/set\n\nuser sim\ntopic readwrite #\n"
    )
    # As root, mosquitto would drop to its own user, who cannot read pytest's private tmp_path.
    user = "user root\n" if os.geteuid() == 0 else ""
    auth = f"{user}allow_anonymous false\npassword_file {password_file}\nacl_file {acl}\n"
    return Broker(tmp_path, auth=auth)


def test_a_topic_the_acl_denies_is_reported_not_swallowed(registry: DeviceRegistry, tmp_path: Path) -> None:
    broker = _acl_broker(tmp_path)
    broker.start()

    async def scenario() -> None:
        config = Config(
            mqtt=MqttConfig(port=broker.port, client_id="voiced-acl", username="voiced", password="secret-v")
        )
        sim = MqttConfig(port=broker.port, client_id="sim-acl", username="sim", password="secret-s")
        async with Home(broker, registry, config, simulator_mqtt=sim) as home:
            await home.vibe.start("relax", turn=1)
            done = await home.finished("vibe-1")
            assert done.kind == "vibe_error"
            assert "diffuser: the broker refused it: Not authorized" in done.error
            results = {e.tool: e.result for e in home.of("vibe_tool_end", "vibe-1")}
            assert results["set_light"].startswith("ok: ")
            assert results["set_scent"] == "error: diffuser: the broker refused it: Not authorized"
            # The same refusal on the direct path (no waiting): a CommandRefused event still says so.
            agent = LocalAgent(LocalIntentAgent(registry, home.gateway.state_of), home.actions, home.vibe)
            home.vibe.poll_messages()
            said = await reply_of(agent, 2, "turn off the diffuser")
            assert said == "Turning off the diffuser. But I couldn't set the diffuser."
            await home.until(
                lambda: any(e.turn == 2 and "Not authorized" in e.reason for e in home.of("command_refused")),
                "the late refusal to be reported",
            )

    try:
        asyncio.run(scenario())
    finally:
        broker.stop()


def test_an_offline_device_is_named_and_nothing_is_sent(broker: Broker, registry: DeviceRegistry) -> None:
    async def scenario() -> None:
        config = Config(mqtt=broker.mqtt_config("voiced-vibe"))
        async with Home(broker, registry, config, simulator_options={"offline": ["diffuser"]}) as home:
            await home.until(lambda: not home.gateway.is_online("diffuser"), "the diffuser to be offline")
            agent = LocalAgent(LocalIntentAgent(registry, home.gateway.state_of), home.actions, home.vibe)
            said = await reply_of(agent, 1, "turn on the diffuser")
            assert said == "Turning on the diffuser. The diffuser is offline, so I couldn't set it."
            assert home.watcher.commands() == []
            home.simulator.set_online("diffuser", True)
            await home.until(lambda: home.gateway.is_online("diffuser"), "the diffuser to be back")
            assert await reply_of(agent, 2, "turn on the diffuser") == "Turning on the diffuser."
            await home.until(lambda: home.watcher.commands(), "the command")
            assert [e.online for e in home.of("device_availability") if e.device == "diffuser"][-2:] == [
                False,
                True,
            ]

    asyncio.run(scenario())


def test_floods_are_stopped_and_scent_is_capped(broker: Broker, registry: DeviceRegistry) -> None:
    async def scenario() -> None:
        safety = SafetyConfig(max_commands=3, per_seconds=60, scent_max_intensity=50, scent_max_minutes=30)
        config = Config(mqtt=broker.mqtt_config("voiced-vibe"), safety=safety)
        async with Home(broker, registry, config) as home:
            sent = home.gateway.send(
                DiffuserSet(device="diffuser", state="ON", intensity=90, duration_min=600)
            )
            assert sent.payload == '{"state":"ON","intensity":50,"duration_min":30}'
            home.gateway.send(LightSet(device="kitchen_light", state="ON"))
            home.gateway.send(LightSet(device="kitchen_light", state="OFF"))
            with pytest.raises(DeviceError, match=r"rate limit reached \(3 commands in 60 s\)"):
                home.gateway.send(LightSet(device="kitchen_light", state="ON"))
            await home.until(lambda: len(home.watcher.commands()) == 3, "three commands")
            await asyncio.sleep(0.3)
            assert len(home.watcher.commands()) == 3

    asyncio.run(scenario())


@pytest.mark.parametrize("topic", ["zigbee2mqtt/+/set", "zigbee2mqtt/#", "$SYS/broker", "zigbee2mqtt//set"])
def test_forbidden_topics_are_never_published(broker: Broker, topic: str) -> None:
    link = MqttLink(
        broker.mqtt_config("voiced-topics"), client_id="t", subscriptions=[], on_message=lambda *_: None
    )
    with pytest.raises(ValueError, match="topic"):
        link.publish(topic, b"{}")
