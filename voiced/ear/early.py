"""The transcript started at a pause, while the hangover decides whether the utterance has ended:
kept for the turn if it ends there, dropped if speech goes on, and judged as soon as it is in (a
whole request may end the turn sooner than the hangover: end_of_turn.py)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from voiced.ear.end_of_turn import EndOfTurnSettings, Pace, Pause, silence_needed
from voiced.ear.utterance import Heard

_LOGGER = logging.getLogger(__name__)


class EarlyTranscript:
    def __init__(
        self, judge: Callable[[Heard], Pause] | None, settings: EndOfTurnSettings, pace: Pace | None = None
    ) -> None:
        """`judge`: what the words heard at a pause are; None: every turn waits the full hangover.
        `pace`: what this speaker's pauses taught (a speaker cut before waits the full hangover)."""
        self._judge = judge
        self._settings = settings
        self._pace = pace
        self._pauses: list[Pause] = []  # what was heard at this utterance's pauses
        self._early: asyncio.Task[Heard] | None = None
        self._judged: asyncio.Task[Heard] | None = None  # the early transcript already judged

    def new_utterance(self) -> None:
        self._pauses = []

    def start(self, transcript: asyncio.Task[Heard]) -> None:
        """The transcript of the audio up to this pause (the one before is dropped already)."""
        self._early = transcript

    def drop(self) -> None:
        if self._early is not None:
            self._early.cancel()  # the thread finishes on its own; its result is ignored
            self._early = None

    def take(self) -> asyncio.Task[Heard] | None:
        """The transcript running, handed over as the turn's (None if there is none)."""
        early, self._early = self._early, None
        return early

    def unjudged(self, *, over_reply: bool) -> asyncio.Task[Heard] | None:
        """The early transcript the end of the turn waits on, while it runs (not over our reply,
        where the barge-in checks decide: frame by frame, as they always did)."""
        early = self._early
        waits = self._judge is not None and early is not self._judged and not over_reply
        return early if waits else None

    def silence_needed(self, *, over_reply: bool) -> int | None:
        """The early transcript is in: the silence that ends the turn after its words, judged once;
        None while it runs, or when it failed, or over our reply (the barge-in checks decide there,
        at their own pace)."""
        early = self._early
        if self._judge is None or early is None or not early.done() or early is self._judged:
            return None
        self._judged = early
        if early.cancelled() or early.exception() is not None or over_reply:
            return None
        self._pauses.append(self._judge(early.result()))
        careful = self._pace is not None and self._pace.careful
        needed = silence_needed(self._pauses, self._settings, careful=careful)
        _LOGGER.debug(
            "end of turn: %r at a pause, %s: %d ms of silence", early.result().text, self._pauses[-1], needed
        )
        return needed
