"""LocalIntentAgent: understands smart-home requests offline.

Home Assistant's English templates and ours (hassil), strict first, then with misheard
names corrected, then HA's fuzzy matcher. Rooms and "here" come from the registry and the
daemon's own room; "it" and "them" from the devices last acted on. A command inside
reported speech does nothing; a part not understood that names a device or a room stops
the whole utterance (never a wrong effect); two close readings of a misheard name are asked
back. Every command is run through DeviceRegistry.prepare() before it is returned.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hassil import Intents

from voiced.devices.model import DeviceCommand, MusicSet
from voiced.devices.registry import DeviceRegistry
from voiced.devices.vocabulary import HomeVocabulary
from voiced.errors import DeviceError
from voiced.mouth.agent import AgentReply
from voiced.mouth.understanding import pronouns
from voiced.mouth.understanding.grammar import build_grammar, load_unsupported, rooms
from voiced.mouth.understanding.guesses import SCOPE
from voiced.mouth.understanding.handlers import handlers
from voiced.mouth.understanding.hearing import Heard, Phrase, Vocabulary, english_words, home_phrases
from voiced.mouth.understanding.home import Home, Match, Outcome, Slot, pct_to_brightness
from voiced.mouth.understanding.matcher import Matcher
from voiced.mouth.understanding.prefilter import one_per_block
from voiced.mouth.understanding.readings import name_words, safe_readings, unsure_part
from voiced.mouth.understanding.replies import NOT_UNDERSTOOD, compose, plays_anything
from voiced.mouth.understanding.reported import is_conditional, is_for_later, is_negated, is_reported
from voiced.mouth.understanding.text import clean, looped, split_utterance
from voiced.mouth.understanding.titles import ask, doubted_title, yes_or_no

log = logging.getLogger(__name__)

REPORTED = "That sounded like something someone else said, so I didn't change anything."
NEGATED = "Okay, I'll leave it as it is."
LATER = "Sorry, I can't do things at a later time yet, so I didn't change anything."
CONDITIONAL = "Sorry, I can't wait for something to happen before I act, so I didn't change anything."
LIGHT_WORDS = frozenset({"light", "lights", "lamp", "lamps"})
EVERYWHERE = frozenset({"all", "every", "everything", "everywhere", "house", "home", "each"})
SHORT_ANSWER_WORDS = 4  # "the bathroom one" answers a question; a longer request is a new one
# A request ending in one of these is still being said ("turn on the light and ...").
GOES_ON = frozenset({"and", "then", "also", "but", "or", "to", "the", "a", "in", "at", "with", "for", "of"})
MAX_SEGMENTS = 8  # longer utterances are matched segment by segment only
# hassil builds its number-word tables and opens the fuzzy models on first use: do it at start.
WARM_UP = (
    "turn on the light",
    "set the light brightness to max",
    "lights on living room please",
    "set the bedroom light to fifty percent",
    "set the volume to one hundred fifty",
    "turn on the diffuser for thirty minutes",
    "set the kitchen light to three thousand kelvin",
    "turn up the volume by ten",
    "set the diffuser intensity to one hundred twenty percent",
)


# Requests about lights and switches that "it" may point at; volume and pause mean the music anyway.
POINTED = frozenset(
    ("LightColor", "LightStep", "HassLightSet", "LightBrightness", "LightState", "HassTurnOn", "HassTurnOff")
)


def _names_one(match: Match) -> bool:
    area = match.slots.get("area")
    return "name" in match.slots or "domain" in match.slots or (area is not None and bool(area.text))


@dataclass(frozen=True)
class _Question:
    """An ask-back: the segment, the words heard, and the readings offered."""

    text: str
    heard: str
    options: tuple[Phrase, ...]


class LocalIntentAgent:
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
    ) -> None:
        self._registry = registry
        self._home = Home(registry, states, room)
        self._room, self._fuzzy = room, fuzzy
        self._matcher, self._vocabulary, self._rooms = self.learn()
        self._handler_args = (max(1, pct_to_brightness(brightness_step_pct)), scent_limit, now)
        self._handlers = handlers(*self._handler_args)
        self._question: _Question | None = None
        self._doubted: AgentReply | None = None  # a search read back, waiting for a yes

    def learn(self) -> tuple[Matcher, Vocabulary, set[str]]:
        """The grammar and words of the home as the registry has it now (blocking: ~1 s; run it off
        the loop, then `adopt` the result, when discovered devices come or go)."""
        room = self._room
        grammar = one_per_block(build_grammar(self._registry, room))
        matcher = Matcher(Intents.from_dict(grammar), load_unsupported(), room, fuzzy=self._fuzzy)
        for text in WARM_UP:  # hassil compiles on first use, and the fuzzy models open their databases
            matcher.strict(text)
            matcher.fuzzy(text, [])
        vocabulary = Vocabulary(
            home_phrases(HomeVocabulary.of(self._registry), rooms(self._registry, room)),
            matcher.vocabulary,
            english_words(),
        )
        return matcher, vocabulary, set(rooms(self._registry, room))

    def adopt(self, learned: tuple[Matcher, Vocabulary, set[str]]) -> None:
        self._matcher, self._vocabulary, self._rooms = learned
        self._question = None  # it offered readings of the old grammar

    def forget(self) -> None:
        """A new conversation: no "it", no question waiting for its answer, no muted volume kept."""
        self._home.last = ()
        self._question = None
        self._doubted = None
        self._handlers = handlers(*self._handler_args)

    def complete(self, text: str) -> bool:
        """Whether `text` is a whole request as it stands (each part a template match with no free
        text that could go on, nothing reported, negated or for later), so the ear may end the turn
        at a short pause. Pure: no context is read or kept."""
        if (
            self._question is not None
            or self._doubted is not None
            or is_reported(text)
            or is_negated(text)
            or is_for_later(text)
            or is_conditional(text)
        ):
            return False
        words = text.lower().replace(",", " ").rstrip(" .!?").split()
        if not words or words[-1] in GOES_ON:
            return False
        segments = split_utterance(text)
        if not segments or len(segments) > MAX_SEGMENTS:
            return False
        for segment in segments:
            matches = self._matcher.strict(segment)
            if not matches or matches[0].wild:
                return False
        return True

    async def respond(self, text: str) -> AgentReply:
        return self.understand(text)

    async def understand_fresh(
        self,
        text: str,
        refresh: Callable[[list[str]], Awaitable[object]] | None,
        doubtful: Collection[str] = (),
        alternatives: Sequence[str] = (),
    ) -> AgentReply:
        """`understand`, but a request that needed a state nobody reported ("dimmer" with the
        light's brightness unknown) first asks the devices (`refresh`) and is understood again,
        instead of starting from a guess."""
        before = (self._home.last, self._question, self._doubted)
        reply = self.understand(text, doubtful, alternatives)
        unknown = sorted(self._home.unknown)
        if not unknown or refresh is None or not reply.commands:
            return reply
        log.info("asking %s for their state before %r", ", ".join(unknown), text)
        await refresh(unknown)
        self._home.last, self._question, self._doubted = before
        return self.understand(text, doubtful, alternatives)

    def understand(
        self, text: str, doubtful: Collection[str] = (), alternatives: Sequence[str] = ()
    ) -> AgentReply:
        """`doubtful`: words the ear was unsure of; a title to search for with one is asked back.
        `alternatives`: the ear's other readings of the audio, tried in order when `text` means nothing
        here, each only if it cannot turn a mishearing into a wrong effect (`readings.safe_readings`)."""
        self._home.unknown, self._home.switched_on = set(), set()
        doubted, self._doubted = self._doubted, None
        if doubted is not None:
            answer = yes_or_no(text)
            if answer is not None:
                return doubted if answer else AgentReply(text="Okay, I won't play it.", understood=True)
        reply = self._understand(text)
        if reply.missed and alternatives:
            reply = self._another_reading(text, alternatives, reply)
        elif reply.commands and alternatives:
            reply = self._unless_unsure(text, alternatives, reply)
        if not reply.commands and (reply.missed or not reply.understood):
            self._home.last = ()  # "change it to green" after a miss: "it" is what we missed, not older
        title = doubted_title(reply.commands, doubtful, alternatives)
        if title is None:
            return reply
        log.info("not sure the ear heard the title %r right: asking back", title)
        self._doubted = reply
        return AgentReply(text=ask(title), understood=True)

    def _another_reading(self, text: str, alternatives: Sequence[str], missed: AgentReply) -> AgentReply:
        # a word nobody here knows ("turn on the light wind") may not be dropped: it was the request
        names = name_words(HomeVocabulary.of(self._registry))
        unknown = frozenset(self._vocabulary.unknown(clean(text)))
        after_miss = (self._home.last, self._question)
        for reading in safe_readings(text, alternatives, names, unknown):
            reply = self._understand(reading)
            # a title to search for, read from a guess, would be a guess sent: only whole requests
            searches = any(isinstance(c, MusicSet) and (c.query or plays_anything(c)) for c in reply.commands)
            if reply.understood and not reply.missed and not searches:
                log.info("heard %r, understood the ear's other reading %r", text, reading)
                return reply
            self._home.last, self._question = after_miss
        return missed

    def _unless_unsure(self, text: str, alternatives: Sequence[str], reply: AgentReply) -> AgentReply:
        """Ask which was meant when one of the ear's three next readings is more specific ("every lamp"
        or "bedroom lamp", "light" or "light blue"): acting on the best one could be a wrong effect."""
        phrases = unsure_part(text, alternatives[:3], name_words(HomeVocabulary.of(self._registry)))
        said = ", ".join(split_utterance(text))
        if phrases is None or phrases[0] not in said:
            return reply
        log.info("heard %r, but the ear also heard %r for %r: asking", text, phrases[1], phrases[0])
        options = tuple(Phrase(p, p, p) for p in phrases)
        self._question = _Question(said, phrases[0], options)
        return AgentReply(text=self._ask(self._question), understood=True)

    def _understand(self, text: str) -> AgentReply:
        question, self._question = self._question, None
        if question is not None and (answer := self._answer(question, text)) is not None:
            text = answer
        if is_reported(text):
            log.info("reported speech, not acted on: %r", text)
            return AgentReply(text=REPORTED, understood=True)
        if looped(text):
            log.info("the ear looped, not acted on: %r", text)
            return AgentReply(text=NOT_UNDERSTOOD, understood=False, missed=True)
        if is_negated(text):
            return AgentReply(text=NEGATED, understood=True)
        if is_for_later(text):
            return AgentReply(text=LATER, understood=True)
        if is_conditional(text):
            return AgentReply(text=CONDITIONAL, understood=True)
        segments = split_utterance(text)
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
                    return AgentReply(text=self._ask(self._question), understood=True)
            else:
                missed.append(segments[start])
                start += 1
        return self._reply(text, outcomes, missed)

    def _first(self, segments: list[str]) -> Outcome | None:
        outcome = self._one(" and ".join(segments), guess=len(segments) == 1)
        if outcome is None and self._question is None and len(segments) > 1:
            # "lights on, living room" is one request; strict templates only, fuzzy would guess
            joined = " ".join(segments)
            found = self._strict(joined, None, self._home.last)
            if found is not None and not found[1]:
                return self._remember(found[0])
        return outcome

    def _one(self, text: str, guess: bool = True) -> Outcome | None:
        """Strict, then with misheard names corrected, then (`guess`: one segment only) fuzzy."""
        last = self._home.last
        resolved, stand_in = pronouns.resolve(text, last)
        first: tuple[Outcome, bool] | None = None
        for candidate, who in ((resolved, stand_in), (text, None)) if stand_in else ((text, None),):
            first = self._strict(candidate, who, last)
            if first is not None and first[1] and who is not None:
                first = None  # "play that way" is a title to look up, not "play the kitchen light way"
            if first is not None:
                break
        if first is not None and first[1] and not guess:
            first = None  # free text spanning several segments swallows requests ("play jazz and ...")
        if first is not None and not first[1]:
            return self._remember(first[0])
        heard = self._vocabulary.hear(resolved)
        if heard.widens:
            log.info("not taking %s in %r: a guess would reach every light", heard.changes, text)
            heard = Heard(resolved)
        if heard.changes:
            corrected = self._strict(heard.text, stand_in, last)
            if corrected is not None and (first is None or not corrected[1]) and (guess or not corrected[1]):
                log.info("heard %r as %s", text, heard.changes)
                return self._remember(corrected[0])
        if first is not None:  # free text (a title to search for) that no correction improves
            return self._remember(first[0])
        if heard.ambiguous is not None:
            self._question = _Question(resolved, heard.ambiguous[0], heard.ambiguous[1])
            return None
        match = self._matcher.fuzzy(heard.text, self._vocabulary.unknown(heard.text)) if guess else None
        if match is not None:
            outcome = self._carry(pronouns.widen(match, stand_in, last), heard.text)
            if outcome is not None:
                log.info("fuzzy: %r -> %s %s", text, match.intent, match.slots)
                return self._remember(outcome)
        return None

    def _strict(self, text: str, stand_in: str | None, last: tuple[str, ...]) -> tuple[Outcome, bool] | None:
        """The first strict reading a handler carries out, and whether it took free text."""
        for match in self._matcher.strict(text):
            outcome = self._carry(pronouns.widen(match, stand_in, last), text)
            if outcome is not None:
                log.debug("%r -> %s %s", text, match.intent, match.slots)
                return outcome, match.wild
        return None

    def _carry(self, match: Match, text: str) -> Outcome | None:
        handler = self._handlers.get(match.intent)
        match = self._scoped(match, text)
        if handler is None:
            return None
        if match.intent in POINTED and pronouns.dangling(text, self._home.last) and not _names_one(match):
            return Outcome("Sorry, which one do you mean? Say its name, please.", acted=False)
        outcome = handler(self._home, match)
        if outcome is None or not outcome.commands:
            return outcome
        prepared: list[DeviceCommand] = []
        for command in outcome.commands:
            try:
                prepared.append(self._registry.prepare(command)[1])
            except DeviceError as exc:
                log.warning("dropping command %s: %s", command, exc)
        if not prepared:
            return None
        outcome.commands = prepared
        return outcome

    def _scoped(self, match: Match, text: str) -> Match:
        """ "Dim the lights" with a room of our own means this room's, unless "all" or "house" was said."""
        room = self._home.room
        area = match.slots.get("area")
        said = set(text.split())
        if area is not None and not area.text and EVERYWHERE & said and not {"here", "room"} & said:
            # "set all the lights to max": the room the matcher took from context is not what was said;
            # with no name, the kind is the target ("every light red": every light, not this room's)
            slots = {k: v for k, v in match.slots.items() if k != "area"}
            if "name" not in slots and "domain" not in slots and LIGHT_WORDS & said:
                slots["domain"] = Slot("light", "")
            return Match(match.intent, slots, match.fuzzy, match.wild)
        if room is None or "domain" not in match.slots or "name" in match.slots or "area" in match.slots:
            return match
        if SCOPE & set(text.split()) or not self._home.in_room(room, ("light", "music", "diffuser")):
            return match
        return Match(match.intent, {**match.slots, "area": Slot(room, "")}, match.fuzzy, match.wild)

    def _remember(self, outcome: Outcome) -> Outcome:
        if outcome.targets:
            self._home.last = outcome.targets
        return outcome

    # -- asking back ----------------------------------------------------------------------------

    @staticmethod
    def _ask(question: _Question) -> str:
        first, second = sorted(o.spoken for o in question.options)
        return f"Sorry, did you mean {first} or {second}?"

    def _answer(self, question: _Question, reply: str) -> str | None:
        """The asked-about request with the chosen reading, or None if the reply is a new request."""
        text = " ".join(split_utterance(reply))
        if len(text.split()) > SHORT_ANSWER_WORDS and self._matcher.strict(text):
            return None  # a request of its own ("turn off the bedroom light"), not an answer
        said = set(self._vocabulary.hear(text).text.split())
        chosen = []
        for option in question.options:
            others = {w for o in question.options if o is not option for w in o.text.split()}
            if said & (set(option.text.split()) - others):
                chosen.append(option)
        if len(chosen) != 1:
            return None
        return question.text.replace(question.heard, chosen[0].text, 1)

    # -- the reply ------------------------------------------------------------------------------

    def _reply(self, text: str, outcomes: list[Outcome], missed: list[str]) -> AgentReply:
        return compose(text, outcomes, missed, self._matcher, self._home, self._rooms)
