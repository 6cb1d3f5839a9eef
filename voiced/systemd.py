"""systemd's notify protocol: READY=1 once the models are loaded and the bus runs, WATCHDOG=1
from the event loop (a stuck loop stops the pings and systemd restarts us), STATUS= lines.

A few lines over a datagram socket rather than a library: the socket path and the watchdog
interval come from the environment, which only the edge (cli.py) reads.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from dataclasses import dataclass

from voiced.bus import Subscription
from voiced.events import AssistantState, BrokerStatus, Ready
from voiced.tasks import cancel_and_wait

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class NotifySettings:
    socket_path: str | None = None  # $NOTIFY_SOCKET; None when not run by systemd
    watchdog_s: float | None = None  # $WATCHDOG_USEC as seconds


def notify_settings(environ: dict[str, str]) -> NotifySettings:
    """From systemd's variables (the edge passes the environment in)."""
    usec = environ.get("WATCHDOG_USEC", "")
    pid = environ.get("WATCHDOG_PID", "")
    ours = not pid or pid == str(os.getpid())  # a watchdog meant for another process is not ours
    watchdog_s = int(usec) / 1e6 if usec.isdigit() and int(usec) > 0 and ours else None
    return NotifySettings(socket_path=environ.get("NOTIFY_SOCKET") or None, watchdog_s=watchdog_s)


class Notifier:
    def __init__(self, socket_path: str) -> None:
        # An abstract socket is written with a leading "@" and addressed with a NUL.
        self._address = "\0" + socket_path[1:] if socket_path.startswith("@") else socket_path
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)

    def send(self, *lines: str) -> None:
        try:
            self._socket.sendto("\n".join(lines).encode(), self._address)
        except OSError as exc:  # systemd gone or the socket unwritable: never fatal to the daemon
            _LOGGER.warning("cannot notify systemd at %s: %s", self._address.lstrip("\0"), exc)

    def close(self) -> None:
        self._socket.close()


async def notify_systemd(events: Subscription, settings: NotifySettings) -> None:
    """Runs until cancelled, on `events` (the caller's subscription): readiness and status from the
    bus, the watchdog (supervised: started again after a failure; `notify_stopping` ends it)."""
    if settings.socket_path is None:
        return
    notifier = Notifier(settings.socket_path)
    watchdog = None
    if settings.watchdog_s:
        watchdog = asyncio.create_task(_watchdog(notifier, settings.watchdog_s / 2), name="systemd-watchdog")
    try:
        while True:
            event = await events.get()
            if isinstance(event, Ready):
                notifier.send("READY=1", "STATUS=listening")
            elif isinstance(event, AssistantState):
                notifier.send(f"STATUS={event.state}")
            elif isinstance(event, BrokerStatus) and not event.connected:
                notifier.send(f"STATUS=MQTT broker unavailable: {event.detail}"[:200])
    finally:
        if watchdog is not None:
            await cancel_and_wait([watchdog], timeout_s=1)
        notifier.close()


def notify_stopping(settings: NotifySettings) -> None:
    """Tell systemd we are stopping (the daemon's owner, once, as it shuts down)."""
    if settings.socket_path is not None:
        notifier = Notifier(settings.socket_path)
        notifier.send("STOPPING=1")
        notifier.close()


async def _watchdog(notifier: Notifier, every_s: float) -> None:
    while True:
        notifier.send("WATCHDOG=1")
        await asyncio.sleep(every_s)
