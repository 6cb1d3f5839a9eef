"""The rule planner: no LLM, our own understanding of the words, clause by clause.

"Movie night: dim the living room to 20 percent, turn off the kitchen light and play some jazz
quietly." → three steps at once. "In ten minutes turn off the bedroom light." → one step, due in
ten minutes. "Turn on the kitchen light now and turn it off in 2 minutes" → one step at once, one in
two minutes. "Turn on the diffuser for 10 minutes" → on at once, back as it was ten minutes later.
"Wake me up at 7 with the bedroom light fading in over 15 minutes, then play some music." → five
brightness steps from 7:00 to 7:15, then the music at 7:15. Each clause goes through the local
understanding (LocalIntentAgent), so a plan's commands are exactly the ones the same words would
send now: declared devices, typed and clamped values.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

from voiced.devices.model import DeviceCommand, DiffuserSet, LightSet, MusicSet
from voiced.devices.registry import DeviceRegistry
from voiced.devices.restore import undo
from voiced.language.replies import say
from voiced.mouth.intents import NEGATED, REPORTED, LocalIntentAgent
from voiced.mouth.understanding.home import pct_to_brightness
from voiced.mouth.understanding.reported import is_negated, is_reported
from voiced.plans.model import ExecutionPlan, PlanStep, command_kind
from voiced.plans.timewords import TRIGGERS, Part, has_time_words, parts
from voiced.plans.words import clock, describe, plan_language

RAMP_STEPS = 5
QUIET_VOLUME, LOUD_VOLUME = 25, 70
_NAME = re.compile(
    r"^\s*(?P<name>[a-z][a-z' ]{2,30}?)\s*[:,.\-]\s*"
    r"(?=(?:please\s+)?(?:dim|turn|set|play|switch|make|put|start|stop|lights?|in|at|wake)\b)"
)
_WAKE = re.compile(r"\b(?:wake me(?: up)?|get me up)\b")
_FADE = re.compile(
    r"(?:^|\b(?:with|and)\s+)(?:the\s+)?(?P<a>[a-z ]+?)\s+"
    r"(?:fading|fade|coming|slowly coming)\s+(?:in|up|on)\b"
    r"|\bfade\s+(?:in\s+|up\s+)?(?:the\s+)?(?P<b>[a-z ]+?)(?:\s+(?:in|up))?\s*$"
)
_QUIET = re.compile(r"\b(?:quietly|softly|gently|in the background)\b")
_LOUD = re.compile(r"\b(?:loudly|loud)\b")
# Whisper often ends a clause with no comma but starts the next with a capital: "to 20% Turn off ...".
_CLAUSE_START = re.compile(r"(?<=[a-z0-9%])\s+(?=(?:Turn|Dim|Set|Play|Switch|Make|Put|Start|Stop|Then)\b)")
VERBS = tuple(str(verb) for verb in plan_language()["verbs"])
States = Callable[[str], Mapping[str, Any] | None]


class PlanRefused(Exception):
    """The words cannot be planned; the message says why, to be spoken.

    `understood`: the words were understood (a trigger we cannot wait for), as opposed to words our
    understanding did not take, which an LLM may still make sense of.
    """

    def __init__(self, message: str, *, understood: bool = False) -> None:
        super().__init__(message)
        self.understood = understood


class RulePlanner:
    def __init__(
        self,
        registry: DeviceRegistry,
        intents: LocalIntentAgent,
        *,
        confirm_over_steps: int,
        now: Callable[[], datetime] = datetime.now,
        states: States = lambda _name: None,
    ) -> None:
        """`states`: each device's last report, so what is asked "for 10 minutes" is put back as it was."""
        self._registry = registry
        self._states = states
        self._intents = intents
        self._confirm_over_steps = confirm_over_steps
        self._now = now
        # Devices declared `confirm: true`, as they are said: one command to them is a plan too.
        self._careful = [
            name
            for device in registry
            if device.confirm
            for name in (device.name.replace("_", " "), *device.aliases)
        ]

    def understood_by(self, intents: LocalIntentAgent) -> RulePlanner:
        """This planner, its steps understood by another room's `intents`."""
        planner = copy.copy(self)
        planner._intents = intents
        return planner

    def candidate(self, text: str) -> bool:
        """Worth planning: time words, a trigger, a name before a colon, a device declared `confirm: true`,
        or several commands."""
        lowered = text.lower()
        if has_time_words(lowered) or TRIGGERS.search(lowered) or _NAME.search(lowered):
            return True
        if any(re.search(rf"\b{re.escape(name)}\b", lowered) for name in self._careful):
            return True
        verbs = sum(1 for word in re.findall(r"[a-z]+", lowered) if word in VERBS)
        return verbs > self._confirm_over_steps

    def needs_confirmation(self, plan: ExecutionPlan) -> bool:
        """For a plan made over the task API: timed steps, more than `confirm_over_steps` steps, or a
        device declared `confirm: true`. (Said aloud, steps for now run at once: voiced/plans/at_once.py.)"""
        if any(step.timed for step in plan.steps) or len(plan.steps) > self._confirm_over_steps:
            return True
        return self.risky(plan)

    def risky(self, plan: ExecutionPlan) -> bool:
        """A step to a device declared `confirm: true`: the whole plan waits for a yes."""
        devices = {device.name: device for device in self._registry}
        return any(devices[step.device].confirm for step in plan.steps if step.device in devices)

    def plan(self, text: str) -> ExecutionPlan:
        """The whole request read at once; if that means nothing (two states for one light), each
        clause on its own: "turn on the kitchen light and turn it off in 2 minutes"."""
        try:
            return self._plan(text, each_clause=False)
        except PlanRefused as refused:
            if refused.understood:
                raise
            try:
                return self._plan(text, each_clause=True)
            except PlanRefused:
                raise refused from None

    def _plan(self, text: str, *, each_clause: bool) -> ExecutionPlan:
        lowered = " ".join(_CLAUSE_START.sub(", ", text).lower().replace("\u2019", "'").split())
        if is_reported(lowered):  # someone else's words: never a plan of ours
            raise PlanRefused(REPORTED, understood=True)
        if is_negated(lowered):
            raise PlanRefused(NEGATED, understood=True)
        if TRIGGERS.search(lowered):
            raise PlanRefused(say("plan_triggers"), understood=True)
        name = "plan"
        if (found := _NAME.search(lowered)) is not None and not any(
            verb in found["name"].split() for verb in VERBS
        ):
            name = found["name"].strip()
            lowered = lowered[found.end() :]
        wake = bool(_WAKE.search(lowered))
        if wake and name == "plan":
            name = "wake-up plan"
        lowered = _WAKE.sub(" ", lowered)
        now = self._now()
        steps: list[PlanStep] = []
        end: datetime | None = None
        clock_time = False  # the chain so far hangs on a time of day ("at 7"), not on the plan's start
        for part in parts(lowered, now, each_clause=each_clause):
            start = self._start(part, now, end)
            clock_time = part.at is not None or (clock_time and part.then)
            commands, group = self._commands(part, start)
            if not commands:
                continue
            if part.for_s is not None:
                commands, later = _timed_natively(commands, part.for_s)
                commands += self._undone(later, (start or now) + timedelta(seconds=part.for_s), start)
            for at, command in commands:
                steps.append(self._step(len(steps), command, at, part.text, group, now, clock_time))
            end = commands[-1][0] if commands[-1][0] is not None else end
        if not steps:
            raise PlanRefused(say("plan_nothing_caught"))
        if name == "plan" and len(steps) == 1 and steps[0].timed:
            name = say("plan_to", steps=steps[0].action)
        return ExecutionPlan(
            name=name,
            steps=tuple(steps),
            estimated_time=_estimate(steps, now),
            risks=_risks(steps),
        )

    def _undone(
        self, commands: list[tuple[datetime | None, DeviceCommand]], at: datetime, start: datetime | None
    ) -> list[tuple[datetime | None, DeviceCommand]]:
        """What ends commands said "for 10 minutes": each device as it was (when they run now and
        its state is known), else the opposite."""
        kinds = {device.name: device.kind for device in self._registry}
        found: list[tuple[datetime | None, DeviceCommand]] = []
        for _at, command in commands:
            before = self._states(command.device) if start is None else None
            back = undo(command, before, kinds.get(command.device, ""))
            if back is not None:
                found.append((at, back))
        return found

    @staticmethod
    def _start(part: Part, now: datetime, end: datetime | None) -> datetime | None:
        if part.at is not None:
            return part.at
        if part.delay_s is not None:
            return (end if part.then and end is not None else now) + timedelta(seconds=part.delay_s)
        if part.then and end is not None:
            return end
        if part.over_s is not None:
            return now
        return None

    def _commands(
        self, part: Part, start: datetime | None
    ) -> tuple[list[tuple[datetime | None, DeviceCommand]], str]:
        text = part.text
        if not text:
            return [], ""
        fade = _FADE.search(text)
        if fade is not None:
            target = re.sub(r"^(?:(?:with|and|the)\s+)+", "", (fade["a"] or fade["b"] or "").strip())
            return self._ramp(target, part, start)
        volume = QUIET_VOLUME if _QUIET.search(text) else LOUD_VOLUME if _LOUD.search(text) else None
        text = _LOUD.sub(" ", _QUIET.sub(" ", text))
        reply = self._intents.understand(text)
        if not reply.understood or not reply.commands:
            said = reply.text if not reply.understood else say("cannot_plan", text=text)
            raise PlanRefused(f"{said} {say('plans_none')}".replace("..", "."))
        commands = [_with_volume(c, volume) for c in reply.commands]
        return [(start, c) for c in commands], ""

    def _ramp(
        self, target: str, part: Part, start: datetime | None
    ) -> tuple[list[tuple[datetime | None, DeviceCommand]], str]:
        reply = self._intents.understand(f"turn on the {target}")
        lights = [c for c in reply.commands if isinstance(c, LightSet)]
        if not reply.understood or not lights:
            raise PlanRefused(say("plan_which_light", target=target))
        over = part.over_s or 600.0
        begin = start or self._now()
        found: list[tuple[datetime | None, DeviceCommand]] = []
        for i in range(RAMP_STEPS):
            at = begin + timedelta(seconds=over * i / (RAMP_STEPS - 1))
            pct = round(100 * (i + 1) / RAMP_STEPS)
            for light in lights:
                found.append(
                    (at, LightSet(device=light.device, state="ON", brightness=pct_to_brightness(pct)))
                )
        names = " and ".join(sorted({light.device.replace("_", " ") for light in lights}))
        return found, say("step_fade_in", names=names, over=say("over_minutes", count=round(over / 60)))

    def _step(
        self,
        index: int,
        command: DeviceCommand,
        at: datetime | None,
        reason: str,
        group: str,
        now: datetime,
        clock_time: bool,
    ) -> PlanStep:
        """A time of day stays one; "in ten minutes" counts from when the plan starts (its "yes")."""
        delay = (at - now).total_seconds() if at is not None and not clock_time else None
        return PlanStep(
            index=index,
            device=command.device,
            kind=command_kind(command),
            command=command.model_dump(mode="json", exclude_none=True),
            action=describe(command),
            at=at.timestamp() if at is not None and clock_time else None,
            delay_s=delay,
            reason=f'you asked: "{reason}"',
            group=group,
        )


def _timed_natively(
    commands: list[tuple[datetime | None, DeviceCommand]], for_s: float
) -> tuple[list[tuple[datetime | None, DeviceCommand]], list[tuple[datetime | None, DeviceCommand]]]:
    """ "The diffuser for 30 minutes": a device that switches itself off after a time (the diffuser's
    `duration_min`) is told so, with no later step; the others are ended by a step of the plan."""
    minutes = max(1, min(1440, round(for_s / 60)))
    told = [(at, c.model_copy(update={"duration_min": minutes}) if _runs_for(c) else c) for at, c in commands]
    return told, [(at, c) for at, c in commands if not _runs_for(c)]


def _runs_for(command: DeviceCommand) -> bool:
    return isinstance(command, DiffuserSet) and command.state != "OFF"


def _with_volume(command: DeviceCommand, volume: int | None) -> DeviceCommand:
    if volume is None or not isinstance(command, MusicSet) or command.volume is not None:
        return command
    return command.model_copy(update={"volume": volume})


def _estimate(steps: list[PlanStep], now: datetime) -> str:
    last = max((s.at for s in steps if s.at is not None), default=None)
    delay = max((s.delay_s for s in steps if s.delay_s is not None), default=None)
    if last is not None:
        return f"until {clock(last)}"
    if delay is not None:
        return f"{round(delay / 60)} minutes from the start" if delay >= 90 else f"{round(delay)} seconds"
    return "a few seconds"


def _risks(steps: list[PlanStep]) -> tuple[str, ...]:
    risks = ["a device that does not confirm is tried once more, then skipped"]
    if any(s.timed for s in steps):
        risks.append("a timed step due while the daemon is down runs late only within plans.grace_s")
    return tuple(risks)


def without(plan: ExecutionPlan, words: str) -> ExecutionPlan:
    """The plan less the steps `words` names ("the music", "the kitchen light", "jazz"), renumbered."""
    wanted = {w for w in re.findall(r"[a-z]+", words.lower()) if w not in ("the", "a", "any", "some", "my")}
    kept = []
    for step in plan.steps:
        said = set(
            re.findall(r"[a-z]+", f"{step.device} {step.kind} {step.action} {step.group}".replace("_", " "))
        )
        if not wanted or not wanted <= said:
            kept.append(step)
    return plan.model_copy(
        update={"steps": tuple(s.model_copy(update={"index": i}) for i, s in enumerate(kept))}
    )
