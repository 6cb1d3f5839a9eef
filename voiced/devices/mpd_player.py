"""A music device played by a real MPD (Music Player Daemon): the MQTT music protocol on one side,
MPD's library and player on the other, as Zigbee2MQTT stands between MQTT and the radios.

A music device file with `mpd: host:port` is played this way by the daemon itself. Its commands
(`{"action":"play","genre":"jazz"}`, `{"action":"play","query":"queen"}`, `{"tracks":[...]}`,
pause, resume, stop, next, previous, volume) become MPD commands: a genre or a query replaces the
queue with the library's matching songs (`searchadd genre`, `searchadd any`: case-insensitive, any
tag) and plays them; `play` alone resumes. What MPD then says it is doing is reported on the
device's state topic (state, volume, the current track; the genre and query asked for while they
are what plays), so a search with no match is never reported as playing. MPD out of reach makes
the device offline until it is back; a malformed command is logged with its topic and dropped.
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import threading
from typing import Any

from voiced.config import MqttConfig
from voiced.devices.model import MusicDevice, MusicSet
from voiced.devices.mqtt import OFFLINE, ONLINE, MqttLink
from voiced.devices.payloads import escape
from voiced.devices.simulator import parse_command
from voiced.errors import BrokerUnavailable

_LOGGER = logging.getLogger(__name__)
POLL_S = 0.5  # how often MPD's status is read when no command comes (a song ends, someone else plays)
RECONNECT_S = 2.0
STATES = {"play": "playing", "pause": "paused", "stop": "stopped"}


def mpd_address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    return host, int(port)


class MpdPlayer:
    """One thread owns the MPD connection; commands reach it through a queue."""

    def __init__(self, device: MusicDevice, mqtt: MqttConfig, address: str) -> None:
        self._device = device
        self._host, self._port = mpd_address(address)
        self._commands: queue.Queue[bytes | None] = queue.Queue()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"mpd-{device.name}", daemon=True)
        self._link = MqttLink(
            mqtt,
            client_id=f"{mqtt.client_id}-mpd",
            subscriptions=[device.command_topic],
            on_message=lambda _topic, payload: self._commands.put(payload),
            on_status=self._on_broker,
            availability_topic=device.availability_topic,
        )
        self._asked: dict[str, Any] = {}  # the genre, query or tracks last asked for
        self._reported: dict[str, Any] | None = None
        self._online: bool | None = None  # what the broker was last told (the link says online on connect)

    def start(self) -> None:
        self._link.start()
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._commands.put(None)
        self._thread.join(timeout=5)
        self._link.stop()

    # -- the MPD thread -------------------------------------------------------------------------

    def _run(self) -> None:
        from mpd import MPDClient, MPDError  # its ConnectionError is an MPDError, not the builtin

        warned = False
        while not self._stopping.is_set():
            client = MPDClient()
            client.timeout = 5
            try:
                client.connect(self._host, self._port)
                _LOGGER.info("%s: MPD at %s:%d", self._device.name, self._host, self._port)
                warned = False
                self._serve(client)
            except (OSError, MPDError) as exc:
                if not warned:
                    warned = True
                    _LOGGER.warning(
                        "%s: MPD at %s:%d is out of reach (%s)",
                        self._device.name,
                        self._host,
                        self._port,
                        exc,
                    )
                self._available(False)
                self._reported = None
                self._stopping.wait(RECONNECT_S)
            finally:
                with contextlib.suppress(OSError, MPDError):
                    client.disconnect()

    def _serve(self, client: Any) -> None:
        from mpd import CommandError

        while not self._stopping.is_set():
            try:
                raw = self._commands.get(timeout=POLL_S)
            except queue.Empty:
                raw = None
            if raw is not None:
                try:
                    command = parse_command(self._device, raw)
                except ValueError as exc:
                    topic = self._device.command_topic
                    _LOGGER.warning(
                        "%s: ignored a command on %s: %s (%s)",
                        self._device.name,
                        topic,
                        exc,
                        escape(raw.decode("utf-8", errors="replace")),
                    )
                else:
                    assert isinstance(command, MusicSet)
                    try:
                        self._carry_out(client, command)
                    except CommandError as exc:
                        _LOGGER.warning("%s: MPD refused %s: %s", self._device.name, command.payload(), exc)
            self._available(True)
            self._report(client)

    def _carry_out(self, client: Any, command: MusicSet) -> None:
        if command.volume is not None:
            client.setvol(round(command.volume * 100 / self._device.volume_max))
        wanted = command.genre or command.query or command.tracks
        if wanted:
            client.clear()
            if command.genre:
                client.searchadd("genre", command.genre)
            elif command.query:
                client.searchadd("any", command.query)
            else:
                for title in command.tracks or ():
                    client.searchadd("title", title)
            self._asked = command.model_dump(include={"genre", "query", "tracks"}, exclude_none=True)
            if int(client.status().get("playlistlength", 0)):
                client.play(0)
            else:
                client.stop()
                _LOGGER.warning("%s: nothing in MPD's library for %s", self._device.name, self._asked)
            return
        if command.action == "play":
            client.play() if client.status().get("state") == "stop" else client.pause(0)
        elif command.action == "pause":
            client.pause(1)
        elif command.action == "stop":
            client.stop()
        elif command.action == "next":
            client.next()
        elif command.action == "previous":
            client.previous()

    def _report(self, client: Any) -> None:
        status, song = client.status(), client.currentsong()
        state: dict[str, Any] = {"state": STATES.get(status.get("state", "stop"), "stopped")}
        if "volume" in status and int(status["volume"]) >= 0:
            state["volume"] = round(int(status["volume"]) * self._device.volume_max / 100)
        if song:
            state["track"] = " - ".join(str(song[k]) for k in ("artist", "title") if k in song) or song.get(
                "file"
            )
        if state["state"] != "stopped" and int(status.get("playlistlength", 0)):
            state.update(self._asked)  # what was asked for is what the queue holds
        if state != self._reported:
            self._publish(self._device.state_topic, json.dumps(state).encode())
            self._reported = state

    def _on_broker(self, connected: bool, _detail: str) -> None:
        if connected:  # the link has just said online; the MPD thread corrects it if MPD is away
            self._online = True
            self._reported = None

    def _available(self, online: bool) -> None:
        if online == self._online or not self._device.availability_topic:
            return
        try:
            self._link.publish(self._device.availability_topic, ONLINE if online else OFFLINE, retain=True)
        except BrokerUnavailable:
            return  # told on the next try
        self._online = online

    def _publish(self, topic: str, payload: bytes) -> None:
        try:
            self._link.publish(topic, payload, retain=True)
        except BrokerUnavailable:
            _LOGGER.debug("%s: the broker is away; the state goes out when it is back", self._device.name)
            self._reported = None
