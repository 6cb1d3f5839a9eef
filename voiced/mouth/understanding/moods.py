"""Moods heard in a request that names nothing here, to the scene presets that carry them."""

from __future__ import annotations

from voiced.language import Language, Phrase, find, has, opens
from voiced.mouth.understanding import values
from voiced.mouth.understanding.frame import is_question
from voiced.mouth.understanding.home_words import Words


def mood(
    parts: list[list[str]], moods: dict[str, tuple[Phrase, ...]], words: Words, lang: Language
) -> str | None:
    """The preset whose mood words the request's parts say most (a word naming a device, room or value
    here never counts; a time of day counts half); None for none, a tie, a question in any part, or
    the past."""
    tokens = [t.removesuffix("'s") for part in parts for t in part]  # "dinner's on the table"
    if (
        any(is_question(part, lang) for part in parts)
        or has(tokens, lang.past)
        or opens(tokens, lang.correcting)
    ):
        return None  # a correction is about the last request ("no, I meant the bedroom, I'll eat in bed")
    if any(tuple(tokens[len(tokens) - len(p) :]) == p for p in lang.also):
        return None  # "and the one in the room where I sleep too": the last request again, elsewhere
    if find(tokens, list(words.devices)):
        return None  # "I need to clean the diffuser": the mood word is about a device of ours
    switched = [p for ps in lang.power.values() for p in ps]
    valued = find(tokens, [*switched, *lang.up, *lang.down]) or any(values.number_spans(tokens, lang))
    if find(tokens, list(lang.device_nouns)) and valued:
        # "put the light on in the room where I sleep", "the light beside my bed, very low, about ten":
        # a device asked for, not a mood
        return None
    home = set(words.devices) | set(words.rooms) | set(words.scents) | set(words.genres) | set(words.colours)

    def weight(at: int, said: Phrase) -> float:
        # a time of day is weaker evidence than a mood word; "books" said is "books", before "book"
        exact = tuple(tokens[at : at + len(said)]) == said
        return (lang.mood_time_weight if said in lang.times_of_day else 1.0) - (0.0 if exact else 0.1)

    hits = {
        name: sum(weight(at, p) for at, p in find(tokens, [p for p in said if p not in home]))
        for name, said in moods.items()
    }
    best = max(hits.values(), default=0)
    winners = [name for name, n in hits.items() if n == best]
    if len(winners) > 1:  # "my friend's coming over, make it romantic": the part that asks decides
        asking = [t for part in parts if part[:1] and part[0] in lang.value_verbs for t in part]
        asked = [name for name in winners if find(asking, [p for p in moods[name] if p not in home])]
        winners = asked or winners
    return winners[0] if best >= lang.mood_least and len(winners) == 1 else None
