"""Who has the floor while we speak: barge-in as one pure, clock-free policy.

"Pause, then decide": speech over our reply that is confidently not our echo pauses the reply
at once (silent, its place kept); the words decide after, whenever Whisper has them:
a stop word cancels the reply; a request cancels it and becomes the next turn; our own echo or
a backchannel ("uh-huh") resumes it where it paused. Only acoustics (a least-squares fit of
our echo, milliseconds of numpy) stand between the voice and the pause, so a busy CPU delays
the verdict, never the pause.

Events in (`feed`), actions out; nothing here reads a clock, awaits, or touches a device.
The lane that feeds it and carries the actions out is `voiced/floor_lane.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from voiced.ear.bargein import Verdict

Stage = Literal["early", "paused", "final"]
KEPT = 50  # utterances followed at most: one whose end never came is forgotten


# Events in.
@dataclass(frozen=True)
class ReplyStarted:
    reply: int  # a reply (or a narration) became audible


@dataclass(frozen=True)
class ReplyEnded:
    reply: int  # finished, or cancelled


@dataclass(frozen=True)
class VoiceOver:
    utterance: int  # the ear's turn number for the speech
    reply: int  # the reply audible when it began


@dataclass(frozen=True)
class Acoustics:
    """How much of the voice our echo does not explain (dB); None: unknowable (no echo path yet).
    `goes_on`: a look at the voice's last frames as it goes on (a "stop" whose onset is an "s"
    half hidden by our echo is plain a frame or two later): it may pause, never drop."""

    utterance: int
    unexplained_db: float | None
    goes_on: bool = False


@dataclass(frozen=True)
class Words:
    """What the words say. `stage`: "early" (the voice goes on), "paused" (a short burst has
    paused: it may be all there is), "final" (the utterance ended). `verdict` None: no words
    could be had (recognition failed)."""

    utterance: int
    verdict: Verdict | None
    heard: str
    stage: Stage


FloorEvent = ReplyStarted | ReplyEnded | VoiceOver | Acoustics | Words


# Actions out.
@dataclass(frozen=True)
class Pause:
    reply: int
    utterance: int
    unexplained_db: float


@dataclass(frozen=True)
class Resume:
    reply: int
    utterance: int


@dataclass(frozen=True)
class Cancel:
    reply: int
    utterance: int
    heard: str
    verdict: Verdict  # STOP or SPEECH


@dataclass(frozen=True)
class Drop:
    """The utterance is our echo or a backchannel: forget the rest of it; it is no turn."""

    utterance: int
    heard: str
    verdict: Verdict  # ECHO or BACKCHANNEL


@dataclass(frozen=True)
class Take:
    """The utterance is a request: it becomes the next turn."""

    utterance: int


FloorAction = Pause | Resume | Cancel | Drop | Take


@dataclass
class _Over:
    reply: int
    decided: Verdict | None = None  # STOP or SPEECH once heard; it stands
    settled: bool = False  # dropped or finished: later news about it changes nothing


@dataclass
class _Reply:
    paused: bool = False
    holds: set[int] = field(default_factory=set)  # utterances that keep it paused
    fooled: bool = False  # paused once for what was our own echo: the bar is higher from now on


@dataclass(frozen=True)
class FloorSettings:
    echo_db: float = -10.0  # explained to this level: our echo (as `audio.echo_unexplained_db`)
    drop_extra_db: float = 8.0  # drop on acoustics alone only this far below echo_db
    # More unexplained than this: confidently not our echo, pause. A voice over our reply
    # measures -3 to 0 dB; our echo at the start of a reply, before the path is fitted, -9.
    pause_db: float = -6.0
    # The bar once our echo has paused this reply: its replay after the resume must not pause it
    # again (and again), the reply never getting further.
    repause_db: float = -3.0


class FloorPolicy:
    def __init__(self, settings: FloorSettings | None = None) -> None:
        self._s = settings or FloorSettings()
        self._over: dict[int, _Over] = {}
        self._replies: dict[int, _Reply] = {}

    def paused(self, reply: int) -> bool:
        state = self._replies.get(reply)
        return state is not None and state.paused

    def feed(self, event: FloorEvent) -> list[FloorAction]:
        if isinstance(event, ReplyStarted):
            self._replies[event.reply] = _Reply()
            return []
        if isinstance(event, ReplyEnded):
            self._replies.pop(event.reply, None)
            return []
        if isinstance(event, VoiceOver):
            self._over[event.utterance] = _Over(event.reply)
            for old in [u for u in self._over if u < event.utterance - KEPT]:
                del self._over[old]
            return []
        over = self._over.get(event.utterance)
        if over is None or over.settled:
            return []
        if isinstance(event, Acoustics):
            return self._acoustics(event, over)
        return self._words(event, over)

    def _acoustics(self, event: Acoustics, over: _Over) -> list[FloorAction]:
        db = event.unexplained_db
        if db is None or over.decided is not None:
            return []  # unknowable: the words decide; decided: already acted on
        if db <= self._s.echo_db - self._s.drop_extra_db:
            return [] if event.goes_on else self._drop(event.utterance, over, "", Verdict.ECHO)
        reply = self._replies.get(over.reply)
        if reply is None:
            return []  # it has ended meanwhile
        if db <= (self._s.repause_db if reply.fooled else self._s.pause_db):
            return []  # not sure either way: the words decide
        reply.holds.add(event.utterance)
        if reply.paused:
            return []
        reply.paused = True
        return [Pause(over.reply, event.utterance, db)]

    def _words(self, event: Words, over: _Over) -> list[FloorAction]:
        final = event.stage == "final"
        if over.decided is not None:  # a stop or a request heard in it stands
            if final:
                over.settled = True
                del self._over[event.utterance]
                return [Take(event.utterance)] if over.decided is Verdict.SPEECH else []
            return []
        verdict = event.verdict
        if verdict in (Verdict.STOP, Verdict.SPEECH):
            assert verdict is not None
            over.decided = verdict
            actions: list[FloorAction] = []
            if over.reply in self._replies:  # still audible (paused or not): only that reply stops
                del self._replies[over.reply]
                actions.append(Cancel(over.reply, event.utterance, event.heard, verdict))
            if final:
                over.settled = True
                del self._over[event.utterance]
                if verdict is Verdict.SPEECH:
                    actions.append(Take(event.utterance))
            return actions
        if verdict is Verdict.ECHO or verdict is None or final:
            return self._drop(event.utterance, over, event.heard, verdict or Verdict.BACKCHANNEL)
        # A burst that paused, or an early guess, and no more than a backchannel so far: the end of
        # the utterance decides. Giving the floor back at the pause made the reply stutter: the
        # glance is in before "uh-" has become "-huh", which pauses it again 0.3 s later.
        return []

    def _release(self, utterance: int, over: _Over) -> list[FloorAction]:
        reply = self._replies.get(over.reply)
        if reply is None or utterance not in reply.holds:
            return []
        reply.holds.discard(utterance)
        if reply.holds or not reply.paused:
            return []
        reply.paused = False
        return [Resume(over.reply, utterance)]

    def _drop(self, utterance: int, over: _Over, heard: str, verdict: Verdict) -> list[FloorAction]:
        over.settled = True
        del self._over[utterance]
        reply = self._replies.get(over.reply)
        if verdict is Verdict.ECHO and reply is not None and utterance in reply.holds:
            reply.fooled = True
        return [*self._release(utterance, over), Drop(utterance, heard, verdict)]
