"""One request read (a segment of an utterance, or several joined): strict templates, then with
misheard names corrected, then the entity frame, then HA's fuzzy matcher; every command through
`DeviceRegistry.prepare`. For `LocalIntentAgent`, which owns the state these methods read and set."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from voiced.devices.model import DeviceCommand, LightSet, MusicSet
from voiced.devices.registry import DeviceRegistry
from voiced.devices.vocabulary import HomeVocabulary
from voiced.errors import DeviceError
from voiced.language import Language, find, has, words
from voiced.language.replies import say
from voiced.mouth.understanding import frame as entity_frame
from voiced.mouth.understanding import pronouns
from voiced.mouth.understanding.again import retargeted
from voiced.mouth.understanding.asking import Question, here_unknown, which_room
from voiced.mouth.understanding.corrections import Correction, corrected
from voiced.mouth.understanding.dialogue import Recent
from voiced.mouth.understanding.framed import outcome as framed_outcome
from voiced.mouth.understanding.hearing import Heard, Vocabulary, slips_only
from voiced.mouth.understanding.home import WHICH_ONE, Home, Match, Outcome
from voiced.mouth.understanding.home_words import Words
from voiced.mouth.understanding.matcher import Matcher
from voiced.mouth.understanding.scoping import POINTED, names_one, scoped
from voiced.mouth.understanding.values import number_spans, only_a_number

log = logging.getLogger(__name__)


class OneRequest:
    """Reading one request, for `LocalIntentAgent`."""

    _registry: DeviceRegistry
    _home: Home
    _room: str | None
    _matcher: Matcher
    _vocabulary: Vocabulary
    _words: Words
    _language: Language
    _handlers: dict[str, Callable[[Home, Match], Outcome | None]]
    _handler_args: tuple[int, int, Callable[[], datetime]]
    _question: Question | None
    _refused: str | None
    _recent: Recent
    _framing: bool
    _heard: bool
    _framed_now: list[entity_frame.Frame]
    _last_frame: entity_frame.Frame | None

    def _shared_verb(self, segments: list[str], at: int, outcomes: list[Outcome]) -> Outcome | None:
        """ "Kill the music and the diffuser": a segment naming only a device takes the request before it."""
        if not outcomes or at == 0 or not outcomes[-1].commands:
            return None
        # the segment followed a separator: "lights off kitchen and lounge" carries "lounge" as
        # "and lounge" would
        frame = self._frame(segments[at])
        if frame is None and self._only_names(segments[at]):
            frame = self._frame(f"{self._language.joining} {segments[at]}")
        named = self._room_alone(segments[at]) if frame is None else None
        if named is None and (frame is None or not (frame.bare or frame.follow_up) or len(frame.named) != 1):
            return None
        target = named or frame.named[0]  # type: ignore[union-attr]
        home_words = HomeVocabulary.of(self._registry)
        before = at - 1  # "the kitchen, the bedroom and the lounge": all take the request before the rooms
        while before > 0 and self._room_alone(segments[before]) is not None:
            before -= 1
        if has(words(segments[before]), self._language.excepting):
            return None  # "lights off except in the kitchen and the bedroom": both are kept, not switched
        redo = corrected(segments[before], Correction(target, None, "target"), home_words)
        if redo is None:
            return None
        log.info("the request before, for %s: %r", target, redo)
        return self._one(redo)

    def _shared_device(self, segments: list[str], at: int, outcomes: list[Outcome]) -> Outcome | None:
        """ "Set the bedroom light to 45 percent, colour yellow": a segment naming only a value is for
        the devices of the request before it."""
        if not outcomes or at == 0 or not outcomes[-1].commands:
            return None
        before = tuple(dict.fromkeys(c.device for c in outcomes[-1].commands))
        if only_a_number(words(segments[at]), self._language) is not None and not self._level_follows(
            segments[:at], outcomes[-1]
        ):
            return None
        framed = self._frame(segments[at], going_on=before)
        if framed is None or not framed.recalled or framed.refusal is not None:
            return None
        found = self._prepared(framed_outcome(framed, self._home, self._handler_args[0]))
        return None if found is None else self._remember(found)

    def _level_follows(self, before: list[str], outcome: Outcome) -> bool:
        """Whether a number said alone after the parts `before` can be the level of the request among
        them: no question since it ("…, how old are you? ten"), and it set one kind of one number,
        lights or music, and left it on and playing ("turn off the music, fifteen", "play Adele, 25",
        "start the diffuser, 30": minutes or intensity, are not)."""
        for part in reversed(before):
            if entity_frame.is_question(words(part), self._language):
                return False
            if self._frame(part) is not None:
                break
        else:
            return False
        for command in outcome.commands:
            if self._words.kinds.get(command.device) not in ("light", "music"):
                return False
            if isinstance(command, MusicSet) and (command.query or command.action not in (None, "play")):
                return False
            if isinstance(command, LightSet) and command.state == "OFF":
                return False
        return True

    def _first(self, segments: list[str]) -> Outcome | None:
        # "lounge light, uh... thirty percent": a hesitation between is no part of the request
        segments = [s for s in segments if not set(words(s)) <= self._language.fillers] or segments
        outcome = self._one(" and ".join(segments), guess=len(segments) == 1)
        named_first = len(segments) == 2 and self._only_names(segments[0])
        if outcome is None and self._question is None and named_first:
            # "kitchen. 30%.", "the diffuser, make it more strong": what is named, then what to do
            framed = self._frame(f"{segments[1]} {segments[0]}")  # the request, then its target
            if framed is not None and framed.targets and not (framed.bare or framed.follow_up):
                prepared = self._prepared(framed_outcome(framed, self._home, self._handler_args[0]))
                if prepared is not None:
                    return self._remember(prepared)
        if outcome is None and self._question is None and len(segments) > 1:
            # "lights on, living room" is one request; strict templates only, fuzzy would guess
            joined = " ".join(segments)
            found = self._strict(joined, None, self._home.last)
            if found is not None and (not found[1] or self._paused_play(segments)):
                return self._remember(found[0])
        return outcome

    def _paused_play(self, segments: list[str]) -> bool:
        """ "play, uh, Here Comes the Sun": a pause after the word to play, then only what to play
        (nothing of this home named after it, which would be a request of its own)."""
        lang = self._language
        opening = [t for t in words(segments[0]) if t not in lang.fillers]
        if not opening or not any(list(p) == opening for p in lang.play_words):
            return False
        rest = words(" ".join(segments[1:]))
        names = [*self._words.devices, *self._words.rooms, *(p for ps in lang.power.values() for p in ps)]
        return not find(rest, names)

    def _placed(self) -> set[str]:
        """The kinds of device that are all in one room (or none): "here" changes nothing of them."""
        rooms: dict[str, set[str]] = {}
        for device, kind in self._words.kinds.items():
            rooms.setdefault(kind, set()).add(self._words.in_room[device])
        return {kind for kind, where in rooms.items() if len(where) < 2}

    def _room_alone(self, segment: str) -> str | None:
        """The room `segment` names and nothing else, as said ("the bedroom": "bedroom"); else None."""
        tokens = [t for t in words(segment) if t not in self._language.determiners]
        found = find(tokens, list(self._words.rooms))
        if len(found) != 1 or len(found[0][1]) != len(tokens):
            return None
        return " ".join(found[0][1])

    def _only_names(self, segment: str) -> bool:
        """Whether `segment` only names devices or rooms of this home ("the kitchen", "diffuser", "the
        light of the bedroom")."""
        lang = self._language
        tokens = [t for t in words(segment) if t not in lang.determiners and t not in lang.naming_joiners]
        found = find(tokens, [*self._words.devices, *self._words.rooms])
        nouns = {i for at, p in find(tokens, lang.device_nouns) for i in range(at, at + len(p))}
        named = {i for at, p in found for i in range(at, at + len(p))}
        here = {i for at, p in find(tokens, lang.here) for i in range(at, at + len(p))}
        if self._room is not None and here:  # "the big light in here": here is our room
            named |= here
        return bool(named) and len(named | nouns) == len(tokens)

    def _frame(self, text: str, going_on: tuple[str, ...] = ()) -> entity_frame.Frame | None:
        """`going_on`: the devices a request of the same breath acted on, that these words go on."""
        if not self._framing:
            return None
        tokens = words(text)
        last = going_on or self._home.last
        if has(tokens, self._language.pair):
            last = self._recent.pair(last)
        found = entity_frame.read(
            tokens,
            self._words,
            self._language,
            room=self._room,
            last=last,
            heard=self._heard,
            repeat=self._recent.direction,
            going_on=bool(going_on),
        )
        was = self._last_frame
        if (
            found is not None
            and found.recalled
            and isinstance(found.percent, int)
            and found.minutes is None
            and was is not None
            and was.minutes is not None
            and was.percent is None
            and not has(tokens, self._language.percent)
        ):
            # "run the diffuser for thirty minutes" - "make that forty five": the number the last
            # request set, not a level
            found = replace(found, percent=None, minutes=found.percent)
        return found

    def _one(self, text: str, guess: bool = True) -> Outcome | None:
        """Strict, then with misheard names corrected, then the entity frame, then (`guess`: one
        segment only) fuzzy. A kind of device the home lacks is refused before any of them."""
        last = self._home.last
        framed = self._frame(text)
        if framed is None or framed.bare:  # "diffuser, make it 30": the device named first is "it"
            topic = pronouns.topic_first(words(text), self._words.devices)
            text, framed = (text, framed) if topic is None else (topic, self._frame(topic))
        resolved, stand_in = pronouns.resolve(text, last)
        rooms = sorted({r for r in self._words.in_room.values() if r})
        if self._room is None and (
            here := here_unknown(text, rooms, self._words.title_phrases, self._language, self._placed())
        ):
            self._question = here  # "the lights in here": which room is here, asked
            return None
        if (room := which_room(resolved, lambda: HomeVocabulary.of(self._registry).light_rooms)) is not None:
            self._question = room  # "the room lamp": "bedroom" or "living room" misheard, as often as not
            return None
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
            if framed is not None and framed.recalled and set(first[0].targets) > set(framed.targets):
                # "and brightness to 25" after the bedroom light: that light, not every light
                found = self._prepared(framed_outcome(framed, self._home, self._handler_args[0]))
                if found is not None:
                    self._framed_now.append(framed)
                    return self._remember(found)
            return self._remember(self._agreed(framed, first[0]))
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
        if heard.changes and not self._heard and slips_only(heard.changes):  # typed "peppermnt", "diffusor"
            spelled = self._frame(heard.text)
            framed = spelled if spelled is not None and (spelled.targets or spelled.refusal) else framed
        if heard.ambiguous is not None:
            self._question = Question(resolved, heard.ambiguous[0], heard.ambiguous[1])
            return None
        if framed is not None and framed.refusal is not None:
            self._refused = framed.refusal  # no guess may land it on another device
            return None
        if framed is not None and not framed.follow_up and guess:
            found = self._prepared(framed_outcome(framed, self._home, self._handler_args[0]))
            if found is not None:
                log.info("entity frame: %r -> %s", text, found.commands)
                self._framed_now.append(framed)
                return self._remember(found)
        # a guess drops words, and dropping "but" or "except" turns the request around
        guessable = guess and not has(words(text), self._language.excepting)
        match = self._matcher.fuzzy(heard.text, self._vocabulary.unknown(heard.text)) if guessable else None
        if match is not None:
            outcome = self._carry(pronouns.widen(match, stand_in, last), heard.text)
            if outcome is not None:
                log.info("fuzzy: %r -> %s %s", text, match.intent, match.slots)
                return self._remember(outcome)
        return None

    def _level_at(self, text: str) -> bool:
        """ "Bedroom light at 10": a number right after a device's name, with no word for on or off
        nor any for a time of the clock, is its level ("turn the light off at 10" is a time)."""
        lang, tokens = self._language, words(text)
        names = [*self._words.devices, *self._words.room_names(lang.room_synonyms)]
        if find(tokens, [p for ps in lang.power.values() for p in ps]):
            return False
        at = [s + len(p) for s, p in find(tokens, names)]
        numbers = {start for start, _end, _value in number_spans(tokens, lang)}
        clock = set(lang.guards["clock_marks"])
        return any(
            tokens[i : i + 1] == ["at"] and i + 1 in numbers and not clock & set(tokens[i + 2 : i + 4])
            for i in at
        )

    def _agreed(self, framed: entity_frame.Frame | None, outcome: Outcome) -> Outcome:
        """A template's outcome; the frame of the same words is kept for "the bedroom too" when it
        asks the same of the same devices ("make the light purple" names no device to swap)."""
        if framed is not None and framed.targets and not framed.follow_up:
            same = self._prepared(framed_outcome(framed, self._home, self._handler_args[0]))
            if same is not None and same.commands == outcome.commands:
                self._framed_now.append(framed)
        if framed is not None and framed.felt and set(outcome.targets) <= set(framed.targets):
            # "that's too loud, lower it to thirty": the feeling is the reason, the number the change
            return replace(outcome, felt=True)
        return outcome

    def _again(self, follow: entity_frame.Frame) -> Outcome | None:
        """ "The bedroom as well" after a request the frame read: that frame, for the bedroom's
        devices of the kinds it acted on."""
        if self._last_frame is None:
            return None
        rooms = self._words.room_names(self._language.room_synonyms)
        frame = retargeted(self._last_frame, follow, self._words, rooms)
        found = self._prepared(framed_outcome(frame, self._home, self._handler_args[0])) if frame else None
        if frame is None or found is None:
            return None
        self._framed_now.append(frame)
        return self._remember(found)

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
        match = scoped(self._home, match, text)
        if handler is None:
            return None
        if match.intent in POINTED and pronouns.dangling(text, self._home.last) and not names_one(match):
            return Outcome(WHICH_ONE, acted=False)
        return self._prepared(handler(self._home, match))

    def _prepared(self, outcome: Outcome | None) -> Outcome | None:
        """Every command through `DeviceRegistry.prepare` (clamped, checked); None if none is left."""
        if outcome is None or not outcome.commands:
            return outcome
        prepared: list[DeviceCommand] = []
        unable: list[str] = []
        for command in outcome.commands:
            try:
                prepared.append(self._registry.prepare(command)[1])
            except DeviceError as exc:
                log.info("dropping command %s: %s", command, exc)
                unable += [str(exc)] if " cannot " in str(exc) else []
        if not prepared and unable:  # "turn the sofa light red" on a light with no colour: heard, and why not
            return Outcome(say("device_cannot", reason=unable[0]), acted=False)
        if not prepared:
            return None
        outcome.commands = prepared
        return outcome

    def _remember(self, outcome: Outcome) -> Outcome:
        if outcome.targets:
            self._home.last = outcome.targets
        return outcome
