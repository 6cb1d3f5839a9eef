"""Which Whisper job goes next: the most urgent first, and within one urgency, room by room.

Pure and clock-free: the waiting jobs and when each room was last served in, an index out. Every
room (each satellite, the daemon's own microphone) shares one Whisper, one job at a time
(asr_home.py). Within a priority a room that just had a job goes behind another room's waiting
job: a short command from one room waits for the job running and, at most, one job of each other
room as urgent as it, never behind a whole queue of another room's guesses and long utterances.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum


class Priority(IntEnum):
    BARGE_IN = 0  # speech over our reply: the reply plays on until this is decided
    UTTERANCE = 1  # a finished utterance: the user waits for the answer
    SPECULATIVE = 2  # the speaker paused: a guess that may be thrown away


@dataclass(frozen=True)
class Waiting:
    """A job waiting its turn: how urgent, who asked, and its place in the order of arrival."""

    priority: Priority
    room: str
    order: int


NEVER = -1  # a room not served yet goes before every room that was


def next_up(waiting: Sequence[Waiting], served: Mapping[str, int]) -> int:
    """The index in `waiting` (not empty) of the job to run next: the most urgent; among those, the
    room served longest ago (`served`: each room's last job's place in the order of starts, NEVER
    when it has had none); within a room, or between rooms never served, the first to arrive."""
    return min(
        range(len(waiting)),
        key=lambda i: (waiting[i].priority, served.get(waiting[i].room, NEVER), waiting[i].order),
    )
