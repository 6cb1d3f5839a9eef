"""What the local agent makes of the ear's readings of audio: a comma that cut one request in two,
the ear's other readings when the best means nothing or is less specific than the next, and a known
mishearing at the opening. Each reading that is a guess at the words is read by the templates only.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from voiced.devices.model import DiffuserSet, MusicSet
from voiced.devices.registry import DeviceRegistry
from voiced.devices.vocabulary import HomeVocabulary
from voiced.language import Language, words
from voiced.mouth.agent import AgentReply
from voiced.mouth.understanding import frame as entity_frame
from voiced.mouth.understanding.asking import Question, ask, unsure
from voiced.mouth.understanding.hearing import Vocabulary
from voiced.mouth.understanding.home import Home
from voiced.mouth.understanding.readings import doubted_noun, name_words, safe_readings
from voiced.mouth.understanding.replies import plays_anything, searches
from voiced.mouth.understanding.text import clean, looped
from voiced.mouth.understanding.titles import ask_said

log = logging.getLogger(__name__)


class HeardReadings:
    """The ear's readings, for `LocalIntentAgent` (which owns the state these methods read and set)."""

    _registry: DeviceRegistry
    _home: Home
    _question: Question | None
    _doubted: AgentReply | None
    _vocabulary: Vocabulary
    _language: Language
    _framing: bool

    def _understand(self, text: str) -> AgentReply:
        raise NotImplementedError

    def _joined(self, text: str, reply: AgentReply) -> AgentReply:
        """ "Diffuser intensity, 30%": Whisper writes a pause as a comma, which cut one request in
        two halves that mean nothing alone; read without the commas, it may be one request."""
        if reply.commands or "," not in text or looped(text):
            return reply
        before = (self._home.last, self._question)
        joined = self._guessed(text.replace(",", " "))
        # a title read across the pause would be a guess sent ("play the song, glad to loom")
        if (
            joined.commands
            and joined.understood
            and not joined.missed
            and not any(map(searches, joined.commands))
        ):
            return joined
        self._home.last, self._question = before
        return reply

    def _another_reading(self, text: str, alternatives: Sequence[str], missed: AgentReply) -> AgentReply:
        # a word nobody here knows ("turn on the light wind") may not be dropped: it was the request
        names = name_words(HomeVocabulary.of(self._registry))
        unknown = frozenset(self._vocabulary.unknown(clean(text)))
        after_miss = (self._home.last, self._question)
        for reading in safe_readings(text, alternatives, names, unknown):
            reply = self._guessed(reading)
            # a title to search for, read from a guess, would be a guess sent: only whole requests
            music = any(isinstance(c, MusicSet) and (c.query or plays_anything(c)) for c in reply.commands)
            # two settings of one device from a guess: "Sandalwood diffuser, intensity to 70%" is
            # Whisper's "Set the diffuser intensity" as often as a scent asked for
            devices = [c.device for c in reply.commands]
            twice = len(set(devices)) < len(devices)
            # a scent that opens it, set beside another device: "Sandalwood, bedroom color to red."
            # is Whisper's "Set the bedroom color to red" (its fourth reading said so)
            opening = reading.split()[0].strip(",.").lower() if reading.split() else ""
            scent_opens = len(set(devices)) > 1 and any(
                isinstance(c, DiffuserSet) and c.scent == opening for c in reply.commands
            )
            if reply.understood and not reply.missed and not music and not twice and not scent_opens:
                log.info("heard %r, understood the ear's other reading %r", text, reading)
                return reply
            self._home.last, self._question = after_miss
        return missed

    def _unless_unsure(self, text: str, alternatives: Sequence[str], reply: AgentReply) -> AgentReply:
        """Ask which was meant when one of the ear's three next readings is more specific ("every lamp"
        or "bedroom lamp", "light" or "light blue"): acting on the best one could be a wrong effect."""
        question = unsure(text, alternatives, name_words(HomeVocabulary.of(self._registry)))
        if question is None:
            noun = doubted_noun(text, alternatives, lambda word: bool(self._vocabulary.unknown(word)))
            if noun is None:
                return reply
            log.info("heard %r, but the ear's next readings go on after %r: asking back", text, noun)
            self._doubted = reply
            return AgentReply(text=ask_said(text), understood=True)
        self._question = question
        return AgentReply(text=ask(question), understood=True)

    def _confused(self, text: str) -> AgentReply | None:
        """A reading that opens with a known mishearing of a request's first words, read as said:
        the reply when that reading is a question or asks for something, else None."""
        tokens = words(text)
        for misheard, said in self._language.confusions:
            if tuple(tokens[: len(misheard)]) != misheard:
                continue
            swapped = " ".join([*said, *tokens[len(misheard) :]])
            if entity_frame.is_question(words(swapped), self._language):
                log.info("heard %r, read as the question %r", text, swapped)
                return self._understand(swapped)
            before = (self._home.last, self._question)
            reply = self._guessed(swapped)
            if reply.commands and reply.understood and not reply.missed:
                log.info("heard %r, read as %r", text, swapped)
                return reply
            self._home.last, self._question = before
        return None

    def _guessed(self, text: str) -> AgentReply:
        """A reading that is a guess at the words: the templates only, never the frame's any-verb
        reading (a word misheard would be taken as the verb)."""
        self._framing = False
        try:
            return self._understand(text)
        finally:
            self._framing = True
