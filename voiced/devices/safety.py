"""Limits every device command passes, whoever sends it: scent caps and a rate limit.

Pure and clock-free: the caller passes the time.
"""

from __future__ import annotations

from collections import deque

from voiced.config import SafetyConfig
from voiced.devices.model import DeviceCommand, DiffuserSet
from voiced.errors import DeviceError


class RateLimiter:
    """At most `limit` events in any window of `window_s` seconds (sliding window)."""

    def __init__(self, limit: int, window_s: float) -> None:
        self._limit = limit
        self._window_s = window_s
        self._times: deque[float] = deque()

    def allow(self, now: float) -> bool:
        while self._times and now - self._times[0] >= self._window_s:
            self._times.popleft()
        if len(self._times) >= self._limit:
            return False
        self._times.append(now)
        return True


class SafetyGate:
    def __init__(self, limits: SafetyConfig) -> None:
        self._limits = limits
        self._rate = RateLimiter(limits.max_commands, limits.per_seconds)

    def check(self, command: DeviceCommand, now: float) -> tuple[DeviceCommand, list[str]]:
        """The command with caps applied and notes on what was capped; DeviceError past the rate limit."""
        notes: list[str] = []
        if isinstance(command, DiffuserSet):
            update: dict[str, int] = {}
            top = self._limits.scent_max_intensity
            if command.intensity is not None and command.intensity > top:
                update["intensity"] = top
                notes.append(f"intensity {command.intensity} capped to the safety limit {top}")
            longest = self._limits.scent_max_minutes
            if command.duration_min is not None and command.duration_min > longest:
                update["duration_min"] = longest
                notes.append(f"duration {command.duration_min} min capped to the safety limit {longest}")
            command = command.model_copy(update=update)
        if not self._rate.allow(now):
            limit = f"{self._limits.max_commands} commands in {self._limits.per_seconds:g} s"
            raise DeviceError(f"{command.device}: rate limit reached ({limit}); nothing sent")
        return command, notes
