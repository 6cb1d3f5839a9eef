"""LocalIntentAgent: understands smart-home requests offline.

HA's English templates and ours (hassil): strict, then with misheard names corrected, then HA's
fuzzy matcher. Rooms and "here" come from the registry and our room; "it" from the devices last acted
on; "no, the bedroom one" corrects the last request. Reported speech does nothing; a part not
understood that names a device or room stops the whole utterance (never a wrong effect); two close
readings of a misheard name are asked back. Every command passes DeviceRegistry.prepare().
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Awaitable, Callable, Collection, Sequence
from datetime import datetime
from typing import Any

from voiced.devices.registry import DeviceRegistry
from voiced.devices.vocabulary import HomeVocabulary
from voiced.language import Language, english, find, phrase, words
from voiced.language.replies import say, the
from voiced.mouth.agent import AgentReply
from voiced.mouth.around_requests import AroundRequests
from voiced.mouth.heard_readings import HeardReadings
from voiced.mouth.understanding import pronouns
from voiced.mouth.understanding.asking import Question, answer, ask
from voiced.mouth.understanding.corrections import (
    Correction,
    correct,
    corrected,
    said_right,
    taken_back,
    unclear,
)
from voiced.mouth.understanding.dialogue import Recent, assumed
from voiced.mouth.understanding.frame import Frame, is_question
from voiced.mouth.understanding.framed import put_back, restore_all
from voiced.mouth.understanding.grammar import human
from voiced.mouth.understanding.handlers import handlers
from voiced.mouth.understanding.home import Home, Outcome, pct_to_brightness
from voiced.mouth.understanding.home_words import Words, asked_alone, plain_rooms
from voiced.mouth.understanding.lacking import said_as_doing
from voiced.mouth.understanding.learning import Learned, learn
from voiced.mouth.understanding.moods import mood
from voiced.mouth.understanding.remarks import Remarks
from voiced.mouth.understanding.replies import (
    CONDITIONAL,
    LATER,
    NEGATED,
    NOT_UNDERSTOOD,
    REPORTED,
    compose,
    searches,
)
from voiced.mouth.understanding.reported import is_conditional, is_for_later, is_negated, is_reported
from voiced.mouth.understanding.spoken_of import answered, talked_of
from voiced.mouth.understanding.text import looped, split_utterance
from voiced.mouth.understanding.titles import ask as ask_title
from voiced.mouth.understanding.titles import doubted_title, doubted_value, yes_or_no
from voiced.mouth.understanding.undo import undone
from voiced.mouth.understanding.whole import MAX_SEGMENTS, is_whole

log = logging.getLogger(__name__)

__all__ = ["CONDITIONAL", "LATER", "NEGATED", "REPORTED", "LocalIntentAgent"]


class LocalIntentAgent(AroundRequests, HeardReadings):
    """Agent that needs no network: templates in, prepared device commands out."""

    def __init__(
        self,
        registry: DeviceRegistry,
        states: Callable[[str], dict[str, Any] | None],
        brightness_step_pct: int = 25,
        *,
        room: str | None = None,
        scent_limit: int = 100,
        now: Callable[[], datetime] = datetime.now,
        fuzzy: bool = True,
        moods: dict[str, tuple[str, ...]] | None = None,
        language: Language | None = None,
    ) -> None:
        """`moods`: each scene preset's mood words, heard in a request that names nothing here (none
        by default: with an LLM beside it, a mood is the LLM's to compose)."""
        self._registry = registry
        self._home = Home(registry, states, room)
        self._room, self._fuzzy = room, fuzzy
        self._matcher, self._vocabulary, self._rooms = self.learn()
        self._handler_args = (max(1, pct_to_brightness(brightness_step_pct)), scent_limit, now)
        self._handlers = handlers(*self._handler_args)
        self._question: Question | None = None
        self._doubted: AgentReply | None = None  # a search read back, waiting for a yes
        self._said: str | None = None  # the last request understood: what a correction redoes
        self._words = Words.of(registry)
        self._language = language or english()
        self._moods = {n: tuple(map(phrase, w)) for n, w in (moods or {}).items()}
        self._remarks = self._remarks_of(registry)
        self._was: dict[str, dict[str, Any]] = {}  # the last reply's devices as they were before it
        self._refused: str | None = None  # this utterance named a kind of device the home lacks
        self._framing = True  # off while reading a guess (a comma dropped, the ear's other readings)
        self._heard = False  # this turn's words were read from audio
        self._recent = Recent()
        self._framed_now: list[Frame] = []  # the frames this turn's requests were read by
        lang = self._language
        self._small = lang.fillers | {p[0] for p in lang.correcting if len(p) == 1}
        self._missed_now: list[str] = []  # the parts of this turn's words no request was read in
        self._last_frame: Frame | None = None  # the last turn's one frame: what "the kitchen too" redoes

    def learn(self) -> Learned:
        """The grammar and words of the home as the registry has it now (blocking: ~1 s; run it off
        the loop, then `adopt` the result, when discovered devices come or go)."""
        return learn(self._registry, self._room, self._fuzzy)

    def adopt(self, learned: Learned) -> None:
        self._matcher, self._vocabulary, self._rooms = learned
        self._words = Words.of(self._registry)
        self._remarks = self._remarks_of(self._registry)
        self._question = None  # it offered readings of the old grammar

    def _remarks_of(self, registry: DeviceRegistry) -> Remarks:
        moods = (p for phrases in self._moods.values() for p in phrases)
        return Remarks.of(HomeVocabulary.of(registry), self._language, moods)

    def forget(self) -> None:
        """A new conversation: no "it", no question waiting for its answer, no muted volume kept."""
        self._home.last = ()
        self._question = None
        self._doubted = None
        self._said = None
        self._was = {}
        self._recent = Recent()
        self._last_frame = None
        self._handlers = handlers(*self._handler_args)

    @property
    def waiting(self) -> bool:
        """A question or a read-back waits for its answer."""
        return self._question is not None or self._doubted is not None

    @property
    def question(self) -> Question | None:
        """The question asked back between readings ("the bedroom or the living room?"), waiting."""
        return self._question

    def complete(self, text: str) -> bool:
        """Whether `text` is a whole request as it stands (each part a template match with no free
        text that could go on, nothing reported, negated or for later), so the ear may end the turn
        at a short pause. Pure: no context is read or kept."""
        return not self.waiting and is_whole(text, self._matcher)

    async def respond(self, text: str) -> AgentReply:
        return self.understand(text)

    async def understand_fresh(
        self,
        text: str,
        refresh: Callable[[list[str]], Awaitable[list[str]]] | None,
        doubtful: Collection[str] = (),
        alternatives: Sequence[str] = (),
        *,
        heard: bool = False,
    ) -> AgentReply:
        """`understand`, but a request that needed a state nobody reported ("dimmer" with the
        light's brightness unknown) first asks the devices (`refresh`) and is understood again,
        instead of starting from a guess; a device that does not answer in time is taken as
        `assumed` says, and the reply says what it was set to."""
        before = (self._home.last, self._question, self._doubted, self._said)
        reply = self.understand(text, doubtful, alternatives, heard=heard)
        unknown = sorted(self._home.unknown)
        if not unknown or refresh is None or not reply.commands:
            return reply
        log.info("asking %s for their state before %r", ", ".join(unknown), text)
        silent = set(await refresh(unknown))
        self._home.last, self._question, self._doubted, self._said = before
        reply = self.understand(text, doubtful, alternatives, heard=heard)
        said = assumed(reply.commands, silent)
        return dataclasses.replace(reply, text=f"{reply.text} {said}".strip()) if said else reply

    def understand(
        self,
        text: str,
        doubtful: Collection[str] = (),
        alternatives: Sequence[str] = (),
        *,
        heard: bool = False,
    ) -> AgentReply:
        """`heard`: the words are the ear's reading of audio, so a word nobody here knows may be a
        mishearing: the frame then acts only on what it understands word for word."""
        was = self._was
        self._heard, self._framed_now, self._missed_now = heard, [], []
        try:
            reply = self._turn(text, doubtful, alternatives, was)
        finally:
            self._heard = False
        if reply.commands:
            self._was = {c.device: dict(self._home.state(c.device)) for c in reply.commands}
            self._recent = self._recent.after(reply.commands, self._was)
            self._last_frame = self._framed_now[0] if len(self._framed_now) == 1 else None
        return reply

    def _turn(
        self,
        text: str,
        doubtful: Collection[str],
        alternatives: Sequence[str],
        was: dict[str, dict[str, Any]],
    ) -> AgentReply:
        """`doubtful`: words the ear was unsure of; a title to search for with one is asked back.
        `alternatives`: the ear's other readings of the audio, tried in order when `text` means nothing
        here, each only if it cannot turn a mishearing into a wrong effect (`readings.safe_readings`)."""
        self._home.unknown, self._home.switched_on = set(), set()
        if (name := self._remarks.addressed(text)) is not None:
            log.info("said to %r, not to us: %r", name, text)
            return AgentReply(text=say("addressed", name=name), understood=True)
        if not self._heard:  # heard, a clause of no known word may be a name misheard: not talk
            text = self._remarks.without(text)  # "okay, I'm back, resume the music"
        synonyms = self._language.room_synonyms
        if self._room is None:  # "same in my room": with no room of ours, the bedroom
            synonyms = {
                **synonyms,
                **{r: (*synonyms.get(r, ()), *o) for r, o in self._language.own_rooms.items()},
            }
        text = plain_rooms(text, synonyms, self._words)
        if not (self._heard or self._question or self._doubted):  # not an answer to a question
            text = asked_alone(text, self._words, self._language) or text
        doubted, self._doubted = self._doubted, None
        if doubted is not None and (answer := yes_or_no(text)) is not None:
            if answer:
                return doubted
            declined = say("declined_play" if any(map(searches, doubted.commands)) else "declined")
            return AgentReply(text=declined, understood=True)
        if (back := undone(text, self._words, self._language, tuple(was))) is not None:
            self._said, self._question = None, None
            put = put_back(list(back), was=was, kind_of=self._home.kind_of)
            unknown = say("undo_unknown", [the(human(n)) for n in back])
            return put or AgentReply(text=unknown, understood=True)
        said, self._said = self._said, None
        home_words = HomeVocabulary.of(self._registry)
        fix = None
        if said and self._question is None:
            fix = said_right(self._here_placed(text), home_words, self._language)  # "the one in here"
        if (
            said
            and fix is not None
            and (fix.sort == "target" or corrected(said, fix, home_words, lang=self._language))
        ):
            undo = functools.partial(restore_all, was=was, kind_of=self._home.kind_of)
            reply, self._said = correct(
                said, fix, home_words, self._understand, self._home, undo, self._language
            )
            return reply
        # "actually, make it blue instead" when the last request had no colour: a request of its own
        unplaced = fix if said else None
        if said and self._question is None:
            follow = self._frame(text)
            if follow is not None and follow.excluding:  # "not the bedroom": taken out of the last request
                left_out = self._left_out(follow.excluding, was)
                if left_out is not None:
                    return left_out
            if follow is not None and follow.follow_up and follow.named:  # "the kitchen as well"
                redo = corrected(said, Correction(follow.named[0], None, "target"), home_words)
                if redo is not None:
                    log.info("the last request again, for %s: %r", follow.named[0], redo)
                    reply = self._understand(redo)
                    self._said = redo if reply.understood and not reply.missed else None
                    return reply
                if (again := self._again(follow)) is not None:  # "off the light in here" - "kitchen also"
                    self._said = said
                    return self._reply(text, [again], [])
            if follow is not None and (changed := self._also_changed(said, text, follow)) is not None:
                return changed
        text = taken_back(text, home_words, self._language) or text  # "…, no, the bedroom light"
        before = self._home.last
        swapped = self._confused(text) if self._heard else None
        reply = swapped or self._joined(text, self._understand(text))
        # a part missed beside commands named nothing here: talk ("…, im making pasta"), no request
        if reply.understood and (reply.commands or (not reply.missed and self._home.last)):
            # what a correction or "the kitchen too" redoes: "make it yellow" as "make the kitchen
            # light yellow"; "make it warm in here" as "make the bedroom light warm"
            joined = " and ".join(s for s in split_utterance(text) if s not in self._missed_now)
            self._said = pronouns.resolve(joined, before)[0] if before else self._named_here(joined)
        if unplaced is not None and not reply.commands:
            return AgentReply(text=unclear(unplaced), understood=True)
        if reply.missed and alternatives:
            reply = self._another_reading(text, alternatives, reply)
        elif reply.commands and alternatives:
            reply = self._unless_unsure(text, alternatives, reply)
        asked_about = is_question(words(text), self._language)  # "who's this by?": no new "it"
        if not reply.commands and (reply.missed or not reply.understood) and not asked_about:
            self._home.last = ()  # "change it to green" after a miss: "it" is what we missed, not older
        value = doubted_value(reply.commands, doubtful, alternatives)
        if value is not None:
            log.info("not sure the ear heard %r right: asking back", value)
            self._doubted = reply
            return AgentReply(text=say("said_asked", text=value), understood=True)
        title = doubted_title(reply.commands, doubtful, alternatives)
        if title is None:
            return reply
        log.info("not sure the ear heard the title %r right: asking back", title)
        self._doubted = reply
        return AgentReply(text=ask_title(title), understood=True)

    def _understand(self, text: str) -> AgentReply:
        lang, self._missed_now = self._language, []
        question, self._question = self._question, None
        chosen = None if question is None else answer(question, text, self._matcher, self._vocabulary)
        if chosen is not None:
            text = chosen
        if is_reported(text):
            unreported = self._unreported(text)
            if unreported is None:
                return AgentReply(text=REPORTED, understood=True)
            text = unreported
        if looped(text):
            log.info("the ear looped, not acted on: %r", text)
            return AgentReply(text=NOT_UNDERSTOOD, understood=False, missed=True)
        if is_negated(text):
            return AgentReply(text=NEGATED, understood=True)
        text = self._self_timed(text) or text  # "make it stop after 30 min": the diffuser's timer
        if is_for_later(text) and not self._level_at(text):
            return AgentReply(text=LATER, understood=True)
        if is_conditional(text):
            return AgentReply(text=CONDITIONAL, understood=True)
        segments = split_utterance(text)
        before = self._home.last
        outcomes: list[Outcome] = []
        missed: list[str] = []
        start = 0
        while start < len(segments):
            longest = len(segments) if len(segments) <= MAX_SEGMENTS else start + 1
            for end in range(longest, start, -1):
                outcome = self._first(segments[start:end])
                if outcome is not None:
                    outcomes.append(outcome)
                    start = end
                    break
                if self._question is not None:
                    return AgentReply(text=ask(self._question), understood=True)
            else:
                shared = self._shared_verb(segments, start, outcomes) or self._shared_device(
                    segments, start, outcomes
                )
                if shared is not None:
                    outcomes.append(shared)
                elif run_on := self._run_on(segments[start]):
                    outcomes.extend(run_on)
                elif (talked := self._talk_after(segments[start])) is not None:
                    outcomes.append(talked)
                elif not set(words(segments[start])) <= (self._small if start == 0 else lang.fillers):
                    # "right", "ok", and "ugh no" opening: no request
                    missed.append(segments[start])
                    self._home.last = talked_of(segments[start], self._words) or self._home.last
                start += 1
        if not outcomes and (alone := self._asked_alone_among(missed)) is not None:
            outcomes = [alone]  # "Bohemian Rhapsody, please, I fancy a sing-song"
        if not outcomes:
            self._home.last = before
        if not outcomes and (asked := answered(text, self._words, self._home, self._language)):
            outcomes, missed = [self._remember(asked)], []  # "is the bedroom light still on?"
        self._missed_now = missed
        return self._reply(text, outcomes, missed)

    # -- the reply ------------------------------------------------------------------------------

    def _reply(self, text: str, outcomes: list[Outcome], missed: list[str]) -> AgentReply:
        refused, self._refused = self._refused, None
        asked = {c.device for o in outcomes if not o.felt for c in o.commands}
        # "turn it down a little, it's quite strong": the feeling is the reason, the request the change
        outcomes = [o for o in outcomes if not (o.felt and {c.device for c in o.commands} <= asked)]
        reply = compose(text, outcomes, missed, self._matcher, self._home, self._rooms)
        parts = [words(part) for part in split_utterance(text)]
        scene = mood(parts, self._moods, self._words, self._language) if self._framing else None
        if refused is not None and reply.text == NOT_UNDERSTOOD:
            if scene is not None and said_as_doing(words(text), self._language):  # "I must study"
                log.info("the mood of %r, what we lack said as what is done: scene %s", text, scene)
                return AgentReply(text="", understood=True, scene=scene)
            return AgentReply(text=refused, understood=True)
        if reply.text == NOT_UNDERSTOOD and scene is not None:
            log.info("the mood of %r: scene %s", text, scene)
            return AgentReply(text="", understood=True, scene=scene)
        if (
            scene is not None
            and reply.scene is not None
            and not reply.commands
            and self._nameless(reply.scene)
        ):
            # "we've got guests over for dinner, set the mood for a nice meal": the talk names the mood
            log.info("the mood of %r, said around %r: scene %s", text, reply.scene, scene)
            return AgentReply(text="", understood=True, scene=scene)
        return reply

    def _nameless(self, scene: str) -> bool:
        """Whether a scene asked for in the user's words names no preset or mood word of ours."""
        return scene not in self._moods and not find(
            words(scene), [p for ps in self._moods.values() for p in ps]
        )
