"""Asking back: two close readings of a misheard name are offered, and the next turn may choose one."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from voiced.language import Language, english, find, words
from voiced.language.replies import say
from voiced.mouth.understanding.hearing import Phrase, Vocabulary
from voiced.mouth.understanding.matcher import Matcher
from voiced.mouth.understanding.readings import unsure_part
from voiced.mouth.understanding.text import split_utterance

log = logging.getLogger(__name__)

SHORT_ANSWER_WORDS = 4  # "the bathroom one" answers a question; a longer request is a new one
# ... and so is a short one that starts as a request does ("the bedroom one" also matches a template)
REQUEST_VERBS = english().word_sets["request_verbs"]
_BARE_ROOM = re.compile(english().bare_room, re.IGNORECASE)  # "the room" for "bedroom" or "living room"


@dataclass(frozen=True)
class Question:
    """An ask-back: the segment, the words heard, and the readings offered."""

    text: str
    heard: str
    options: tuple[Phrase, ...]
    opening: str = "did_you_mean"  # the reply template that asks


def ask(question: Question) -> str:
    return say(question.opening, sorted(o.spoken for o in question.options))


def which_room(text: str, light_rooms: Callable[[], Sequence[str]]) -> Question | None:
    """ "Change the room lamp to 50%", "set the room to 50%": which "...room" was meant, when two or
    more of the rooms with a light sound so ("bedroom", "living room"); this room's is a guess that
    may be wrong, and "I can't set the room" no answer. `light_rooms` is asked only on such words."""
    found = _BARE_ROOM.search(text)
    if found is None:
        return None
    lang = english()
    near = [room for room in light_rooms() if room.endswith(lang.room_suffix) and room != lang.room_suffix]
    if len(near) < 2:
        return None
    noun = f" {found.group(1).lower()}" if found.group(1) else ""
    options = tuple(
        Phrase(f"{lang.article} {room}{noun}", room, say("the_room", room=f"{room}{noun}")) for room in near
    )
    log.info("heard %r in %r: which room's, asking", found.group(0), text)
    return Question(text, found.group(0), options)


def here_unknown(
    text: str,
    rooms: Sequence[str],
    titles: Sequence[tuple[str, ...]],
    lang: Language,
    placed: Collection[str] = (),
) -> Question | None:
    """ "Turn on the lights in here" where nobody said which room this is (`audio.room` unset): which
    room, asked back, rather than every light in the home. None when a room or a title is named
    ("play here comes the sun"), nothing of a device is asked, or the home has one room."""
    tokens = words(text)
    found = find(tokens, lang.here)
    asks = [
        *(p for ps in lang.kinds.values() for p in ps),
        *lang.up,
        *lang.down,
        *lang.power["on"],
        *lang.power["off"],
    ]
    if not found or not find(tokens, asks):
        return None  # "make it romantic in here" sets a mood for the home; "she is here" asks nothing
    said = {kind for kind, ps in lang.kinds.items() if find(tokens, ps)}
    if said and said <= set(placed):
        return None  # "citrus in the diffuser, it smells in here": the one diffuser, wherever here is
    if len(rooms) < 2 or find(tokens, [tuple(words(r)) for r in rooms]) or find(tokens, titles):
        return None
    heard = " ".join(found[0][1])
    if heard not in text:
        return None
    inside = heard in lang.here_alone or heard.startswith(lang.here_in + " ")
    place = f"{lang.here_in} {lang.article}" if inside else lang.article
    options = tuple(Phrase(f"{place} {room}", room, say("the_room", room=room)) for room in sorted(rooms))
    log.info("%r says here, and this room is not known: asking which", text)
    return Question(text, heard, options, opening="which_room")


def answer(question: Question, reply: str, matcher: Matcher, vocabulary: Vocabulary) -> str | None:
    """The asked-about request with the chosen reading, or None if the reply is a new request."""
    text = " ".join(split_utterance(reply))
    words = text.split()
    request = len(words) > SHORT_ANSWER_WORDS or (bool(words) and words[0] in REQUEST_VERBS)
    if request and matcher.strict(text):
        # a request of its own ("turn on lounge light"), not an answer: once its "light" chose
        # "make the kitchen light orange" of two readings offered
        return None
    said = set(vocabulary.hear(text).text.split())
    chosen = []
    for option in question.options:
        others = {w for o in question.options if o is not option for w in o.text.split()}
        if said & (set(option.text.split()) - others):
            chosen.append(option)
    if len(chosen) != 1:
        return None
    return question.text.replace(question.heard, chosen[0].text, 1)


def unsure(text: str, alternatives: Sequence[str], names: frozenset[str]) -> Question | None:
    """Which was meant, when one of the ear's three next readings is more specific than `text`."""
    phrases = unsure_part(text, alternatives[:3], names)
    said = ", ".join(split_utterance(text))
    if phrases is None or phrases[0] not in said:
        return None
    log.info("heard %r, but the ear also heard %r for %r: asking", text, phrases[1], phrases[0])
    return Question(said, phrases[0], tuple(Phrase(p, p, p) for p in phrases))
