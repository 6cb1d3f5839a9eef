"""A question about devices named, in words no template has ("is the bedroom light still on?"),
answered from their reports; the devices it named are what "it" means next ("turn it off then").
Pure: the words, the home's names and the states only.
"""

from __future__ import annotations

from voiced.language import Language, english, find, words
from voiced.mouth.understanding import answers
from voiced.mouth.understanding.frame import is_question
from voiced.mouth.understanding.home import Home, Match, Outcome, Slot
from voiced.mouth.understanding.home_words import Words

_ENGLISH = english()
_BEING = _ENGLISH.being
_REQUEST_VERBS = frozenset(_ENGLISH.guards["request_verbs"])
_POWER = tuple(p for phrases in _ENGLISH.power.values() for p in phrases)
_IS = _BEING[0][0]
_ASKS_WITH_S = _ENGLISH.word_sets["s_not_is"]


def states_how_things_are(segment: str) -> bool:
    """A statement of how things are ("this cold white is like the hospital", "80 is excessive for a
    room this size"): a subject, then a verb of being, and no verb or power word that asks. Beside
    a request it says why, not what."""
    said = [part for w in segment.split() for part in _unclitic(w)]
    return bool(find(said[1:], _BEING)) and not _REQUEST_VERBS.intersection(said) and not find(said, _POWER)


def _unclitic(word: str) -> tuple[str, ...]:
    """ "light's" as "light is" ("let's" stays: it asks)."""
    if word.endswith("'s") and word not in _ASKS_WITH_S:
        return word[:-2], _IS
    return (word,)


def talked_of(segment: str, names: Words) -> tuple[str, ...]:
    """The one device a statement of how things are names ("the bedroom light's like a chip shop"):
    what "it" means in the request after it ("make it cooler")."""
    if not states_how_things_are(segment):
        return ()
    tokens = words(" ".join(w.removesuffix("'s") for w in segment.split()))
    found = find(tokens, names.devices)
    named = {i for at, p in found for i in range(at, at + len(p))}
    rest = [t for i, t in enumerate(tokens) if i not in named]
    devices = tuple(dict.fromkeys(names.devices[p] for _, p in found))
    # "the bedroom and kitchen lights": another room said beside it, and "it" is no one device
    return devices if len(devices) == 1 and not find(rest, names.rooms) else ()


def spoken_of(text: str, names: Words) -> tuple[str, ...]:
    """The devices `text` names by a name of their own (not by a room or a kind)."""
    found = find(words(text), names.devices)
    return tuple(dict.fromkeys(names.devices[p] for _, p in found))


def answered(text: str, names: Words, home: Home, lang: Language) -> Outcome | None:
    """A question about devices named, answered with whether they are on (or off, if asked)."""
    tokens = words(text)
    devices = spoken_of(text, names)
    if not devices or not is_question(tokens, lang):
        return None
    asked = "off" if "off" in tokens else "on"
    match = Match("HassGetState", {"name": Slot(",".join(devices)), "state": Slot(asked)})
    return answers.get_state(home, match, whole=True)
