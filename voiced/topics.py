"""MQTT topics we may publish to, checked where config and device files are read."""

from __future__ import annotations


def check_topic(topic: str) -> str:
    """Refuse topics we must never publish to: wildcards, $SYS and friends, empty levels."""
    if not topic or any(ch in topic for ch in "+#\x00"):
        raise ValueError(f"topic {topic!r} must be a plain topic without wildcards")
    if topic.startswith("$"):
        raise ValueError(f"topic {topic!r} is a broker-reserved ($) topic")
    if "//" in topic or topic.startswith("/") or topic.endswith("/"):
        raise ValueError(f"topic {topic!r} has an empty level")
    return topic
