"""One hardened reader for what arrives over MQTT: states, availability and commands.

A device state is under 1 KB; anything over `MAX_BYTES` is refused before it is decoded, and
bracket depth is counted before `json.loads` could recurse. NaN and Infinity are refused (a
brightness of Infinity overflows `int()` in the intents). States are validated per device kind.
Rejections are counted, logged at most once per topic per interval, and handed to a callback
(the gateway publishes them as events); logs and events carry a bounded, escaped excerpt only.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from voiced.safe_text import clean_value, decode, depth, escape

_LOGGER = logging.getLogger(__name__)

MAX_BYTES = 64 * 1024
MAX_DEPTH = 32
EXCERPT_CHARS = 200


class PayloadError(ValueError):
    """A payload we refuse; the message is the reason, bounded and free of control characters."""


def excerpt(payload: bytes | str, limit: int = EXCERPT_CHARS) -> str:
    """At most `limit` characters of a payload, escaped; never the whole of a large one."""
    head = payload[: limit * 4] if isinstance(payload, bytes) else payload[: limit * 2]
    text = head.decode("utf-8", errors="replace") if isinstance(head, bytes) else head
    text = escape(text)
    more = len(payload) > len(head) or len(text) > limit
    return text[:limit] + ("..." if more else "")


def _no_constant(name: str) -> Any:
    raise PayloadError(f"{name} is not a number we accept")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise PayloadError(f"{text[:20]} is out of range")
    return value


def read_json(payload: bytes, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """Decode a JSON payload within limits; raises PayloadError naming what is wrong."""
    if len(payload) > max_bytes:
        raise PayloadError(f"{len(payload)} bytes, over the {max_bytes} byte limit")
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PayloadError(f"not UTF-8 (byte {exc.start})") from None
    if (deepest := depth(text)) > max_depth:
        raise PayloadError(f"nested {deepest} deep, over the limit of {max_depth}")
    try:
        return clean_value(json.loads(text, parse_constant=_no_constant, parse_float=_finite))
    except PayloadError:
        raise
    except RecursionError:
        raise PayloadError("nested too deep") from None
    except ValueError as exc:  # JSONDecodeError, and ints over Python's digit limit
        raise PayloadError(f"not JSON: {escape(str(exc))[:EXCERPT_CHARS]}") from None


def read_object(payload: bytes) -> dict[str, Any]:
    body = read_json(payload)
    if not isinstance(body, dict):
        raise PayloadError(f"expected a JSON object, got {type(body).__name__}")
    return body


# A reported number: an int or a finite float (JSON true is no number), within a sane range.
_Level = Annotated[StrictInt | Annotated[float, Field(allow_inf_nan=False, strict=True)], Field(ge=0)]
_Word = Annotated[StrictStr, Field(max_length=64)]
_Text = Annotated[StrictStr, Field(max_length=500)]


class _State(BaseModel):
    # Devices report more than we read (linkquality, color_mode...): extra fields pass.
    model_config = ConfigDict(extra="allow")

    state: _Word | None = None


class LightState(_State):
    brightness: Annotated[_Level, Field(le=65535)] | None = None
    color_temp: Annotated[_Level, Field(le=100000)] | None = None
    color: dict[str, Any] | None = None


class DiffuserState(_State):
    scent: _Word | None = None
    intensity: Annotated[_Level, Field(le=1000)] | None = None
    duration_min: Annotated[_Level, Field(le=100000)] | None = None


class MusicState(_State):
    genre: _Text | None = None
    query: _Text | None = None
    track: _Text | None = None
    tracks: list[_Text] | None = Field(None, max_length=1000)
    volume: Annotated[_Level, Field(le=1000)] | None = None


STATE_MODELS: dict[str, type[_State]] = {
    "light": LightState,
    "diffuser": DiffuserState,
    "music": MusicState,
    "switch": _State,
}


def problems(exc: ValidationError) -> str:
    """Pydantic's errors as one bounded, escaped line (locations name fields, never values)."""
    text = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
    return escape(text)[:EXCERPT_CHARS]


def read_state(kind: str, payload: bytes) -> dict[str, Any]:
    """A device's reported state, checked for its kind; raises PayloadError."""
    body = read_object(payload)
    try:
        STATE_MODELS[kind].model_validate(body)
    except ValidationError as exc:
        raise PayloadError(problems(exc)) from None
    return body


def read_availability(payload: bytes) -> bool:
    """Zigbee2MQTT's `{"state":"online"}` or the legacy plain `online`; raises PayloadError."""
    if len(payload) > 1024:
        raise PayloadError(f"{len(payload)} bytes, too long for an availability")
    try:
        body: Any = read_json(payload)
    except PayloadError:
        body = decode(payload).strip()
    if isinstance(body, dict):
        body = body.get("state")
    if isinstance(body, str) and body.lower() in ("online", "offline"):
        return body.lower() == "online"
    return _refuse('neither "online" nor "offline"')


def _refuse(reason: str) -> bool:
    raise PayloadError(reason)


class Rejections:
    """Counts refused payloads and logs each topic at most once per `interval_s`."""

    def __init__(
        self,
        who: str,
        *,
        clock: Callable[[], float] = time.monotonic,
        interval_s: float = 60.0,
        on_reject: Callable[[str, str, str], None] | None = None,
    ) -> None:
        self._who = who
        self._clock = clock
        self._interval_s = interval_s
        self._on_reject = on_reject
        self._logged: dict[str, float] = {}
        self._since_log: dict[str, int] = {}
        self.total = 0

    def reject(self, topic: str, reason: str, payload: bytes) -> None:
        self.total += 1
        shown, reason = escape(topic)[:EXCERPT_CHARS], escape(reason)[:EXCERPT_CHARS]
        sample = excerpt(payload)
        now = self._clock()
        self._since_log[topic] = self._since_log.get(topic, 0) + 1
        last = self._logged.get(topic)
        if last is None or now - last >= self._interval_s:
            count = self._since_log.pop(topic)
            self._logged[topic] = now
            _LOGGER.warning(
                "%s: ignored %d payload(s) on %s: %s (%d bytes: %s)",
                self._who,
                count,
                shown,
                reason,
                len(payload),
                sample,
            )
        if self._on_reject is not None:
            self._on_reject(topic, reason, sample)
