"""What is said around one request: sentences reporting someone's words, requests run together
with nothing between, "here" in a request to redo, a device taken out of the last request. For
`LocalIntentAgent`, on top of `OneRequest`."""

from __future__ import annotations

import logging
import re
from typing import Any

from voiced.devices.vocabulary import HomeVocabulary
from voiced.language import find, has, words
from voiced.mouth.agent import AgentReply
from voiced.mouth.one_request import OneRequest
from voiced.mouth.understanding import pronouns, values
from voiced.mouth.understanding.corrections import Correction, corrected
from voiced.mouth.understanding.frame import Frame
from voiced.mouth.understanding.framed import put_back
from voiced.mouth.understanding.home import Outcome
from voiced.mouth.understanding.home_words import asked_alone
from voiced.mouth.understanding.replies import names_vocabulary, value_or_part
from voiced.mouth.understanding.reported import beside_reported

log = logging.getLogger(__name__)


class AroundRequests(OneRequest):
    """Reading what surrounds a request, for `LocalIntentAgent`."""

    _said: str | None  # the last request, as a correction or "the bedroom too" redoes it

    def _unreported(self, text: str) -> str | None:
        """`text` without the sentences that report someone's words and ask nothing; None (reported
        speech, not acted on) when a reported sentence may hold the request."""
        rooms = set(self._words.rooms.values())
        kept = beside_reported(text, lambda s: names_vocabulary(s, self._registry, rooms) or value_or_part(s))
        if kept is None:
            log.info("reported speech, not acted on: %r", text)
        return kept

    def _run_on(self, segment: str) -> list[Outcome] | None:
        """ "bedroom light off kitchen light on", "kitchen brighter lounge dimmer": requests said
        one after the other with nothing between, cut where a value ends and a name begins; each
        part must be a request of its own (else None)."""
        lang = self._language
        tokens = words(segment)
        ends = {p[-1] for ps in lang.power.values() for p in ps} | {p[-1] for p in (*lang.up, *lang.down)}
        ends |= {p[-1] for p in lang.percent}
        starts = {at for at, _ in find(tokens, [*self._words.devices, *self._words.rooms])}
        cuts = [i for i in sorted(starts) if i > 0 and (tokens[i - 1] in ends or tokens[i - 1].isdigit())]
        if not cuts:
            return None
        parts = [" ".join(tokens[a:b]) for a, b in zip([0, *cuts], [*cuts, len(tokens)], strict=True)]
        found = [self._first([part]) for part in parts]
        if any(o is None or not o.commands for o in found):
            return None
        log.info("requests said one after the other: %s", parts)
        return [o for o in found if o is not None]

    def _named_here(self, said: str) -> str:
        """ "Make it warm in here": "it" as the device it acted on, "here" dropped (the device is named
        now, so "the kitchen as well" is the kitchen alone). Other words are kept as said: "it" in
        them stands for whatever a redo names. "Lights on in here" with no "it" names our room, so a
        correction ("no, the living room") has a room to change."""
        lang = self._language
        resolved, stand_in = pronouns.resolve(said, self._home.last)
        if not has(words(said), lang.here):
            return said
        if stand_in is None:
            return self._here_placed(said)
        tokens = words(resolved)
        here = {i for at, p in find(tokens, lang.here) for i in range(at, at + len(p))}
        return " ".join(t for i, t in enumerate(tokens) if i not in here)

    def _talk_after(self, segment: str) -> Outcome | None:
        """ "pause it my mom is calling me": a request, then talk with a subject of its own that names
        nothing here and holds no value, with nothing between; the request alone is done."""
        tokens = words(segment)
        rooms = set(self._words.rooms.values())
        for at in range(2, len(tokens) - 1):
            if tokens[at] not in self._language.talk_subjects:
                continue
            talk = " ".join(tokens[at:])
            if names_vocabulary(talk, self._registry, rooms) or value_or_part(talk):
                return None
            found = self._first([" ".join(tokens[:at])])
            if found is not None and found.commands:
                log.info("a request, then talk: %r", segment)
                return found
        return None

    def _asked_alone_among(self, missed: list[str]) -> Outcome | None:
        """A part of typed words that is a genre or a title alone, with courtesy, where nothing else
        was understood ("Bohemian Rhapsody, please, I fancy a sing-song"): played; it leaves `missed`.
        """
        lang = self._language
        if self._heard:
            return None
        for at, part in enumerate(missed):
            asked = asked_alone(part, self._words, self._language)
            if asked is not None and any(
                find(words(m), [*lang.correcting, *lang.negations]) for m in missed[at:]
            ):
                return None  # "Jazz? no thanks": declined after it ("no, jazz please" corrects before it)
            found = None if asked is None else self._first([asked])
            if found is not None and found.commands:
                missed.remove(part)
                return found
        return None

    def _understand(self, text: str) -> AgentReply:
        """One utterance read whole: `LocalIntentAgent`'s."""
        raise NotImplementedError

    def _also_changed(self, said: str, text: str, follow: Frame) -> AgentReply | None:
        """ "The bedroom as well, but in a warm white", "the bedroom too, but at 40": the last request
        for the target named, with the one new value in it (or after it); None when that is not what
        was said or it does not read cleanly."""
        tokens = words(text)
        name_ends = {at + len(p) for at, p in find(tokens, [*self._words.devices, *self._words.rooms])}
        also = values.also_said(tokens, self._language) or any(  # "too" right after the name, then more
            at in name_ends for at, _ in find(tokens, self._language.also)
        )
        if follow.follow_up or follow.recalled or len(follow.named) != 1 or not also:
            return None
        if (
            follow.power
            or follow.direction
            or follow.scent
            or follow.genre
            or follow.percent == values.TWO_VALUES
        ):
            return None
        said_values = [("percent", f"{follow.percent} percent")] if follow.percent is not None else []
        if follow.colour:
            said_values.append(("colour", follow.colour))
        if follow.white:  # "warm" said as "warm white", the phrase that has the word itself
            plain = [p for p in self._language.whites.get(follow.white, ()) if follow.white in p]
            said_values += [("colour", " ".join(plain[0]))] if plain else []
        vocabulary = HomeVocabulary.of(self._registry)
        redo = corrected(said, Correction(follow.named[0], None, "target"), vocabulary)
        if redo is None or len(said_values) != 1:
            return None
        sort, value = said_values[0]
        changed = corrected(redo, Correction(value, None, sort), vocabulary, lang=self._language)
        before, question, framed = self._home.last, self._question, len(self._framed_now)
        asked = changed or f"{redo}, {value}"
        reply = self._understand(asked)
        if not reply.commands or reply.missed or not reply.understood:
            self._home.last, self._question = before, question
            del self._framed_now[framed:]
            return None
        self._said = asked
        log.info("the last request again, for %s, with a new value: %r", follow.named[0], text)
        return reply

    def _here_placed(self, said: str) -> str:
        """ "Here" said as our room ("the one in here": "the one in the kitchen"); as said with no room."""
        lang = self._language
        tokens, out = words(said), []
        spans = {at: len(p) for at, p in find(tokens, lang.here)}
        if self._room is None or not spans:
            return said
        where = [lang.here_in, lang.article, *words(self._room)]
        at = 0
        while at < len(tokens):
            if at in spans:
                out += where
                at += spans[at]
            else:
                out.append(tokens[at])
                at += 1
        return " ".join(out)

    def _left_out(self, excluding: tuple[str, ...], was: dict[str, dict[str, Any]]) -> AgentReply | None:
        """The devices the last request changed that the user now takes out, put back as they were."""
        last = self._home.last
        out = [n for n in last if n in excluding]
        if not out or len(out) == len(last):
            return None  # "not the bedroom" after the bedroom alone: a correction without the right one
        put = put_back(out, was=was, kind_of=self._home.kind_of)
        if put is not None:
            self._home.last = tuple(n for n in last if n not in out)
            log.info("taken out of the last request: %s", out)
        return put

    def _self_timed(self, text: str) -> str | None:
        """ "Make it stop after 30 min" of a device that switches itself off after a time (the
        diffuser's timer), named or acted on last: how long it runs ("for 30 min"); else None."""
        lang = self._language
        said = re.search(rf"\b(?:{lang.off_after[0]})?{lang.off_after[1]}", text, re.IGNORECASE)
        if said is None:
            return None
        named = [self._words.devices[p] for _, p in find(words(text), list(self._words.devices))]
        targets = named or list(self._home.last)
        if not targets or any(self._words.kinds[d] not in lang.self_timed_kinds for d in targets):
            return None
        return f"{text[: said.start()]}{lang.off_after_said}{text[said.end() :]}"
