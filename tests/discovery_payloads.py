"""Discovery payloads in the shapes Zigbee2MQTT, ESPHome and Tasmota publish them (recorded from
their documentation and source: Zigbee2MQTT 1.35 `homeassistant.ts` and `bridge/devices`, ESPHome
2023.12's abbreviated JSON light, Tasmota's legacy SetOption19 switch)."""

from __future__ import annotations

import json

# A Philips Hue colour bulb as Zigbee2MQTT announces it to Home Assistant.
HUE_COLOUR = (
    "homeassistant/light/0x0017880104e45517/light/config",
    {
        "availability": [
            {"topic": "zigbee2mqtt/bridge/state", "value_template": "{{ value_json.state }}"},
            {"topic": "zigbee2mqtt/Hue Go/availability", "value_template": "{{ value_json.state }}"},
        ],
        "availability_mode": "all",
        "brightness": True,
        "brightness_scale": 254,
        "color_mode": True,
        "command_topic": "zigbee2mqtt/Hue Go/set",
        "device": {
            "identifiers": ["zigbee2mqtt_0x0017880104e45517"],
            "manufacturer": "Philips",
            "model": "Hue Go (7146060PH)",
            "name": "Hue Go",
            "suggested_area": "Living Room",
            "sw_version": "1.50.2_r30933",
            "via_device": "zigbee2mqtt_bridge_0x00124b0018e2b3b5",
        },
        "effect": True,
        "effect_list": ["blink", "breathe", "okay", "channel_change", "finish_effect", "stop_effect"],
        "json_attributes_topic": "zigbee2mqtt/Hue Go",
        "max_mireds": 500,
        "min_mireds": 153,
        "name": None,
        "object_id": "hue_go",
        "origin": {"name": "Zigbee2MQTT", "sw": "1.35.1", "url": "https://www.zigbee2mqtt.io"},
        "schema": "json",
        "state_topic": "zigbee2mqtt/Hue Go",
        "supported_color_modes": ["xy", "color_temp"],
        "unique_id": "0x0017880104e45517_light_zigbee2mqtt",
    },
)

# A white-spectrum lamp from ESPHome: abbreviated keys, HA's default brightness scale (255).
ESPHOME_WHITE = (
    "homeassistant/light/desk-lamp/desk_lamp/config",
    {
        "schema": "json",
        "brightness": True,
        "color_mode": True,
        "supported_color_modes": ["color_temp"],
        "min_mirs": 153,
        "max_mirs": 370,
        "name": "Desk Lamp",
        "stat_t": "desk-lamp/light/desk_lamp/state",
        "cmd_t": "desk-lamp/light/desk_lamp/command",
        "avty_t": "desk-lamp/status",
        "uniq_id": "ESPlightdesk_lamp",
        "dev": {
            "ids": "a4cf12b3c4d5",
            "name": "desk-lamp",
            "sw": "esphome v2023.12.0",
            "mf": "espressif",
            "sa": "Study",
        },
    },
)

# A plain switch from Tasmota (legacy HA discovery): a base topic, plain ON/OFF, POWER in JSON.
TASMOTA_SWITCH = (
    "homeassistant/switch/ABC123_RL_1/config",
    {
        "name": "Coffee Machine",
        "~": "tasmota_ABC123/",
        "stat_t": "~stat/RESULT",
        "avty_t": "~tele/LWT",
        "pl_avail": "Online",
        "pl_not_avail": "Offline",
        "cmd_t": "~cmnd/POWER",
        "val_tpl": "{{value_json.POWER}}",
        "pl_off": "OFF",
        "pl_on": "ON",
        "uniq_id": "ABC123_RL_1",
        "dev": {"ids": ["ABC123"]},
    },
)

# Zigbee2MQTT's own discovery config for a light the YAML files already declare: YAML wins.
Z2M_KITCHEN = (
    "homeassistant/light/0x00158d0001a2b3c4/light/config",
    {
        "brightness": True,
        "command_topic": "zigbee2mqtt/kitchen_light/set",
        "device": {"name": "kitchen_light", "identifiers": ["zigbee2mqtt_0x00158d0001a2b3c4"]},
        "name": None,
        "schema": "json",
        "state_topic": "zigbee2mqtt/kitchen_light",
        "supported_color_modes": ["color_temp"],
    },
)

# Malformed: a JSON light that names no command topic.
NO_COMMAND_TOPIC = (
    "homeassistant/light/broken/lamp/config",
    {"schema": "json", "name": "Broken Lamp", "stat_t": "broken/lamp/state", "brightness": True},
)

# A sensor: discovery we do not drive, ignored without a word.
SENSOR = (
    "homeassistant/sensor/0x0017880104e45517/linkquality/config",
    {"name": "Linkquality", "state_topic": "zigbee2mqtt/Hue Go", "unit_of_measurement": "lqi"},
)

# Zigbee2MQTT's retained bridge/devices (trimmed to the fields it always has).
BRIDGE_DEVICES = [
    {
        "ieee_address": "0x00124b0018e2b3b5",
        "type": "Coordinator",
        "friendly_name": "Coordinator",
        "disabled": False,
    },
    {
        "ieee_address": "0x00178801099c3a1f",
        "type": "Router",
        "friendly_name": "Hallway Ceiling",
        "disabled": False,
        "supported": True,
        "interview_completed": True,
        "definition": {
            "model": "9290022166",
            "vendor": "Philips",
            "description": "Hue white and color ambiance E26/E27",
            "exposes": [
                {
                    "type": "light",
                    "features": [
                        {
                            "type": "binary",
                            "name": "state",
                            "property": "state",
                            "value_on": "ON",
                            "value_off": "OFF",
                            "access": 7,
                        },
                        {
                            "type": "numeric",
                            "name": "brightness",
                            "property": "brightness",
                            "value_min": 0,
                            "value_max": 254,
                            "access": 7,
                        },
                        {
                            "type": "numeric",
                            "name": "color_temp",
                            "property": "color_temp",
                            "value_min": 153,
                            "value_max": 454,
                            "unit": "mired",
                            "access": 7,
                        },
                        {
                            "type": "composite",
                            "name": "color_xy",
                            "property": "color",
                            "access": 7,
                            "features": [
                                {"type": "numeric", "name": "x", "property": "x", "access": 7},
                                {"type": "numeric", "name": "y", "property": "y", "access": 7},
                            ],
                        },
                    ],
                },
                {"type": "numeric", "name": "linkquality", "property": "linkquality", "access": 1},
            ],
        },
    },
    {
        "ieee_address": "0x0c4314fffe6b2a11",
        "type": "Router",
        "friendly_name": "Kettle Plug",
        "disabled": False,
        "definition": {
            "model": "E1603",
            "vendor": "IKEA",
            "exposes": [
                {
                    "type": "switch",
                    "features": [
                        {
                            "type": "binary",
                            "name": "state",
                            "property": "state",
                            "value_on": "ON",
                            "value_off": "OFF",
                            "access": 7,
                        },
                    ],
                },
            ],
        },
    },
    {
        "ieee_address": "0x00158d00045b2b3c",
        "type": "EndDevice",
        "friendly_name": "Bathroom Sensor",
        "definition": {
            "exposes": [{"type": "numeric", "name": "temperature", "property": "temperature", "access": 1}]
        },
    },
]


def encoded(config: object) -> bytes:
    return json.dumps(config).encode()
