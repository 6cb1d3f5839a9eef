"""The sections of config.yaml about the home's connections: the broker, the devices found on it, the
safety limits, Home Assistant and the web (config.py puts every section together)."""

from __future__ import annotations

import contextlib
import ipaddress
from typing import Literal

from pydantic import Field, field_validator, model_validator

from voiced.config_checks import check_host, check_mqtt_text
from voiced.config_sections import Float, Int, SafePath, _Section
from voiced.topics import check_topic


class MqttTlsConfig(_Section):
    """TLS to the broker."""

    enabled: bool = Field(False, description="connect to the broker over TLS")
    ca_file: SafePath | None = Field(
        None, description="CA certificate(s), relative to the config file; null = the system's"
    )
    cert_file: SafePath | None = Field(None, description="client certificate, for brokers that ask for one")
    key_file: SafePath | None = Field(None, description="the client certificate's key (with cert_file)")
    insecure: bool = Field(False, description="skip the host name check (self-signed test brokers only)")

    @model_validator(mode="after")
    def _pair(self) -> MqttTlsConfig:
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("cert_file and key_file go together")
        return self


class MqttConfig(_Section):
    """The MQTT broker the devices are on."""

    host: str = Field("127.0.0.1", description="the MQTT broker's host name or address")
    port: Int = Field(1883, ge=1, le=65535, description="the MQTT broker's port")
    client_id: str = Field(
        "voiced",
        description="MQTT client id; each process adds a random suffix, so several can share a broker",
    )
    username: str | None = Field(None, description="MQTT user name; null = anonymous")
    password: str | None = Field(None, exclude=True, description="the MQTT password")
    keepalive_s: Int = Field(30, ge=5, le=3600, description="MQTT keep-alive interval")
    connect_timeout_s: Float = Field(
        5.0, gt=0, le=120, description="how long start-up (and `voiced devices`) waits for the broker"
    )
    availability_topic: str = Field(
        "voiced/availability", description="retained online on connect; offline as the last will"
    )

    @field_validator("host")
    @classmethod
    def _host(cls, value: str) -> str:
        return check_host(value)

    @field_validator("client_id", "username", "password", "availability_topic")
    @classmethod
    def _mqtt_text(cls, value: str | None) -> str | None:
        return None if value is None else check_mqtt_text(value)

    @field_validator("availability_topic")
    @classmethod
    def _plain_topic(cls, value: str) -> str:
        return check_topic(value)

    ack_timeout_s: Float = Field(5.0, gt=0, le=60, description="how long to wait for the broker's PUBACK")
    tls: MqttTlsConfig = MqttTlsConfig()
    command_expiry_s: int = Field(
        5, ge=1, le=3600, description="MQTT v5 message expiry on commands: never delivered later than this"
    )
    state_ask_again_s: Float = Field(
        3.0,
        ge=0,
        le=60,
        description="Zigbee2MQTT back online: the devices that have not answered voiced's state request "
        "(`<name>/get`) this long after it are asked once more (the bridge says online before it listens); "
        "0 = never",
    )


class SafetyConfig(_Section):
    """Limits every device command passes, whoever sends it."""

    scent_max_intensity: Int = Field(80, ge=1, le=100, description="cap on any diffuser intensity")
    scent_max_minutes: Int = Field(120, ge=1, le=1440, description="cap on any diffuser duration")
    max_commands: Int = Field(30, ge=1, le=1000, description="device commands allowed per window")
    per_seconds: Float = Field(10.0, gt=0, le=3600, description="the rate limit's window")


MIN_WEB_TOKEN_CHARS = 16  # guessing one of 16 URL-safe characters takes 2**96 tries
MAKE_A_TOKEN = "python3 -c 'import secrets; print(secrets.token_urlsafe(24))'"


class WebConfig(_Section):
    """The dashboard, HTTP API, event stream and /metrics, served by the daemon."""

    host: str = Field("127.0.0.1", min_length=1, description="address the dashboard and API listen on")
    port: int = Field(8765, ge=0, le=65535, description="0 = no web server")
    token: str | None = Field(None, exclude=True, description="the bearer token clients send")
    headers_timeout_s: Float = Field(
        10.0, ge=0.1, le=300, description="a request's headers must arrive within this, or 408 and closed"
    )
    body_timeout_s: Float = Field(
        10.0, ge=0.1, le=300, description="a request's body must arrive within this of its headers"
    )

    @property
    def loopback(self) -> bool:
        with contextlib.suppress(ValueError):
            return ipaddress.ip_address(self.host).is_loopback
        return self.host == "localhost"

    @field_validator("token")
    @classmethod
    def _stripped(cls, token: str | None) -> str | None:
        # An env file's stray space or newline: no client could send it in a header.
        return token.strip() if isinstance(token, str) else token

    @model_validator(mode="after")
    def _token_off_loopback(self) -> WebConfig:
        # Anyone on the network could drive the house. (Checked here, not on Config: the error
        # then never echoes the other sections' secrets, nor the token itself.)
        if not self.port or self.loopback:
            return self
        if self.token is None:
            raise ValueError(
                f"web.host is {self.host!r}, not loopback: set VOICED_WEB_TOKEN (clients send"
                " 'Authorization: Bearer <token>'), or use host 127.0.0.1, or port 0 for no web server"
            )
        if len(self.token) < MIN_WEB_TOKEN_CHARS:
            plural = "s" if len(self.token) > 1 else ""
            size = f"{len(self.token)} character{plural} long" if self.token else "blank"
            raise ValueError(
                f"web.token (VOICED_WEB_TOKEN) is {size}; with web.host {self.host!r}, not loopback,"
                f" it must be at least {MIN_WEB_TOKEN_CHARS} characters (spaces around it do not"
                f" count). Make one with: {MAKE_A_TOKEN}"
            )
        return self


class DevicesConfig(_Section):
    """Devices found on the broker, besides the YAML files in devices_dir (which win)."""

    discovery: list[Literal["homeassistant", "zigbee2mqtt"]] = Field(
        [], description="homeassistant: HA MQTT discovery configs; zigbee2mqtt: its bridge/devices"
    )
    homeassistant_prefix: str = Field(
        "homeassistant",
        pattern=r"^[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*$",
        description="the topic prefix Home Assistant discovery configs are read under",
    )
    state_wait_s: Float = Field(
        0.5,
        gt=0,
        le=5,
        description='how long a relative change ("dimmer") on a device with no reported state waits '
        "for the state it asked for; then it acts on a stated assumption (bench/calibrate_state_wait.py)",
    )


class HomeAssistantConfig(_Section):
    """voiced's own entities in Home Assistant, by MQTT discovery."""

    discovery: bool = Field(
        True, description="publish voiced's own entities (state, transcript, mute, wake word) for HA"
    )
    prefix: str = Field(
        "homeassistant", pattern=r"^[A-Za-z0-9_-]{1,64}$", description="HA's discovery prefix"
    )
    node_id: str = Field(
        "voiced", pattern=r"^[A-Za-z0-9_-]{1,64}$", description="this daemon in HA: one per room"
    )
