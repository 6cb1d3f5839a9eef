"""A question about devices named, in words no template has ("is the bedroom light still on?"),
answered from their reports; the devices it named are what "it" means next ("turn it off then").
Pure: the words, the home's names and the states only.
"""

from __future__ import annotations

from voiced.language import Language, find, words
from voiced.mouth.understanding import answers
from voiced.mouth.understanding.frame import is_question
from voiced.mouth.understanding.home import Home, Match, Outcome, Slot
from voiced.mouth.understanding.home_words import Words


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
