"""Every reply template in voiced/language/replies_en.yaml, said of one thing and of several.

Each is rendered with one and with many, and the sentence is checked word for word: a verb that
does not agree ("the lights is"), a plural for one ("1 plans"), a piece missing. A template added to
the file without its two sentences here fails `test_every_template_is_checked`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from voiced.errors import ConfigError
from voiced.language.replies import Replies, replies, say

ONE = ["the kitchen light"]
TWO = ["the kitchen light", "the bedroom light"]
ALL = ["all the lights"]  # said for every light: three of them

# key: ((things, count, fields), expected for one), ((things, count, fields), expected for many)
Case = tuple[tuple[list[str], int | None, dict[str, Any]], str]
CASES: dict[str, tuple[Case, Case]] = {
    "device_offline": (
        ((ONE, None, {}), "The kitchen light is offline, so I couldn't set it."),
        ((TWO, None, {}), "The kitchen light and the bedroom light are offline, so I couldn't set them."),
    ),
    "device_failed": (
        ((ONE, None, {}), "But I couldn't set the kitchen light."),
        ((TWO, None, {}), "But I couldn't set the kitchen light and the bedroom light."),
    ),
    "device_unacked": (
        (
            (ONE, None, {}),
            "But the broker hasn't confirmed the command for the kitchen light, so it may not change.",
        ),
        (
            (TWO, None, {}),
            "But the broker hasn't confirmed the commands for the kitchen light and the bedroom light, "
            "so they may not change.",
        ),
    ),
    "scene_partly_set": (
        ((["the music"], None, {}), "Sorry, the scene is only partly set: the music couldn't be set."),
        (
            (["the music", "the diffuser"], None, {}),
            "Sorry, the scene is only partly set: the music and the diffuser couldn't be set.",
        ),
    ),
    "scene_did_change": (
        ((ONE, None, {}), "The kitchen light did change."),
        ((TWO, None, {}), "The kitchen light and the bedroom light did change."),
    ),
    "scene_undone": (
        (
            ([], None, {"scene": "the relax scene"}),
            "Okay, I put everything back as it was before the relax scene.",
        ),
        (([], None, {"scene": "the scene"}), "Okay, I put everything back as it was before the scene."),
    ),
    "scene_stopped": (
        (([], None, {}), "Okay, I stopped the scene."),
        (([], 3, {}), "Okay, I stopped the scene."),
    ),
    "scene_stopped_and_undone": (
        (
            ([], None, {"scene": "the relax scene"}),
            "Okay, I stopped the relax scene and put everything back as it was.",
        ),
        (([], 3, {"scene": "the scene"}), "Okay, I stopped the scene and put everything back as it was."),
    ),
    "scene_nothing_to_undo": (
        (
            ([], None, {"scene": "the relax scene"}),
            "Okay, the relax scene didn't change anything, so there's nothing to put back.",
        ),
        (
            ([], 3, {"scene": "the scene"}),
            "Okay, the scene didn't change anything, so there's nothing to put back.",
        ),
    ),
    "scene_kept": (
        ((ONE, None, {}), "The kitchen light stays as the scene left it: I didn't know how it was before."),
        (
            (TWO, None, {}),
            "The kitchen light and the bedroom light stay as the scene left them: "
            "I didn't know how they were before.",
        ),
    ),
    "state_yes": (
        ((ONE, None, {"state": "off"}), "Yes, the kitchen light is off."),
        ((ALL, 3, {"state": "off"}), "Yes, all the lights are off."),
    ),
    "state_no": (
        ((ONE, None, {"other": "on"}), "No, the kitchen light is on."),
        ((TWO, None, {"other": "on"}), "No, the kitchen light and the bedroom light are on."),
    ),
    "state_is": (
        ((ONE, None, {"state": "off"}), "The kitchen light is off."),
        ((ALL, 3, {"state": "on"}), "All the lights are on."),
    ),
    "state_none": (
        ((ONE, None, {"state": "on"}), "The kitchen light isn't on."),
        ((["the lights"], 3, {"state": "on"}), "None of the lights are on."),
    ),
    "no_report": (
        ((ONE, None, {}), "The kitchen light hasn't reported its state yet."),
        ((TWO, None, {}), "The kitchen light and the bedroom light haven't reported their state yet."),
    ),
    "plan_read_back": (
        (
            ([], None, {"steps": "turn off the kitchen light in 10 minutes"}),
            "I'll turn off the kitchen light in 10 minutes. Shall I go ahead?",
        ),
        (
            ([], 3, {"steps": "turn off all the lights in 10 minutes"}),
            "I'll turn off all the lights in 10 minutes. Shall I go ahead?",
        ),
    ),
    "plan_doing_now": (
        (([], None, {"steps": "turning off the kitchen light"}), "Turning off the kitchen light."),
        (
            ([], 3, {"steps": "turning off all the lights and playing jazz"}),
            "Turning off all the lights and playing jazz.",
        ),
    ),
    "plan_line": (
        (
            ([], None, {"name": "", "steps": "turn off the kitchen light in 9 minutes", "waiting": ""}),
            "I'll turn off the kitchen light in 9 minutes.",
        ),
        (
            (
                [],
                3,
                {
                    "name": "For the movie night, ",
                    "steps": "turn off all the lights at 10:00 PM",
                    "waiting": ", once you say yes",
                },
            ),
            "For the movie night, I'll turn off all the lights at 10:00 PM, once you say yes.",
        ),
    ),
    "plan_waiting": ((([], None, {}), ", once you say yes"), (([], 3, {}), ", once you say yes")),
    "plans_none": ((([], None, {}), "Nothing is planned."), (([], 3, {}), "Nothing is planned.")),
    "plans_listed": (
        (
            ([], 1, {"plans": "I'll turn off the kitchen light in 9 minutes."}),
            "One plan: I'll turn off the kitchen light in 9 minutes.",
        ),
        (([], 2, {"plans": "I'll a. I'll b."}), "2 plans. I'll a. I'll b."),
    ),
    "plan_cancelled": (
        (
            ([], None, {"name": "the plan to turn off the kitchen light"}),
            "Okay, I cancelled the plan to turn off the kitchen light.",
        ),
        (
            ([], 3, {"name": "the plan to turn off all the lights"}),
            "Okay, I cancelled the plan to turn off all the lights.",
        ),
    ),
    "plan_already": (
        (
            ([], None, {"name": "the movie night", "status": "has already finished"}),
            "The movie night has already finished.",
        ),
        (
            ([], 3, {"name": "the plan to turn off all the lights", "status": "was already cancelled"}),
            "The plan to turn off all the lights was already cancelled.",
        ),
    ),
    "plan_none_to_cancel": (
        (([], None, {}), "There's no plan to cancel."),
        (([], 3, {}), "There's no plan to cancel."),
    ),
    "in_seconds": ((([], 1, {}), "in 1 second"), (([], 30, {}), "in 30 seconds")),
    "in_minutes": ((([], 1, {}), "in 1 minute"), (([], 10, {}), "in 10 minutes")),
    "in_hours": ((([], 1, {}), "in 1 hour"), (([], 2, {}), "in 2 hours")),
    "over_minutes": ((([], 1, {}), "over 1 minute"), (([], 15, {}), "over 15 minutes")),
    "steps_not_done": (
        (([], 1, {"total": 3}), "1 of its 3 steps was not done"),
        (([], 2, {"total": 3}), "2 of its 3 steps were not done"),
    ),
    "steps_none_done": (
        (([], 1, {}), "its only step was not done"),
        (([], 3, {}), "none of its 3 steps were done"),
    ),
    "plan_status_executing": ((([], None, {}), "is already running"), (([], 3, {}), "is already running")),
    "plan_status_completed": (
        (([], None, {}), "has already finished"),
        (([], 3, {}), "has already finished"),
    ),
    "plan_status_failed": ((([], None, {}), "has already ended"), (([], 3, {}), "has already ended")),
    "plan_status_cancelled": (
        (([], None, {}), "was already cancelled"),
        (([], 3, {}), "was already cancelled"),
    ),
    "plan_status_waiting_confirmation": (
        (([], None, {}), "is waiting for a confirmation"),
        (([], 3, {}), "is waiting for a confirmation"),
    ),
    "plan_status_planning": (
        (([], None, {}), "is still being planned"),
        (([], 3, {}), "is still being planned"),
    ),
    "plan_status_pending": (
        (([], None, {}), "is still being planned"),
        (([], 3, {}), "is still being planned"),
    ),
    "plan_not_waiting": (
        (
            ([], None, {"task": "plan-1", "status": "was already cancelled"}),
            "plan-1 was already cancelled: it is not waiting for a confirmation",
        ),
        (
            ([], 3, {"task": "plan-12", "status": "is already running"}),
            "plan-12 is already running: it is not waiting for a confirmation",
        ),
    ),
    "only_control": (
        (
            (["the lights"], None, {"verb": "open", "what": "the windows"}),
            "I can't open the windows: I can only control the lights.",
        ),
        (
            (["the lights", "the music"], None, {"verb": "set", "what": "the fan to 3"}),
            "I can't set the fan to 3: I can only control the lights and the music.",
        ),
    ),
    "interview_gave_up": (
        (
            ([], None, {}),
            "Thanks. I couldn't make out everything I asked, so I'll leave the scenes for now. "
            "Say let's set up my home to try again.",
        ),
        (
            ([], 3, {}),
            "Thanks. I couldn't make out everything I asked, so I'll leave the scenes for now. "
            "Say let's set up my home to try again.",
        ),
    ),
    "kind_lacking": (
        (([], None, {"thing": "diffuser"}), "There's no diffuser here, so I didn't change anything."),
        (([], 3, {"thing": "music player"}), "There's no music player here, so I didn't change anything."),
    ),
}


@pytest.mark.parametrize("key", sorted(CASES))
def test_each_template_reads_right_for_one_and_for_many(key: str) -> None:
    for (things, count, fields), expected in CASES[key]:
        assert say(key, things, count=count, **fields) == expected


def test_every_template_is_checked() -> None:
    assert sorted(replies().templates) == sorted(CASES)


def test_a_template_with_forms_has_both(tmp_path: Path) -> None:
    bad = tmp_path / "replies.yaml"
    bad.write_text('lonely:\n  one: "{things} is here."\n', encoding="utf-8")
    with pytest.raises(ValueError, match="lonely must be a sentence, or its 'one' and 'many' forms"):
        Replies.load(bad)
    bad.write_text("twice: a\ntwice: b\n", encoding="utf-8")
    with pytest.raises(ConfigError):
        Replies.load(bad)
