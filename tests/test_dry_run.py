"""The dry run the second ear asks: would the local intents act on these words, with no question?"""

from __future__ import annotations

from voiced.devices.registry import DeviceRegistry
from voiced.mouth.dry_run import DryRun
from voiced.mouth.intents import LocalIntentAgent
from voiced.mouth.rehearsal import rehearsal_agent


def dry_run(registry: DeviceRegistry, made: list[LocalIntentAgent]) -> DryRun:
    def make() -> LocalIntentAgent:
        made.append(rehearsal_agent(registry, 25, room="living_room", scent_limit=80))
        return made[-1]

    return DryRun(make)


def test_requests_understood_and_honest_refusals_are_acted_on(registry: DeviceRegistry) -> None:
    dry = dry_run(registry, [])
    assert dry.acts("Turn on the kitchen light.")
    assert dry.acts("Set the diffuser intensity to 70%,")
    assert dry.acts("Turn on the oven.")  # "I can't turn on the oven": an answer, not a mishearing


def test_misses_questions_and_read_backs_are_not(registry: DeviceRegistry) -> None:
    dry = dry_run(registry, [])
    assert not dry.acts("Sandalwood, fuser, intensity to 70%.")  # a part missed names a thing here
    assert not dry.acts("Set the room to 50%.")  # which room?
    assert not dry.acts("Put on the album Abbey Road.", doubtful={"abbey"})  # read back first
    assert dry.acts("Put on the album Abbey Road.")
    assert not dry.acts("Put on the album Abbey Road.", searching=False)  # a title is free text
    assert dry.acts("Play some jazz.", searching=False)  # a genre is the home's word
    assert not dry.acts("Start the irrelevant diffuser, please.")  # refused, but named like a device here
    # declined for its form: a misheard "and" reads as a time ("at 70"), so it is heard again
    assert not dry.acts("Turn off the kitchen light at 10.")
    assert not dry.acts("If it gets dark, turn on the light.")


def test_each_question_is_asked_afresh_and_a_new_home_gets_a_new_copy(registry: DeviceRegistry) -> None:
    made: list[LocalIntentAgent] = []
    dry = dry_run(registry, made)
    assert not dry.acts("Set the room to 50%.")
    assert not dry.acts("The bedroom.")  # the answer to a question the dry run never asked aloud
    assert len(made) == 1
    dry.home_changed()
    assert dry.acts("Turn on the kitchen light.")
    assert len(made) == 2
