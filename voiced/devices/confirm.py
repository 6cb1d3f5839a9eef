"""What a device's state topic must show once a command has taken effect.

Pure functions: the vibe agent publishes a command, then waits until `mismatches` of the
reported state against `expected_state` is empty.
"""

from __future__ import annotations

from typing import Any

from voiced.devices.colours import hex_to_xy, xy_close
from voiced.devices.model import DeviceCommand, DiffuserSet, LightSet, MusicSet, SwitchSet

MUSIC_STATES = {"play": "playing", "pause": "paused", "stop": "stopped"}
# Zigbee lights report brightness and colour temperature rounded their own way.
_TOLERANCE = {"brightness": 1, "color_temp": 2}


def expected_state(command: DeviceCommand) -> dict[str, Any]:
    if isinstance(command, LightSet):
        expected: dict[str, Any] = command.payload()
        if command.color_hex is not None:
            expected["color"] = {"hex": command.color_hex.upper()}
        return expected
    if isinstance(command, DiffuserSet | SwitchSet):
        return command.payload()
    assert isinstance(command, MusicSet)
    expected = command.payload()
    action = expected.pop("action", None)
    if action is not None:
        expected["state"] = MUSIC_STATES[str(action)]
    if command.tracks is not None:
        expected["tracks"] = list(command.tracks)
    return expected


def _same(key: str, want: Any, got: Any) -> bool:
    if key == "color" and isinstance(want, dict):
        hex_got = got.get("hex") if isinstance(got, dict) else None
        if isinstance(hex_got, str):
            return hex_got.upper() == want["hex"]
        # Zigbee2MQTT reports what the bulb took, as xy (with color_mode), never the hex we sent;
        # an ESPHome light reports r, g, b.
        if isinstance(got, dict) and all(isinstance(got.get(c), int) for c in "rgb"):
            got = dict(
                zip(
                    "xy",
                    hex_to_xy("#" + "".join(f"{min(255, max(0, got[c])):02X}" for c in "rgb")),
                    strict=True,
                )
            )
        return xy_close(hex_to_xy(want["hex"]), got)
    if isinstance(want, bool) != isinstance(got, bool):
        return False  # JSON true is not 1
    if isinstance(want, str) and isinstance(got, str):
        return want.lower() == got.lower()
    if isinstance(want, int) and isinstance(got, int | float) and not isinstance(got, bool):
        return abs(got - want) <= _TOLERANCE.get(key, 0)
    return bool(want == got)


def mismatches(state: dict[str, Any] | None, expected: dict[str, Any]) -> list[str]:
    """The expected fields the state does not (yet) show, as `key=got (want value)`."""
    if state is None:
        return ["no state reported"]
    return [
        f"{key}={state.get(key)!r} (want {want!r})"
        for key, want in expected.items()
        if not _same(key, want, state.get(key))
    ]
