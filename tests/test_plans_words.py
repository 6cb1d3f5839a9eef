"""Plans in plain words: now and later in one sentence, "at 7", "for 10 minutes", steps said together
as one, what is done at once and what waits, and the plans said as sentences.

The rule planner runs on our own understanding of the repo's devices (no mocks); times are read
against a fixed clock.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from tests.conftest import REPO
from voiced.devices.model import DiffuserSet, LightSet, MusicSet
from voiced.devices.registry import DeviceRegistry
from voiced.devices.restore import restore, undo
from voiced.mouth.intents import LocalIntentAgent
from voiced.plans.at_once import split
from voiced.plans.model import ExecutionPlan
from voiced.plans.rules import RulePlanner
from voiced.plans.timewords import parts
from voiced.plans.words import DEFAULT_WORDS, PlanWords

NOW = datetime(2026, 11, 23, 22, 0)
REGISTRY = DeviceRegistry.load(REPO / "devices")
WORDS = PlanWords.of(REGISTRY)
STATES: dict[str, dict[str, Any]] = {"bedroom_light": {"state": "ON", "brightness": 102, "color_temp": 370}}


def planner() -> RulePlanner:
    intents = LocalIntentAgent(REGISTRY, lambda _name: None)
    return RulePlanner(REGISTRY, intents, confirm_over_steps=2, now=lambda: NOW, states=STATES.get)


def steps(plan: ExecutionPlan) -> list[tuple[str, dict[str, Any], float | None, float | None]]:
    return [
        (s.device, {k: v for k, v in s.command.items() if k != "device"}, s.at, s.delay_s) for s in plan.steps
    ]


def read_back(plan: ExecutionPlan) -> str:
    return WORDS.read_back(plan, NOW.timestamp())


def test_now_and_later_in_one_sentence_are_two_steps() -> None:
    plan = planner().plan("turn on the kitchen light now and turn it off in 2 minutes")
    assert steps(plan) == [
        ("kitchen_light", {"state": "ON"}, None, None),
        ("kitchen_light", {"state": "OFF"}, None, 120),
    ]
    # without "now" the whole sentence means nothing (two states for one light): clause by clause
    assert steps(planner().plan("turn on the kitchen light and turn it off in 2 minutes")) == steps(plan)
    parted = split(plan, WORDS)
    assert WORDS.doing_now(parted.now) == "Turning on the kitchen light."
    assert parted.later.name == "plan to turn off the kitchen light"
    assert read_back(parted.later) == "I'll turn off the kitchen light in 2 minutes. Shall I go ahead?"


def test_a_time_said_first_is_for_the_whole_sentence_and_now_parts_it() -> None:
    whole = parts("in 10 minutes turn off the kitchen light and play jazz", NOW)
    assert [(p.text, p.delay_s) for p in whole] == [("turn off the kitchen light and play jazz", 600)]
    apart = parts("turn off the kitchen light now and play jazz in 10 minutes", NOW)
    assert [(p.text, p.delay_s, p.now) for p in apart] == [
        ("turn off the kitchen light", None, True),
        ("play jazz", 600, False),
    ]
    together = planner().plan("in 10 minutes turn off the kitchen light and play jazz")
    assert (
        read_back(together)
        == "I'll turn off the kitchen light and play jazz in 10 minutes. Shall I go ahead?"
    )


def test_at_7_is_the_next_7_oclock() -> None:
    plan = planner().plan("at 7 turn on the bedroom light")
    seven = datetime(2026, 11, 24, 7, 0).timestamp()
    assert steps(plan) == [("bedroom_light", {"state": "ON"}, seven, None)]
    assert read_back(plan) == "I'll turn on the bedroom light at 7:00 AM. Shall I go ahead?"


def test_for_10_minutes_puts_it_back_as_it_was_after() -> None:
    plan = planner().plan("turn off the bedroom light for 10 minutes")
    # the bedroom light reported 40 % warm white: that is what comes back
    assert steps(plan) == [
        ("bedroom_light", {"state": "OFF"}, None, None),
        ("bedroom_light", {"state": "ON", "brightness": 102, "color_temp": 370}, None, 600),
    ]
    diffuser = planner().plan("turn on the diffuser for 10 minutes")  # it switches itself off: told so
    assert steps(diffuser) == [("diffuser", {"state": "ON", "duration_min": 10}, None, None)]
    music = planner().plan("play jazz for an hour")
    assert read_back(music) == "I'll play jazz, then stop the music in 1 hour. Shall I go ahead?"
    later = planner().plan("in 5 minutes turn on the kitchen light for 10 minutes")  # later: the opposite
    assert steps(later) == [
        ("kitchen_light", {"state": "ON"}, None, 300),
        ("kitchen_light", {"state": "OFF"}, None, 900),
    ]


def test_a_group_is_read_back_as_one_short_sentence() -> None:
    lights = planner().plan("in ten minutes turn off the lights")
    assert len(lights.steps) == 3
    assert read_back(lights) == "I'll turn off all the lights in 10 minutes. Shall I go ahead?"
    # without the home's devices nobody knows they are all: named, still one sentence
    assert DEFAULT_WORDS.read_back(lights, NOW.timestamp()) == (
        "I'll turn off the bedroom, kitchen and living room lights in 10 minutes. Shall I go ahead?"
    )
    two = planner().plan("in 5 minutes turn off the kitchen light and the bedroom light")
    assert read_back(two) == "I'll turn off the kitchen and bedroom lights in 5 minutes. Shall I go ahead?"
    mixed = planner().plan("in 5 minutes turn off the lights, then in 10 minutes turn on the kitchen light")
    assert read_back(mixed) == (
        "I'll turn off all the lights in 5 minutes, then turn on the kitchen light in 15 minutes. "
        "Shall I go ahead?"
    )


def test_commands_for_now_are_done_at_once_and_only_the_rest_waits() -> None:
    plan = planner().plan("turn on the kitchen light, turn off the bedroom light and play some jazz")
    parted = split(plan, WORDS)
    assert parted.later.steps == () and len(parted.now.steps) == 3
    assert WORDS.doing_now(parted.now) == (
        "Turning on the kitchen light, turning off the bedroom light and playing jazz."
    )
    night = planner().plan("turn off the lights and play some jazz quietly")
    assert WORDS.doing_now(night) == "Turning off all the lights and playing jazz at volume 25."


def test_the_plans_are_said_as_sentences_from_now() -> None:
    later = planner().plan("in 10 minutes turn off the bedroom light")
    started = NOW.timestamp() - 60  # confirmed a minute ago
    view = {"execution_plan": later.model_dump(mode="json"), "status": "executing", "started_at": started}
    assert WORDS.planned(view, NOW.timestamp()) == "I'll turn off the bedroom light in 9 minutes."
    movie = planner().plan("Movie night: at 9 pm dim the living room to 20 percent, then play some jazz")
    waiting = {"execution_plan": movie.model_dump(mode="json"), "status": "waiting_confirmation"}
    assert WORDS.planned(waiting, NOW.timestamp()) == (  # due together: said together
        "For the movie night, I'll set the living room light to 20 % and play jazz at 9:00 PM, "
        "once you say yes."
    )
    done = {**view, "execution_history": [{"step": 0, "decision": "continue"}]}
    two = planner().plan("in 10 minutes turn off the bedroom light, then in 5 minutes play jazz")
    half = {**done, "execution_plan": two.model_dump(mode="json")}
    assert WORDS.planned(half, NOW.timestamp()) == "I'll play jazz in 14 minutes."


@pytest.mark.parametrize(
    ("kind", "state", "wanted"),
    [
        ("light", {"state": "OFF", "brightness": 40}, LightSet(device="d", state="OFF")),
        (
            "light",
            {
                "state": "ON",
                "brightness": 40,
                "color_mode": "xy",
                "color": {"x": 0.7, "y": 0.3},
                "color_temp": 300,
            },
            LightSet(device="d", state="ON", brightness=40, color_hex="#FF0000"),
        ),
        (
            "diffuser",
            {"state": "ON", "scent": "lavender", "intensity": 30},
            DiffuserSet(device="d", state="ON", scent="lavender", intensity=30),
        ),
        ("music", {"state": "stopped", "volume": 50}, MusicSet(device="d", action="stop", volume=50)),
        (
            "music",
            {"state": "playing", "genre": "rock", "volume": 50},
            MusicSet(device="d", action="play", genre="rock", volume=50),
        ),
        ("music", None, None),
    ],
)
def test_a_device_is_put_back_as_it_reported(kind: str, state: dict[str, Any] | None, wanted: object) -> None:
    assert restore("d", kind, state) == wanted


def test_undoing_without_a_report_is_the_opposite() -> None:
    assert undo(LightSet(device="d", state="ON"), None, "light") == LightSet(device="d", state="OFF")
    assert undo(LightSet(device="d", brightness=20), None, "light") == LightSet(device="d", state="OFF")
    assert undo(MusicSet(device="m", action="play", genre="jazz"), None, "music") == MusicSet(
        device="m", action="stop"
    )
    assert undo(MusicSet(device="m", action="next"), None, "music") is None
    assert NOW + timedelta(minutes=1) > NOW  # the clock is fixed: nothing here reads the real one
