"""One exchange with a Wyoming server (https://github.com/OHF-Voice/wyoming), from a worker thread,
and the rule for when to try a remote server again after it failed.

The engines' interfaces are blocking (the ear and the mouth call them off the event loop), so each
exchange runs its own short event loop in the calling thread: connect, write the events, read until
the answer. A server that does not accept the connection within `connect_s` counts as unreachable.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar
from urllib.parse import urlsplit

from voiced.errors import ConfigError

_LOGGER = logging.getLogger(__name__)
T = TypeVar("T")
RETRY_AFTER_S = 30.0  # after a failure the local engine alone serves this long; then the server again


def parse_uri(uri: str, field: str) -> tuple[str, int]:
    """tcp://host:port → (host, port); anything else is a config error naming `field`."""
    parts = urlsplit(uri)
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme != "tcp" or not parts.hostname or port is None or parts.path not in ("", "/"):
        raise ConfigError(f"{field}: {uri!r} is not tcp://host:port")
    return parts.hostname, port


class RemoteOrLocal:
    """Whether to ask the server now: yes, unless it failed less than RETRY_AFTER_S ago."""

    def __init__(self, what: str, uri: str, clock: Callable[[], float] = time.monotonic) -> None:
        self._what, self._uri, self._clock = what, uri, clock
        self._failed_at: float | None = None

    def worth_trying(self) -> bool:
        return self._failed_at is None or self._clock() - self._failed_at >= RETRY_AFTER_S

    def failed(self, error: BaseException) -> None:
        first = self._failed_at is None
        self._failed_at = self._clock()
        level = logging.WARNING if first else logging.INFO
        _LOGGER.log(level, "%s server %s failed (%s): the local engine answers", self._what, self._uri, error)

    def worked(self) -> None:
        if self._failed_at is not None:
            _LOGGER.warning("%s server %s answers again", self._what, self._uri)
        self._failed_at = None


class TooSlow(TimeoutError):
    """A step that did not finish in its time; the message says which, for the log."""


async def within(step: Awaitable[T], seconds: float, what: str) -> T:
    """`step` within `seconds`, else TooSlow("<what> within N s") (asyncio's own timeout says nothing)."""
    try:
        return await asyncio.wait_for(step, seconds)
    except TooSlow:
        raise  # an inner step's, already named
    except TimeoutError:
        raise TooSlow(f"{what} within {seconds:g} s") from None


def exchange(work: Callable[[], Awaitable[T]], timeout_s: float) -> T:
    """Run one exchange to its end in this (worker) thread, within `timeout_s`."""

    async def bounded() -> T:
        return await within(work(), timeout_s, "not done")

    return asyncio.run(bounded())
