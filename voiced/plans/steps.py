"""Carrying out one step: the typed device action, confirmed by the device, at most once per attempt."""

from __future__ import annotations

import dataclasses
import logging

from voiced.devices.actions import DeviceActions
from voiced.devices.confirm import expected_state, mismatches
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
        seen = self._ledger.attempt(task_id, step.index, attempt)
        command = step.typed()
        if seen is not None and seen[0] == "done":
            _LOGGER.info(
                "%s step %d attempt %d: done before the restart, not sent again", task_id, step.index, attempt
            )
            return StepOutcome(**seen[1])
        # Cut off mid-way: sent or not? The device's own report tells.
        shown = not mismatches(self._actions.state_of(step.device), expected_state(command))
        if seen is not None and seen[0] == "sending" and shown:
            outcome = StepOutcome(
                True, f"{step.device.replace('_', ' ')} already shows it (sent before the restart)"
            )
            self._ledger.mark(task_id, step.index, attempt, "done", dataclasses.asdict(outcome))
            return outcome
        if not self._actions.is_online(step.device):
            outcome = StepOutcome(
                False, f"the {step.device.replace('_', ' ')} is offline; nothing sent", offline=True
            )
            self._ledger.mark(task_id, step.index, attempt, "done", dataclasses.asdict(outcome))
            return outcome
        self._ledger.mark(task_id, step.index, attempt, "sending")
        result = await self._actions.execute_confirmed(
            PLAN_TURN,
            command,
            task_id=task_id,
            ack_timeout=self._ack_timeout_s,
            confirm_timeout=self._confirm_timeout_s,
        )
        outcome = StepOutcome(result.ok, result.message, broker_down=result.broker_down)
        self._ledger.mark(task_id, step.index, attempt, "done", dataclasses.asdict(outcome))
        return outcome
