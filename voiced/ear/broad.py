"""A request for every device of a kind, checked on the sound before it acts on all of them.

tiny.en hears "Turn every lamp red" for "turn bedroom lamp red" in hurried voices, sure enough of it
to act; asked again, Whisper base hears "bedroom" or "every" by a few milliseconds of silence more
or less. So the sound is asked instead: the same request said of each room ("Turn bedroom lamp
red.") is weighed against the broad one by forced decoding (whisper_score.py). When one room fits
nearly as well, that reading goes first among the ear's others and the intents ask which was meant
("bedroom lamp or every lamp?"); a request truly for every lamp fits 11 or more better than any room
on the spoken bench, a misheard one at most 4.4.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from voiced.ear.transcriber import Hearing

_LOGGER = logging.getLogger(__name__)
Fit = Callable[[np.ndarray, Sequence[str]], list[float]]  # log-probability of each sentence
# "every lamp", "all the lights", "each light": the words a room may have been misheard as
_BROAD = re.compile(r"\b(?:every|all|each)\b(?P<the> the)?", re.IGNORECASE)


@dataclass(frozen=True)
class BroadRules:
    below_sure: float = 0.8  # a broad reading the first model was less sure of is checked
    room_within: float = 6.0  # a room's reading fitting this close (log-probability) casts doubt


def is_broad(text: str) -> bool:
    return _BROAD.search(text) is not None


def room_readings(text: str, rooms: Sequence[str]) -> dict[str, str]:
    """`text` said of each room instead of every device, as it would be spoken ("Turn off the
    kitchen lights" for "Turn off all the lights"), and as the intents compare it with `text` to
    ask which was meant ("Turn off kitchen lights": "all the" was misheard for "kitchen")."""
    found = _BROAD.search(text)
    if found is None:
        return {}
    before, after = text[: found.start()], text[found.end() :]
    the = "the " if found.group("the") else ""
    return {f"{before}{the}{room}{after}": f"{before}{room}{after}" for room in rooms}


def doubted(broad: float, fits: dict[str, float], rules: BroadRules = BroadRules()) -> str | None:
    """The room's reading that fits nearly as well as the broad one (pure); None if none does."""
    if not fits:
        return None
    best = max(fits, key=fits.__getitem__)
    return best if fits[best] >= broad - rules.room_within else None


class BroadCheck:
    def __init__(
        self,
        fit: Fit,
        rooms: Callable[[], Sequence[str]],
        acts: Callable[[Hearing], bool],
        rules: BroadRules = BroadRules(),
    ) -> None:
        """`fit`: a Whisper model's fit of sentences to audio; `rooms`: the home's, as it is now;
        `acts`: whether the intents would act on a reading without asking."""
        self._fit = fit
        self._rooms = rooms
        self._acts = acts
        self._rules = rules

    def checked(self, samples: np.ndarray, heard: Hearing) -> Hearing:
        """`heard`, or it with a room's reading first among its others when that fits the sound
        nearly as well (blocking). Whatever fails in here leaves `heard`."""
        try:
            if heard.confidence >= self._rules.below_sure or not is_broad(heard.text):
                return heard
            readings = room_readings(heard.text, self._rooms())
            if not readings or not self._acts(heard):
                return heard
            audio = samples.astype(np.float32) / 32768.0
            fits = self._fit(audio, [heard.text, *readings])
            room = doubted(fits[0], dict(zip(readings, fits[1:], strict=True)), self._rules)
        except Exception:
            _LOGGER.exception("checking a broad request failed: keeping %r", heard.text)
            return heard
        asked = None if room is None else readings[room]
        _LOGGER.info("a broad request %r (fit %.1f): %s", heard.text, fits[0], room or "no room fits as well")
        if asked is None:
            return heard
        return Hearing(heard.text, heard.confidence, heard.doubtful, (asked, *heard.alternatives))
