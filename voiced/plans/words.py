"""What a plan says: each command in words, steps said together as one, the read-back, the outcome.

Steps that do the same thing at the same time to several devices are said once: "turn off all the
lights in 10 minutes", "set the bedroom and kitchen lights to 40 %". `PlanWords` knows the home's
devices by kind, so a group of them all is "all the lights"; the words are in
voiced/language/plans_en.yaml and the sentences in replies_en.yaml.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from voiced.devices.colours import COLORS
from voiced.devices.model import DeviceCommand, DiffuserSet, LightSet, MusicSet, SwitchSet
from voiced.devices.registry import DeviceRegistry
from voiced.language import HERE
from voiced.language.replies import join, knows, say, the
from voiced.plans.model import ExecutionPlan, PlanStep
from voiced.yamlfile import load_yaml

_HEX_NAMES = {value.upper(): name for name, value in COLORS.items()}


@functools.cache
def plan_language() -> dict[str, Any]:
    """voiced/language/plans_en.yaml."""
    loaded: dict[str, Any] = load_yaml(HERE / "plans_en.yaml")
    return loaded


def _name(device: str) -> str:
    return device.replace("_", " ")


def _pct(brightness: int) -> int:
    return round(brightness * 100 / 254)


def describe(command: DeviceCommand, target: str | None = None) -> str:
    """ "dim the living room light to 20 %", "turn off the kitchen light", "play jazz at volume 25";
    `target` says the device another way ("all the lights")."""
    who = target or the(_name(command.device))
    if isinstance(command, LightSet):
        if command.state == "OFF":
            return say("step_turn_off", who=who)
        if command.brightness is not None:
            return say("step_set_percent", who=who, percent=_pct(command.brightness))
        if command.color_hex is not None:
            colour = _HEX_NAMES.get(command.color_hex.upper(), command.color_hex)
            return say("step_make", who=who, colour=colour)
        if command.color_temp is not None:
            return say("step_set_mireds", who=who, mireds=command.color_temp)
        return say("step_turn_on", who=who)
    if isinstance(command, DiffuserSet):
        if command.state == "OFF":
            return say("step_turn_off", who=who)
        key = "step_scent" if command.scent else "step_turn_on"
        if command.intensity is not None:
            key = "step_scent_intensity" if command.scent else "step_intensity"
        return say(key, who=who, scent=command.scent, intensity=command.intensity)
    if isinstance(command, SwitchSet):
        return say("step_turn", who=who, state=command.state.lower())
    return _music(command)


def _music(command: MusicSet) -> str:
    if command.action == "play":
        what = command.genre or command.query or say("step_a_playlist" if command.tracks else "step_music")
        return say(
            "step_play" if command.volume is None else "step_play_at", what=what, volume=command.volume
        )
    if command.action in ("pause", "stop", "next", "previous"):
        return say(f"step_{command.action}")
    return (
        say("step_volume", volume=command.volume) if command.volume is not None else say("step_leave_music")
    )


def doing(phrase: str) -> str:
    """ "turn off the kitchen light" → "turning off the kitchen light"."""
    verb, _, rest = phrase.partition(" ")
    done = plan_language()["doing"].get(verb, verb)
    return f"{done} {rest}".strip()


def clock(at: float) -> str:
    """ "7:00 AM": what piper reads as a time."""
    return time.strftime("%I:%M %p", time.localtime(at)).lstrip("0")


def when(step: PlanStep, now: float, started: float | None = None) -> str:
    """ "in 10 minutes", "at 7:00 AM", or "" (at once); `started`: when the plan began to run, so a
    step due `delay_s` after it is said from `now`."""
    due = step.at if step.at is not None else None
    if due is None and step.delay_s is not None and started is not None:
        due = started + step.delay_s
    if due is None and step.delay_s is None:
        return ""
    seconds = round(due - now if due is not None else step.delay_s or 0)
    if 0 < seconds < 90:
        return say("in_seconds", count=seconds)
    minutes = round(seconds / 60)
    if step.at is None or 0 < minutes < 60:
        if minutes >= 60 and minutes % 60 == 0:
            return say("in_hours", count=minutes // 60)
        return say("in_minutes", count=max(minutes, 0))
    return say("at_time", time=clock(step.at))


@dataclass(frozen=True)
class PlanWords:
    """`kinds`: every device's name by kind, so that several named together may be "all the lights"."""

    kinds: Mapping[str, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, registry: DeviceRegistry | Iterable[Any]) -> PlanWords:
        kinds: dict[str, set[str]] = {}
        for device in registry:
            kinds.setdefault(device.kind, set()).add(device.name)
        return cls({kind: frozenset(names) for kind, names in kinds.items()})

    def target(self, kind: str, devices: Sequence[str]) -> str:
        """Several devices of one kind in words: all of them, or their names sharing one plural."""
        language = plan_language()
        if len(devices) > 1 and self.kinds.get(kind) == frozenset(devices):
            whole = language["all_of_kind"].get(kind)
            if whole:
                return str(whole)
        names = [_name(d) for d in devices]
        last = {name.rsplit(" ", 1)[-1] for name in names}
        plural = language["plurals"].get(next(iter(last))) if len(last) == 1 else None
        if plural and all(" " in name for name in names):
            return say("group_of_kind", [name.rsplit(" ", 1)[0] for name in names], plural=plural)
        return join([the(name) for name in names])

    def phrases(
        self, plan: ExecutionPlan, now: float, *, started: float | None = None, done: Iterable[int] = ()
    ) -> list[str]:
        """What the plan does, one phrase per moment: the steps due together said as one ("turn off
        the kitchen light and play jazz in 10 minutes"), a ramp on its own; `done` steps left out."""
        said: list[tuple[list[str], str, bool]] = []  # (actions, when, a ramp)
        for action, moment, ramp in self._actions(plan, now, started, set(done)):
            if said and said[-1][1] == moment and not ramp and not said[-1][2]:
                said[-1][0].append(action)
            else:
                said.append(([action], moment, ramp))
        return [f"{join(actions)} {moment}".strip() for actions, moment, _ramp in said]

    def _actions(
        self, plan: ExecutionPlan, now: float, started: float | None, done: set[int]
    ) -> list[tuple[str, str, bool]]:
        """Each step's action, when it is due, and whether it is a ramp (said once); the same command
        to several devices of one kind at the same moment said once, for them all."""
        found: list[tuple[str, str, bool]] = []
        seen: set[str] = set()
        left = [step for step in plan.steps if step.index not in done]
        i = 0
        while i < len(left):
            step = left[i]
            moment = when(step, now, started)
            if step.group:
                if step.group not in seen:
                    seen.add(step.group)
                    found.append((step.group, say("starting", moment=moment) if moment else "", True))
                i += 1
                continue
            together = [step]
            while i + len(together) < len(left) and _same(left[i + len(together)], step, now, started):
                together.append(left[i + len(together)])
            devices = list(dict.fromkeys(s.device for s in together))
            action = (
                describe(step.typed(), self.target(step.kind, devices)) if len(devices) > 1 else step.action
            )
            found.append((action, moment, False))
            i += len(together)
        return found

    def read_back(self, plan: ExecutionPlan, now: float) -> str:
        """ "I'll turn off all the lights in 10 minutes. Shall I go ahead?" """
        return say("plan_read_back", steps=join_then(self.phrases(plan, now)))

    def actions(self, plan: ExecutionPlan) -> list[str]:
        """What the plan does, without when: ["turn off all the lights", "play jazz"]."""
        return [action for action, _when, _ramp in self._actions(plan, 0.0, None, set())]

    def doing_now(self, plan: ExecutionPlan) -> str:
        """ "Turning off all the lights and playing jazz." """
        return say("plan_doing_now", steps=join([doing(action) for action in self.actions(plan)]))

    def planned(self, view: Mapping[str, Any], now: float) -> str:
        """One plan not yet finished, as a sentence: what it will do and when, from `now`."""
        plan = ExecutionPlan.model_validate(view["execution_plan"])
        history = view.get("execution_history", [])
        done = {e.get("step") for e in history if e.get("decision") in ("continue", "skip")}
        started = view.get("started_at")
        steps = self.phrases(plan, now, started=started, done=[d for d in done if d is not None])
        waiting = view.get("status") == "waiting_confirmation"
        key = "plan_line" + ("_named" if is_named(plan.name) else "") + ("_waiting" if waiting else "")
        return say(key, name=plan.name, steps=join_then(steps))


def _same(step: PlanStep, first: PlanStep, now: float, started: float | None) -> bool:
    """The same command to another device of the same kind, due at the same moment."""
    if step.group or step.kind != first.kind or step.device == first.device:
        return False
    fields = {k: v for k, v in step.command.items() if k != "device"}
    if fields != {k: v for k, v in first.command.items() if k != "device"}:
        return False
    return (step.at, step.delay_s) == (first.at, first.delay_s) or when(step, now, started) == when(
        first, now, started
    )


def is_named(name: str) -> bool:
    """A name the user gave ("movie night"), not one made up from the steps ("plan to ...")."""
    return name not in ("plan", "") and not name.startswith(say("plan_to", steps=""))


def join_then(parts: Sequence[str]) -> str:
    if not parts:
        return say("steps_none")
    if len(parts) == 1:
        return parts[0]
    return say("steps_then", first=", ".join(parts[:-1]), last=parts[-1])


def status_words(status: str) -> str:
    """Where a plan is, after its id or name: "was already cancelled"."""
    key = f"plan_status_{status}"
    return say(key) if knows(key) else say("plan_status_other", status=status)


def step_phrase(step: PlanStep) -> str:
    return step.group or step.action


def no_answer_line(state: Mapping[str, Any]) -> str:
    name = ExecutionPlan.model_validate(state["execution_plan"]).name
    return say("plan_no_answer", name=name)


def outcome_line(state: Mapping[str, Any]) -> str:
    """Said at the next pause when a plan ends: done, or what was skipped and why."""
    name = ExecutionPlan.model_validate(state["execution_plan"]).name
    if state.get("status") == "completed":
        return say("plan_done", name=name)
    skipped = [e for e in state.get("execution_history", []) if e.get("decision") == "skip"]
    said = [f"{e['action']}: {e['reason']}" for e in skipped[:3]]
    if state.get("ended"):
        said.append(say("plan_stopped_early", why=state["ended"]))
    why = "; ".join(said) or state.get("result", "")
    return say("plan_partly_done", name=name, why=why)


DEFAULT_WORDS = PlanWords()


def read_back(plan: ExecutionPlan, now: float) -> str:
    """The read-back without the home's devices (a group is named, never "all")."""
    return DEFAULT_WORDS.read_back(plan, now)
