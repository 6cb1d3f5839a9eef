"""MQTT over TLS with a username and password from config: a broker with its own certificate."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

from tests.conftest import Broker
from tests.vibe_home import Home
from voiced.config import Config, MqttConfig, MqttTlsConfig
from voiced.devices.mqtt import MqttLink
from voiced.devices.registry import DeviceRegistry


def _tls_broker(tmp_path: Path) -> tuple[Broker, Path]:
    cert, key = tmp_path / "broker.crt", tmp_path / "broker.key"
    request = ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1"]
    names = ["-addext", "subjectAltName=IP:127.0.0.1"]
    subprocess.run(
        ["openssl", *request, *names, "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True
    )
    passwords = tmp_path / "passwords"
    subprocess.run(["mosquitto_passwd", "-b", "-c", str(passwords), "voiced", "s3cret"], check=True)
    user = "user root\n" if os.geteuid() == 0 else ""  # as root mosquitto drops to a user who can't read tmp
    auth = (
        f"{user}allow_anonymous false\npassword_file {passwords}\n"
        f"cafile {cert}\ncertfile {cert}\nkeyfile {key}\n"
    )
    return Broker(tmp_path, auth=auth), cert


def test_tls_with_a_password_drives_devices_and_a_wrong_ca_is_refused(
    registry: DeviceRegistry, tmp_path: Path
) -> None:
    broker, cert = _tls_broker(tmp_path)
    broker.start()

    def over_tls(client_id: str, ca: Path | None) -> MqttConfig:
        tls = MqttTlsConfig(enabled=True, ca_file=ca)
        return MqttConfig(
            port=broker.port, client_id=client_id, username="voiced", password="s3cret", tls=tls
        )

    async def scenario() -> None:
        config = Config(mqtt=over_tls("voiced-tls", cert))
        home = Home(broker, registry, config, simulator_mqtt=over_tls("sim-tls", cert), watch=False)
        async with home:
            await home.vibe.start("relax", turn=1)
            done = await home.finished("vibe-1")
            assert done.kind == "vibe_complete"  # every step confirmed over TLS
        # The system's CAs do not know this broker's certificate: no connection, nothing sent.
        stranger = MqttLink(
            over_tls("voiced-untrusted", None), client_id="x", subscriptions=[], on_message=print
        )
        stranger.start()
        try:
            assert not await stranger.wait_connected(3)
        finally:
            stranger.stop()

    try:
        asyncio.run(scenario())
    finally:
        broker.stop()
