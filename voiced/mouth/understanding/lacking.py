"""The kinds of device our software knows, against those this home has (issue 28): a request for a
kind the home lacks is refused by name ("There's no music player here"), and what the home can
control is said from its own kinds ("the lights", not "the lights, the diffuser and the music").
How each kind is said is in `voiced/language/en.yaml` (`kind_names`)."""

from __future__ import annotations

from collections.abc import Collection

from voiced.language import Language, find


def controlled(kinds: Collection[str], lang: Language) -> list[str]:
    """The home's devices, kind by kind as the language says all of them: ["the lights", "the music"]."""
    return [name.all for kind, name in lang.kind_names.items() if kind in kinds]


def lacking(
    tokens: list[str], kinds: Collection[str], lang: Language, taken: Collection[int] = ()
) -> str | None:
    """What a device of a kind the words ask for is called ("music player"), when this home (its
    devices' `kinds`) has none of that kind; None when the words ask for no kind it lacks. Words at
    `taken` (a device or room of this home: "the music room") ask for nothing."""
    for kind, name in lang.kind_names.items():
        if kind not in kinds and find(tokens, (*lang.kinds.get(kind, ()), *name.asked_by), set(taken)):
            return name.one
    return None


def said_as_doing(tokens: list[str], lang: Language) -> bool:
    """Whether every word here of a thing the home lacks, or of a room, is said as what someone does
    ("I must study", "hoover the whole house"): after a `doing_before` word, or before a determiner."""
    found = find(tokens, [*(p for ps in lang.absent.values() for p in ps), *lang.room_words])
    if not found:
        return False

    def doing(at: int, said: tuple[str, ...]) -> bool:
        before = tokens[at - 1] if at > 0 else None
        after = tokens[at + len(said)] if at + len(said) < len(tokens) else None
        return before in lang.doing_before or (before not in lang.determiners and after in lang.determiners)

    return all(doing(at, said) for at, said in found)
