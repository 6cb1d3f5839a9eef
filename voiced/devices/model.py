"""Declared devices (from devices/*.yaml) and the typed commands they accept."""

from __future__ import annotations

import json
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from voiced.topics import check_topic

MAX_TRACKS = 20
SCENT_NAMES = ("lavender", "citrus", "eucalyptus", "sandalwood", "peppermint")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _DeviceBase(_Strict):
    name: str = Field(
        pattern=r"^[a-z][a-z0-9_]*$",
        description='unique; said with spaces for underscores ("kitchen_light" is "the kitchen light")',
    )
    room: str | None = Field(None, description='the room it is in ("living room"); null = no room')
    aliases: list[str] = Field([], description='other names people call it ("lounge", "speaker")')
    command_topic: str = Field(description="where voiced publishes its commands (JSON)")
    state_topic: str = Field(description="where the device reports its state (JSON)")
    availability_topic: str | None = Field(
        None,
        description='where it reports `{"state": "online"}` or `"offline"`; null = always assumed online',
    )
    confirm: bool = Field(False, description="a plan touching this device is read back and waits for a yes")

    @field_validator("command_topic", "state_topic", "availability_topic")
    @classmethod
    def _plain_topic(cls, value: str | None) -> str | None:
        return None if value is None else check_topic(value)


LightFeature = Literal["brightness", "color_temp", "color"]


class LightDevice(_DeviceBase):
    """A light: on/off, brightness, white temperature and colour, as Zigbee2MQTT's JSON lights take them."""

    kind: Literal["light"] = Field(description="the kind of device")
    brightness_max: int = Field(
        254, ge=1, le=254, description="the brightest voiced sets it, on a scale of 254"
    )
    color_temp_min: int = Field(153, ge=50, le=1000, description="its coolest white, in mireds")
    color_temp_max: int = Field(500, ge=50, le=1000, description="its warmest white, in mireds")
    features: tuple[LightFeature, ...] = Field(
        ("brightness", "color_temp", "color"), description="what it can change besides on/off"
    )
    color_format: Literal["hex", "xy", "hs", "rgb"] = Field(
        "hex", description="how a colour goes on the wire: Zigbee2MQTT takes hex, HA's JSON lights xy/hs/rgb"
    )
    brightness_scale: int = Field(254, ge=1, le=65535, description="the device's full brightness on the wire")

    @model_validator(mode="after")
    def _range_in_order(self) -> LightDevice:
        if self.color_temp_min > self.color_temp_max:
            raise ValueError(
                f"color_temp_min ({self.color_temp_min}) is above color_temp_max ({self.color_temp_max})"
            )
        return self


class DiffuserDevice(_DeviceBase):
    """A scent diffuser: on/off, a scent, an intensity and a run time."""

    kind: Literal["diffuser"] = Field(description="the kind of device")
    scents: list[str] = Field(list(SCENT_NAMES), description="the scents it holds; no other is sent")
    intensity_max: int = Field(
        100,
        ge=1,
        le=100,
        description="the strongest voiced sets it, in percent (safety.scent_max_intensity caps it too)",
    )


class MusicDevice(_DeviceBase):
    """A music player speaking voiced's JSON protocol on MQTT, or an MPD the daemon plays itself (`mpd`)."""

    kind: Literal["music"] = Field(description="the kind of device")
    genres: list[str] = Field([], description="the genres it plays; empty = any genre asked for")
    volume_max: int = Field(100, ge=1, le=100, description="the loudest voiced sets it, in percent")
    library: list[Annotated[str, Field(min_length=1, max_length=200)]] = Field(
        [],
        max_length=5000,
        description="artists, albums and songs it has, as people say them: a title heard close to one "
        'of them ("clear the loon") is weighed against it on the sound and may be taken as it',
    )

    @field_validator("library", mode="before")
    @classmethod
    def _titles_as_text(cls, value: object) -> object:
        for i, title in enumerate(value if isinstance(value, list) else []):
            if not isinstance(title, str):
                raise ValueError(f'library[{i}]: {title!r} is not text; quote it in YAML ("1989", "Yes")')
            if not any(ch.isalnum() for ch in title):
                raise ValueError(f"library[{i}]: {title!r} has no letter or digit to be heard")
        return value

    mpd: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9._-]+:[0-9]{1,5}$",
        description="host:port of an MPD that plays this device; the daemon carries its commands there",
    )


class SwitchDevice(_DeviceBase):
    """A plain on/off switch (a plug, a relay), as Home Assistant's MQTT switch speaks: plain
    payloads out, the state read from the payload or one field of its JSON."""

    kind: Literal["switch"] = Field(description="the kind of device")
    payload_on: str = Field("ON", max_length=64, description="the command that switches it on")
    payload_off: str = Field("OFF", max_length=64, description="the command that switches it off")
    state_on: str | None = Field(
        None, max_length=64, description="the state that means on; null = payload_on"
    )
    state_off: str | None = Field(
        None, max_length=64, description="the state that means off; null = payload_off"
    )
    value_key: str | None = Field(
        None, max_length=64, description="the state's JSON field to read; null = the whole payload"
    )
    command_key: str | None = Field(
        None,
        max_length=64,
        description='send `{"<key>": payload_on}` (Zigbee2MQTT); null = the plain payload',
    )


Device = Annotated[LightDevice | DiffuserDevice | MusicDevice | SwitchDevice, Field(discriminator="kind")]


class LightSet(_Strict):
    """Zigbee2MQTT light command; absolute values only, never TOGGLE."""

    device: str
    state: Literal["ON", "OFF"] | None = None
    brightness: int | None = Field(None, ge=0, le=254)
    color_temp: int | None = Field(None, ge=50, le=1000)
    color_hex: str | None = Field(None, pattern=r"^#[0-9a-fA-F]{6}$")

    def payload(self) -> dict[str, object]:
        body: dict[str, object] = {}
        if self.state is not None:
            body["state"] = self.state
        if self.brightness is not None:
            body["brightness"] = self.brightness
        if self.color_temp is not None:
            body["color_temp"] = self.color_temp
        if self.color_hex is not None:
            body["color"] = {"hex": self.color_hex.upper()}
        return body


class DiffuserSet(_Strict):
    device: str
    state: Literal["ON", "OFF"] | None = None
    scent: str | None = None
    intensity: int | None = Field(None, ge=0, le=100)
    duration_min: int | None = Field(None, ge=1, le=1440, description="the diffuser switches off after this")

    def payload(self) -> dict[str, object]:
        return self.model_dump(exclude={"device"}, exclude_none=True)


class MusicSet(_Strict):
    device: str
    action: Literal["play", "pause", "stop", "next", "previous"] | None = None
    genre: str | None = None
    query: str | None = Field(
        None, min_length=1, max_length=200, description="a title, artist or album the player looks up"
    )
    volume: int | None = Field(None, ge=0, le=100)
    tracks: tuple[Annotated[str, Field(min_length=1, max_length=200)], ...] | None = Field(
        None, min_length=1, max_length=MAX_TRACKS
    )

    def payload(self) -> dict[str, object]:
        return self.model_dump(exclude={"device"}, exclude_none=True)


class SwitchSet(_Strict):
    device: str
    state: Literal["ON", "OFF"]

    def payload(self) -> dict[str, object]:
        return {"state": self.state}


DeviceCommand = LightSet | DiffuserSet | MusicSet | SwitchSet


def encode(command: DeviceCommand) -> bytes:
    return json.dumps(command.payload(), separators=(",", ":")).encode()
