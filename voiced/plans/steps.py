"""Carrying out one step: the typed device action, confirmed by the device, at most once per attempt.

Plans (the graph's StepRunner) and scenes (voiced/vibe/runner.py) both send through `once`.
"""

from __future__ import annotations

import dataclasses
import logging

from voiced.devices.actions import DeviceActions
from voiced.devices.confirm import expected_state, mismatches
from voiced.devices.model import DeviceCommand
from voiced.plans.ledger import Ledger
from voiced.plans.model import PlanStep
from voiced.plans.supervisor import StepOutcome

_LOGGER = logging.getLogger(__name__)
PLAN_TURN = 0  # plan steps belong to no turn


class DeviceSteps:
    """The StepRunner of the graph: publishes through DeviceActions (never raw MQTT)."""

    def __init__(
        self, actions: DeviceActions, ledger: Ledger, *, ack_timeout_s: float, confirm_timeout_s: float
    ) -> None:
        self._actions = actions
        self._ledger = ledger
        self._ack_timeout_s = ack_timeout_s
        self._confirm_timeout_s = confirm_timeout_s

    async def __call__(self, task_id: str, step: PlanStep, attempt: int) -> StepOutcome:
        return await self.once(task_id, step.index, attempt, step.typed(), PLAN_TURN, offline_first=True)

    def recorded(self, task_id: str, index: int, attempt: int) -> StepOutcome | None:
        """The outcome of an attempt marked done (before a restart, say); None if it is not."""
        seen = self._ledger.attempt(task_id, index, attempt)
        return StepOutcome(**seen[1]) if seen is not None and seen[0] == "done" else None

    async def once(
        self,
        task_id: str,
        index: int,
        attempt: int,
        command: DeviceCommand,
        turn: int,
        *,
        offline_first: bool = False,
    ) -> StepOutcome:
        """Send `command` unless this attempt is already done; `offline_first`: an offline device
        is not sent to (its outcome says `offline`), else DeviceActions refuses it in its own words."""
        done = self.recorded(task_id, index, attempt)
        if done is not None:
            _LOGGER.info(
                "%s step %d attempt %d: done before the restart, not sent again", task_id, index, attempt
            )
            return done
        device = command.device
        seen = self._ledger.attempt(task_id, index, attempt)
        if seen is not None and seen[0] == "sending":
            # Cut off mid-way: sent or not? The device's own report tells (asked for, if not known yet).
            if self._actions.state_of(device) is None:
                await self._actions.refresh([device])
            if not mismatches(self._actions.state_of(device), expected_state(command)):
                outcome = StepOutcome(
                    True, f"{device.replace('_', ' ')} already shows it (sent before the restart)"
                )
                self._ledger.mark(task_id, index, attempt, "done", dataclasses.asdict(outcome))
                return outcome
        if offline_first and not self._actions.is_online(device):
            outcome = StepOutcome(
                False, f"the {device.replace('_', ' ')} is offline; nothing sent", offline=True
            )
            self._ledger.mark(task_id, index, attempt, "done", dataclasses.asdict(outcome))
            return outcome
        self._ledger.mark(task_id, index, attempt, "sending")
        result = await self._actions.execute_confirmed(
            turn,
            command,
            task_id=task_id,
            ack_timeout=self._ack_timeout_s,
            confirm_timeout=self._confirm_timeout_s,
        )
        outcome = StepOutcome(result.ok, result.message, broker_down=result.broker_down)
        self._ledger.mark(task_id, index, attempt, "done", dataclasses.asdict(outcome))
        return outcome
