"""When a turn may end: the silence a pause needs before it closes the utterance, from what was
heard at each pause so far. Pure and clock-free: feature sequence in, milliseconds out.

A whole, confident request (the understanding would act on it as it stands) closes after the
short `whole_ms`; anything else waits the full hangover. So does a request that ends on a word
promising more ("… and", "set it to …", "… forty" before "percent"), and one whose speaker has
already gone on past a whole request once in this utterance: they pause between parts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from voiced.language import english

# Whisper writes "forty percent" as "40%": the sign is a word here, not punctuation to drop.
_TOKEN = re.compile(r"\d+|%|[a-z]+(?:'[a-z]+)?")


@dataclass(frozen=True)
class Pause:
    """What was heard at one pause of the utterance in progress."""

    whole: bool  # the understanding would act on the words as they stand
    confident: bool  # the ASR was sure of them
    words: tuple[str, ...]  # lower case, in order (see `words_of`)


@dataclass(frozen=True)
class EndOfTurnSettings:
    whole_ms: int  # silence that closes a whole, confident request
    hangover_ms: int  # silence that closes any utterance
    goes_on: frozenset[str] = frozenset()  # a last word that promises more; digits always do


def settings_for(whole_ms: int, hangover_ms: int) -> EndOfTurnSettings:
    return EndOfTurnSettings(whole_ms, hangover_ms, english().goes_on)


def words_of(text: str) -> tuple[str, ...]:
    return tuple(_TOKEN.findall(text.lower().replace("\u2019", "'")))


def promises_more(words: Sequence[str], goes_on: frozenset[str]) -> bool:
    """The last word is one after which more is coming: a joining or small word, or a number
    still without its unit ("40" before "percent"; "40%" has it)."""
    return not words or words[-1] in goes_on or words[-1].isdigit()


def silence_needed(pauses: Sequence[Pause], settings: EndOfTurnSettings, *, careful: bool = False) -> int:
    """Milliseconds of silence after the last of `pauses` that end the turn. `careful`: the speaker
    was cut before (`Pace`): every pause waits the full hangover."""
    if not pauses or not settings.whole_ms or careful:
        return settings.hangover_ms
    now = pauses[-1]
    if not (now.whole and now.confident) or promises_more(now.words, settings.goes_on):
        return settings.hangover_ms
    if any(p.whole and p.confident for p in pauses[:-1]):
        return settings.hangover_ms  # went on past a whole request once: may again
    return min(settings.whole_ms, settings.hangover_ms)


@dataclass
class Pace:
    """Whether this speaker pauses inside requests, learned across turns (pure, clock-free).

    A turn ended early on a whole request, and speech came again before the full hangover would
    have ended it: the turn was cut while the speaker only paused. The next `careful_turns` turns
    (the one that went on first) wait the full hangover; 0: nothing is learned. Fed each frame,
    each early end, and each start and end of an utterance."""

    careful_turns: int
    hangover_frames: int
    onset_frames: int  # speech is heard as started this many frames after it did
    left: int = 0
    _window: int | None = None  # frames left in which a start means the last turn was cut

    @property
    def careful(self) -> bool:
        return self.left > 0

    def frame(self) -> None:
        if self._window is not None:
            self._window = self._window - 1 if self._window > 0 else None

    def ended(self, *, early_after_frames: int | None) -> None:
        """An utterance ended; `early_after_frames`: after this much silence, on its words."""
        self.left = max(0, self.left - 1)
        self._window = None
        if early_after_frames is not None and self.careful_turns:
            self._window = max(0, self.hangover_frames - early_after_frames) + self.onset_frames

    def started(self) -> bool:
        """An utterance started: True when it goes on from a turn just ended early (it was cut)."""
        cut = self._window is not None
        self._window = None
        if cut:
            self.left = self.careful_turns
        return cut
