"""Taking the last change back: "undo that", "put it back how it was", "put the lounge back".

The devices the last reply changed are put back as they were before it; a device or room named
takes back that one's change alone. Pure: the words, the home's names and the states kept before
the last reply.
"""

from __future__ import annotations

from voiced.language import Language, find, has, words
from voiced.mouth.understanding.home_words import Words


def undone(text: str, names: Words, lang: Language, changed: tuple[str, ...]) -> tuple[str, ...] | None:
    """The devices of `changed` (what the last reply changed) whose change `text` takes back; None
    when the words take nothing back, or name only devices the last reply left alone."""
    tokens = [t for t in words(text) if t not in lang.fillers]
    if not changed or any(t.isdigit() for t in tokens):
        return None
    verb, particle = lang.undo_around
    around = bool(tokens) and tokens[-1] == particle and verb in tokens  # "put the lounge back"
    if not (has(tokens, lang.undo) or around):
        return None
    rooms = {names.rooms[p] for _, p in find(tokens, names.rooms)}
    named = {names.devices[p] for _, p in find(tokens, names.devices)}
    named |= {d for d, room in names.in_room.items() if room in rooms}
    if not named:
        return changed
    picked = tuple(d for d in changed if d in named)
    return picked or None
