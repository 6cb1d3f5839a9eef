"""Device actions for agents: every command is checked, published, and reported on the bus.

`execute` returns once the command is handed to the broker; a refusal the broker sends back
later (MQTT v5 PUBACK, e.g. "not authorized") is still logged and reported as CommandRefused.
`execute_confirmed` waits for that answer and then for the device's state to show the change.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections import Counter
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from voiced.bus import EventBus
from voiced.devices.gateway import DeviceGateway, Sent
from voiced.devices.model import DeviceCommand
from voiced.devices.mqtt import PublishRejected
from voiced.errors import BrokerUnavailable, DeviceError
from voiced.events import CommandRefused, CommandSent
from voiced.language.replies import say

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class ActionResult:
    ok: bool
    message: str  # for a model: what was sent, or why nothing was
    broker_down: bool = False
    sent: Sent | None = None  # what the broker took, to confirm against the device's report
    unacked: bool = False  # handed over, but no PUBACK in time: it may not have arrived


class DeviceActions:
    def __init__(
        self,
        gateway: DeviceGateway,
        bus: EventBus,
        ack_timeout_s: float = 2.0,
        confirm_timeout_s: float = 5.0,
        state_wait_s: float = 0.5,
    ) -> None:
        self._gateway = gateway
        self._bus = bus
        self._ack_timeout_s = ack_timeout_s
        self._confirm_timeout_s = confirm_timeout_s
        self._state_wait_s = state_wait_s
        self._sends: Counter[str] = Counter()  # commands the broker took, per device
        self._last: dict[str, DeviceCommand] = {}
        self._room = ""  # named by its command events ("": no room's, as a scene's)

    def in_room(self, room: str) -> DeviceActions:
        """The same actions (the same gateway, bus and counts), whose events name `room`: what a
        room's turns are given, so that each command says where it was asked for."""
        view = copy.copy(self)  # shallow: the counts and last commands stay shared
        view._room = room
        return view

    def sends(self, name: str) -> tuple[int, DeviceCommand | None]:
        """How many commands were sent to `name`, and the last: a change on its way, not reported yet."""
        return self._sends[name], self._last.get(name)

    def state_of(self, name: str) -> dict[str, Any] | None:
        return self._gateway.state_of(name)

    def kinds(self) -> dict[str, str]:
        """Every device's kind, by name."""
        return self._gateway.kinds()

    @property
    def connected(self) -> bool:
        return self._gateway.connected

    def is_online(self, name: str) -> bool:
        return self._gateway.is_online(name)

    async def refresh(self, names: list[str]) -> list[str]:
        """Ask these devices for their state (Zigbee2MQTT's `/get`) and wait for their reports, at
        most `state_wait_s` (or the PUBACK timeout, if shorter); returns those that did not report."""
        missing = await self._gateway.refresh(names, min(self._ack_timeout_s, self._state_wait_s))
        if missing:
            _LOGGER.warning("no state reported by %s when asked", ", ".join(missing))
        return missing

    def _send(self, turn: int, command: DeviceCommand, task_id: str) -> Sent | ActionResult:
        try:
            sent = self._gateway.send(command)
        except (BrokerUnavailable, DeviceError) as exc:
            _LOGGER.warning("turn %d: %s", turn, exc)
            self._bus.publish(
                CommandRefused(
                    turn=turn, device=command.device, reason=str(exc), task_id=task_id, room=self._room
                )
            )
            return ActionResult(False, f"not sent: {exc}", broker_down=isinstance(exc, BrokerUnavailable))
        self._sends[command.device] += 1
        self._last[command.device] = command
        sent_event = CommandSent(
            turn=turn,
            device=command.device,
            topic=sent.topic,
            payload=sent.payload,
            task_id=task_id,
            room=self._room,
        )
        self._bus.publish(sent_event)
        return sent

    def execute(self, turn: int, command: DeviceCommand, task_id: str = "") -> ActionResult:
        sent = self._send(turn, command, task_id)
        if isinstance(sent, ActionResult):
            return sent
        sent.delivered.add_done_callback(lambda done: self._report_late_refusal(turn, sent, done, task_id))
        return ActionResult(True, f"sent {sent.payload} to {command.device}")

    def _report_late_refusal(self, turn: int, sent: Sent, done: Future[None], task_id: str) -> None:
        error = done.exception()
        if error is None:
            return
        _LOGGER.warning("turn %d: broker refused %s on %s: %s", turn, sent.payload, sent.topic, error)
        reason = f"broker refused it: {error}"
        self._bus.publish_threadsafe(
            CommandRefused(
                turn=turn, device=sent.command.device, reason=reason, task_id=task_id, room=self._room
            )
        )

    async def _unresponsive(self, turn: int, command: DeviceCommand, task_id: str, timeout: float) -> bool:
        """A frozen broker would deliver the command whenever it wakes: send nothing to it."""
        if not self._gateway.connected or await self._gateway.responsive(timeout):
            return False  # not connected: _send says so
        why = f"the MQTT broker did not answer within {timeout:g} s; nothing sent"
        _LOGGER.warning("turn %d: %s", turn, why)
        self._bus.publish(
            CommandRefused(turn=turn, device=command.device, reason=why, task_id=task_id, room=self._room)
        )
        return True

    async def execute_acked(self, turn: int, command: DeviceCommand, task_id: str = "") -> ActionResult:
        """Publish and wait for the broker's answer (about a millisecond on a home network), so a
        refusal (an ACL's "not authorized") is told to the user instead of a cheerful "okay".
        `task_id`: what sent it besides a turn (the web page's controls say "web")."""
        if await self._unresponsive(turn, command, task_id, self._ack_timeout_s):
            return ActionResult(False, "not sent: the broker is not answering", broker_down=True)
        sent = self._send(turn, command, task_id)
        if isinstance(sent, ActionResult):
            return sent
        try:
            async with asyncio.timeout(self._ack_timeout_s):
                await asyncio.wrap_future(sent.delivered)
        except TimeoutError:
            _LOGGER.warning("turn %d: no PUBACK for %s within %.1f s", turn, sent.topic, self._ack_timeout_s)
            return ActionResult(
                True,
                f"sent {sent.payload} to {command.device} (the broker has not confirmed yet)",
                sent=sent,
                unacked=True,
            )
        except PublishRejected as exc:
            return self._refused(turn, sent, task_id, f"the broker refused it: {exc}")
        except BrokerUnavailable as exc:
            return self._refused(turn, sent, task_id, str(exc), broker_down=True)
        return ActionResult(True, f"sent {sent.payload} to {command.device}", sent=sent)

    async def unconfirmed(self, sent: Sent) -> list[str]:
        """Wait (at most the confirmation timeout) for the device to report what `sent` asked
        for; what its state still does not show, [] once it does."""
        return await self._gateway.wait_for_state(sent, self._confirm_timeout_s)

    @property
    def confirm_timeout_s(self) -> float:
        return self._confirm_timeout_s

    async def confirm(self, turn: int, sent: Sent) -> str:
        """Wait for the device to report what `sent` asked for; one sentence on what it shows."""
        device = sent.command.device
        name = device.replace("_", " ")
        missing = await self._gateway.wait_for_state(sent, self._confirm_timeout_s)
        if not missing:
            value = (self._gateway.state_of(device) or {}).get("state")
            if isinstance(value, str):
                return say("device_says", device=name, state=value.lower())
            return say("device_confirms", device=name)
        why = f"did not confirm within {self._confirm_timeout_s:g} s ({', '.join(missing)})"
        _LOGGER.warning("turn %d: %s %s", turn, name, why)
        self._bus.publish(CommandRefused(turn=turn, device=device, reason=why, room=self._room))
        if self._gateway.reports_since(sent) == 0:
            return say("device_silent", device=name)
        return say("device_unchanged", device=name)

    async def execute_confirmed(
        self, turn: int, command: DeviceCommand, *, task_id: str, ack_timeout: float, confirm_timeout: float
    ) -> ActionResult:
        """Publish, wait for the broker's PUBACK, then for the device to report the new state."""
        if await self._unresponsive(turn, command, task_id, ack_timeout):
            return ActionResult(False, "the MQTT broker is not answering; nothing sent", broker_down=True)
        sent = self._send(turn, command, task_id)
        if isinstance(sent, ActionResult):
            return sent
        name = command.device.replace("_", " ")
        try:
            async with asyncio.timeout(ack_timeout):
                await asyncio.wrap_future(sent.delivered)
        except TimeoutError:
            why = f"the broker did not acknowledge within {ack_timeout:g} s"
            return self._refused(turn, sent, task_id, why)
        except PublishRejected as exc:
            return self._refused(turn, sent, task_id, f"the broker refused it: {exc}")
        except BrokerUnavailable as exc:
            return self._refused(turn, sent, task_id, str(exc), broker_down=True)
        missing = await self._gateway.wait_for_state(sent, confirm_timeout)
        if missing:
            why = f"{name} did not confirm within {confirm_timeout:g} s (state shows {', '.join(missing)})"
            _LOGGER.warning("turn %d: %s", turn, why)
            return ActionResult(False, why)
        return ActionResult(True, f"{name} confirmed {sent.payload}")

    def _refused(
        self, turn: int, sent: Sent, task_id: str, why: str, *, broker_down: bool = False
    ) -> ActionResult:
        device = sent.command.device
        _LOGGER.warning("turn %d: %s on %s: %s", turn, sent.payload, sent.topic, why)
        self._bus.publish(
            CommandRefused(turn=turn, device=device, reason=why, task_id=task_id, room=self._room)
        )
        return ActionResult(False, f"{device.replace('_', ' ')}: {why}", broker_down=broker_down)
