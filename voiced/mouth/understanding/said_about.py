"""Words about the home that ask for nothing: what someone did ("I just turned on the kitchen light"),
and a thing the home lacks said as where or why ("louder, I can't hear it over the kettle")."""

from __future__ import annotations

from collections import Counter

from voiced.language import Language, Phrase, find
from voiced.mouth.understanding.home_words import Words


def told_of_the_past(tokens: list[str], lang: Language, device_words: frozenset[str]) -> bool:
    """ "I just turned on the kitchen light", "the diffuser ran out of lavender": what was done, by
    someone or to a device, not what to do."""
    for at, token in enumerate(tokens):
        if token not in lang.past_verbs and token not in lang.past_of_devices:
            continue
        before = at
        while between := [
            p for p in lang.past_between if tuple(tokens[max(0, before - len(p)) : before]) == p
        ]:
            before -= len(between[0])
        if token in lang.past_verbs and any(
            tuple(tokens[max(0, before - len(p)) : before]) == p for p in lang.past_subjects
        ):
            return True
        if token in lang.past_of_devices and before > 0 and tokens[before - 1] in device_words:
            return True
    return False


def only_beside(tokens: list[str], found: list[tuple[int, Phrase]], ours: bool, lang: Language) -> bool:
    """ "More light over the cooker, in the kitchen", "louder, I can't hear it over the kettle": a thing
    the home lacks said after a word of place or cause, beside a device of ours, is not what is asked."""

    def beside(at: int) -> bool:
        while at > 0 and tokens[at - 1] in lang.determiners:
            at -= 1  # "over the kettle"
        return any(tuple(tokens[max(0, at - len(b)) : at]) == b for b in lang.beside)

    return ours and all(beside(s) for s, _ in found)


def ours(tokens: list[str], named: list[tuple[int, Phrase]], words: Words, lang: Language) -> bool:
    """Whether the words name a device or room of this home, or a kind it has one device of."""
    counts = Counter(words.kinds.values())
    single = [p for kind, phrases in lang.kinds.items() if counts[kind] == 1 for p in phrases]
    return bool(named or find(tokens, words.rooms) or find(tokens, single))


def nouns(words: Words, lang: Language) -> frozenset[str]:
    """The words a device is called by, last words only ("light" of "the kitchen light")."""
    kind_words = (p for phrases in lang.kinds.values() for p in phrases)
    return frozenset(p[-1] for p in (*words.devices, *lang.device_nouns, *kind_words) if p)
