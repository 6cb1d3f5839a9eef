"""Plans in plain words and a scene's commands, through the real daemon: typed turns, the simulator,
a real broker, real HTTP (`/api/say`, `/api/turns`, the task API)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.conftest import Broker
from tests.home import SimulatedHome
from tests.plans_home import TypedDaemon, plan_config

SET = "zigbee2mqtt/{}/set"


def _published(home: SimulatedHome, settle_s: float = 0.5) -> list[tuple[str, dict[str, object]]]:
    time.sleep(settle_s)
    return home.published()


@pytest.mark.e2e
def test_now_is_done_at_once_later_is_read_back_as_one_sentence_and_said_plainly(
    tmp_path: Path, broker: Broker
) -> None:
    config = plan_config(tmp_path, broker.port)
    with SimulatedHome(config, broker.port) as home:
        daemon = TypedDaemon(config, tmp_path)
        try:
            # Three commands in one breath: done at once (no plan, no "shall I?"), this turn's commands.
            said = daemon.http(
                "POST",
                "/api/say",
                {"text": "turn on the kitchen light, turn on the bedroom light and play some jazz"},
            ).json()
            assert said["reply"] == "Turning on the kitchen and bedroom lights and playing jazz."
            assert sorted(c["device"] for c in said["commands"]) == [
                "bedroom_light",
                "kitchen_light",
                "music",
            ]
            assert daemon.http("GET", "/api/tasks").json()["tasks"] == []
            assert len(_published(home)) == 3
            # A yes-or-no question is answered yes or no.
            assert daemon.reply_to("are the lights off?") == (
                "No, the bedroom light and the kitchen light are on. The living room light is off."
            )
            # Now and later in one sentence: the now at once, the later read back.
            said = daemon.http(
                "POST", "/api/say", {"text": "turn off the kitchen light now and turn it on in 2 seconds"}
            ).json()
            assert said["reply"] == (
                "Turning off the kitchen light. "
                "I'll turn on the kitchen light in 2 seconds. Shall I go ahead?"
            )
            assert [(c["device"], c["payload"]) for c in said["commands"]] == [
                ("kitchen_light", '{"state":"OFF"}')
            ]
            assert _published(home) == [(SET.format("kitchen_light"), {"state": "OFF"})]
            assert daemon.reply_to("yes") == "Okay, going ahead."
            daemon.wait_for("plan_completed", lambda e: e["task_id"] == "plan-1", timeout=30)
            assert _published(home) == [(SET.format("kitchen_light"), {"state": "ON"})]
            # A group for later: one short sentence; what's planned, said plainly; cancelled twice.
            assert daemon.reply_to("in ten minutes turn off the lights") == (
                "I'll turn off all the lights in 10 minutes. Shall I go ahead?"
            )
            assert daemon.reply_to("yes") == "Okay, going ahead."
            assert (
                daemon.reply_to("what's planned?") == "One plan: I'll turn off all the lights in 10 minutes."
            )
            assert (
                daemon.reply_to("cancel the plan") == "Okay, I cancelled the plan to turn off all the lights."
            )
            assert (
                daemon.reply_to("cancel the plan")
                == "The plan to turn off all the lights was already cancelled."
            )
            again = daemon.http("POST", "/api/tasks/plan-2/cancel")
            assert (again.status_code, again.json()) == (409, {"error": "plan-2 was already cancelled"})
            assert daemon.reply_to("what's planned?") == "Nothing is planned."
            assert _published(home) == []
        finally:
            daemon.stop()


@pytest.mark.e2e
def test_a_scenes_commands_are_the_turns_even_those_sent_after_it_finished(
    tmp_path: Path, broker: Broker
) -> None:
    """ "Movie time" sets the living room light twice: off, then on at 10 % once the light has
    confirmed the first (6 s later here), so that command goes out after the turn has finished
    speaking. It is in `/api/say`'s answer and in the turn's record all the same."""
    config = plan_config(tmp_path, broker.port, vibe={"confirm_timeout_s": 15.0})
    with SimulatedHome(config, broker.port, "--delay-ms", "6000"):
        daemon = TypedDaemon(config, tmp_path)
        try:
            said = daemon.http("POST", "/api/say", {"text": "movie time"})
            assert said.status_code == 200, said.text
            answer = said.json()
            assert answer["reply"] == "Movie time. Lights down."
            assert answer["scenes"] == [{"task_id": "vibe-1", "status": "complete"}]
            sent = sorted((c["device"], c["payload"]) for c in answer["commands"])
            assert sent == [
                ("bedroom_light", '{"state":"OFF"}'),
                ("kitchen_light", '{"state":"OFF"}'),
                ("living_room_light", '{"state":"OFF"}'),
                ("living_room_light", '{"state":"ON","brightness":25,"color_temp":454}'),
                ("music", '{"action":"stop"}'),
            ], answer
            turn = answer["turn"]
            events = daemon.events()
            finished = next(e["t"] for e in events if e["kind"] == "turn_finished" and e["turn"] == turn)
            late = [
                e for e in events if e["kind"] == "command_sent" and e["turn"] == turn and e["t"] > finished
            ]
            assert late, "the test meant a command sent after the turn had finished"
            recorded = next(t for t in daemon.http("GET", "/api/turns").json()["turns"] if t["turn"] == turn)
            assert sorted((c["device"], c["payload"]) for c in recorded["commands"]) == sent
        finally:
            daemon.stop()
