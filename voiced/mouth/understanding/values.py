"""The values of a request, read from its words: numbers and percentages ("thirty five", "half",
"to like twenty"), minutes, how it feels ("blindingly bright"), and one word of a class. Each reader
marks the words it took in `taken`, so that no word counts twice."""

from __future__ import annotations

import functools
from collections.abc import Collection, Container, Iterator, Sequence

from voiced.language import Language, Phrase, find, has, opens

TWO_VALUES = -1  # two different percentages in one part: which goes where is a guess


def number(tokens: list[str], i: int, lang: Language) -> tuple[int, int] | None:
    """The number starting at token i, and how many tokens it takes ("thirty five", "35")."""
    if tokens[i].isdigit():
        return int(tokens[i]), 1
    for p, value in _numbers(lang).get(tokens[i], ()):
        if tuple(tokens[i : i + len(p)]) == p:
            n = len(p)
            if value >= 20 and value % 10 == 0 and value < 100 and i + n < len(tokens):
                unit = lang.numbers.get((tokens[i + n],))
                if unit is not None and 0 < unit < 10:
                    return value + unit, n + 1
            return value, n
    return None


def number_spans(
    tokens: list[str], lang: Language, skip: Container[int] = ()
) -> Iterator[tuple[int, int, int]]:
    """Each number said (digits or number words) as (start, end, value), left to right; the words
    inside one ("thirty five") are not read again as numbers of their own. Positions in `skip` are
    passed over, looked up as the scan goes, so a caller may add to it between spans."""
    i = 0
    while i < len(tokens):
        found = None if i in skip else number(tokens, i, lang)
        if found is None:
            i += 1
            continue
        yield i, i + found[1], found[0]
        i += found[1]


def past_percent(tokens: list[str], end: int, lang: Language) -> int:
    """`end`, or one past it when the word there is "percent" ("75 percent" as a whole)."""
    return end + 1 if has(tokens[end : end + 1], lang.percent) else end


@functools.cache
def _numbers(lang: Language) -> dict[str, list[tuple[Phrase, int]]]:
    """The number words by their first word, the longest first."""
    out: dict[str, list[tuple[Phrase, int]]] = {}
    for p, value in sorted(lang.numbers.items(), key=lambda kv: -len(kv[0])):
        out.setdefault(p[0], []).append((p, value))
    return out


def names_a_level(word: str, lang: Language) -> bool:
    """A word for a kind's level or a step of it ("brightness", "bright", "louder"): a number after it
    is the level."""
    one = (word,)
    return any(one in ps for ps in lang.kinds.values()) or one in lang.up or one in lang.down


def percent(tokens: list[str], taken: set[int], lang: Language) -> int | None:
    """A percentage: a number before "percent", an amount ("half", "full"), or a number after "at"/"to".
    `TWO_VALUES` when two different ones are said."""
    found_values: list[int] = []
    spans = list(number_spans(tokens, lang, taken))
    for i, end, value in spans:
        n = end - i
        if tokens[i] in lang.word_sets["value_openers"] and any(s == end for s, _, _ in spans):
            continue  # "2 100": texted "to 100"
        after = tuple(tokens[i + n : i + n + 2])
        if after[:1] and after[0] in lang.not_percent:
            continue
        if i > 0 and tokens[i - 1] in lang.level_from and len(list(number_spans(tokens[end:], lang))) == 1:
            taken.update(range(i - 1, end))  # "from 72 to 48": where it is, then where it goes
            continue
        is_pct = any(after[: len(p)] == p for p in lang.percent)
        before = i - 1
        while before > 0 and tokens[before] in lang.approximately:
            before -= 1
        if before > 0 and tokens[before] in lang.level_of and names_a_level(tokens[before - 1], lang):
            before -= 1  # "an intensity of 60"
        valued = before >= 0 and (
            tokens[before] in lang.word_sets["value_openers"] or names_a_level(tokens[before], lang)
        )
        is_after = valued and value <= 100  # "to 40", "bright like 90", "volume 30"
        # "make it 75", "make that seventy five": a number closing two words or fewer (said in words,
        # ten or more: "that one" is a pointer)
        last_digits = n == len(tokens) - i and 0 < i <= 2 and (tokens[i].isdigit() or value >= 10)
        # "80 on the lamp" ("one on the lamp" is no level: a word that small is a count)
        opening = i == 0 and after[:1] and after[0] in lang.level_on and 10 <= value <= 100
        if is_pct or is_after or opening or (last_digits and value <= 100):
            taken.update(range(i, i + n + (1 if is_pct or opening else 0)))
            found_values.append(value)
    for start, p in find(tokens, lang.amounts, taken):
        taken.update(range(start, start + len(p)))
        found_values.append(lang.amounts[p])
    if len(set(found_values)) > 1:
        return TWO_VALUES
    return found_values[0] if found_values else None


def only_a_number(tokens: list[str], lang: Language) -> int | None:
    """The level when `tokens` say one number and nothing else but fillers and "about" ("thirty
    maybe", "like fifteen"; in words, ten or more); else None."""
    said = [t for t in tokens if t not in lang.fillers and t not in lang.approximately]
    spans = list(number_spans(said, lang))
    if len(spans) != 1 or spans[0][:2] != (0, len(said)) or spans[0][2] > 100:
        return None
    if spans[0][2] < 10 and not said[0].isdigit():
        return None  # "…, one": a word that small is a count ("that one"), not a level
    return spans[0][2]


def step_size(tokens: list[str], lang: Language) -> int | None:
    """How far a step goes when a number is said with its way rather than as the level: after "by"
    ("up by 20"), right after a way ("bump it up 10%"), or right before one ("20 percent brighter")."""
    ways = {p[0] for p in (*lang.up, *lang.down) if len(p) == 1}
    for i, end, value in number_spans(tokens, lang):
        end = past_percent(tokens, end, lang)
        before = tokens[i - 1] if i > 0 else ""
        if before in lang.step_openers or before in ways or (tokens[end : end + 1] and tokens[end] in ways):
            return value
    return None


def felt(tokens: list[str], taken: set[int], lang: Language) -> list[tuple[str, str]]:
    """ "Blindingly bright", "rather strong": a word of degree, then how a kind's value feels."""
    found: list[tuple[str, str]] = []
    for start, p in find(tokens, lang.degree, set(taken)):
        after = tokens[start + len(p) : start + len(p) + 1]
        for kind, ways in lang.felt.items():
            found += [(kind, way) for way, ps in ways.items() if find(after, ps)]
    return list(dict.fromkeys(found))


def compared(tokens: list[str], taken: set[int], lang: Language) -> list[tuple[str, str]]:
    """ "More dark", "a bit less bright": a word that compares, then how a kind's value feels; "more"
    goes the way it feels (darker: down), "less" the other way."""
    found: list[tuple[str, str]] = []
    for comparing, same in ((lang.more_of, False), (lang.less_of, True)):
        for start, p in find(tokens, comparing, set(taken)):
            after = tokens[start + len(p) : start + len(p) + 1]
            if (*p, *after) in {*lang.up, *lang.down}:
                continue  # "more strong": a way of its own, whatever it is of
            for kind, ways in lang.felt.items():
                for way, ps in ways.items():
                    if find(after, ps):
                        taken.update(range(start, start + len(p) + 1))
                        found.append((kind, way if same else {"up": "down", "down": "up"}[way]))
    return list(dict.fromkeys(found))


def felt_only_negation(tokens: list[str], lang: Language) -> bool:
    """ "I can't see a thing": the negation is part of how it feels, not of the request."""
    felt = [p for ps in lang.too_little.values() for p in ps]
    others = [n for n in lang.negations if n != (lang.plain_not,)]
    return bool(find(tokens, felt)) and not find(tokens, others)


def one_of(tokens: list[str], classes: dict[str, tuple[Phrase, ...]], taken: set[int]) -> str | None:
    """The one class said, the longest phrase taking its words first ("cut on" is on, not "cut" of
    off); None for none or several."""
    of = {p: name for name, phrases in classes.items() for p in phrases}
    hits = {of[p] for _, p in find(tokens, tuple(of), set(taken))}
    return hits.pop() if len(hits) == 1 else None


def take(tokens: list[str], phrases: Sequence[Phrase], taken: set[int]) -> list[Phrase]:
    found = find(tokens, phrases, taken)
    return [p for _, p in found]


def _units(lang: Language, name: str) -> tuple[str, ...]:
    return tuple(lang.word_sets[name])


def _timed(tokens: list[str], at: int, lang: Language) -> bool:
    """A number at `at` with a unit of time after it."""
    found = number(tokens, at, lang)
    if found is None or at + found[1] >= len(tokens):
        return False
    return tokens[at + found[1]].startswith((*_units(lang, "minute_units"), *_units(lang, "hour_units")))


def minutes(tokens: list[str], taken: set[int], lang: Language) -> int | None:
    """ "For twenty minutes", "for an hour"; a number with its unit says it without "for" ("only 15 min"),
    and so does one of the minutes' phrases ("half an hour of sandalwood"), but after a word that makes
    it a time ("in half an hour") or before "ago"."""
    bounds, before = lang.word_sets["duration_bounds"], lang.word_sets["time_before"]
    for i, token in enumerate(tokens):
        lasting = token == lang.lasting
        if i + 1 >= len(tokens) or (not lasting and not _timed(tokens, i, lang)):
            if (i == 0 or tokens[i - 1] not in before) and (said := _lasting_phrase(tokens, i, lang)):
                taken.update(range(i, i + len(said[0])))
                return said[1]
            continue
        after = i + 1 if lasting else i
        while after < len(tokens) and (
            tokens[after] in lang.approximately or (lasting and tokens[after] in bounds)
        ):
            after += 1
        rest = tokens[after:]
        for p, value in lang.minutes_longest_first:
            if tuple(rest[: len(p)]) == p:
                taken.update(range(i, after + len(p)))
                return value
        found = number(tokens, after, lang) if after < len(tokens) else None
        if found is not None:
            value, n = found
            unit = tokens[after + n] if after + n < len(tokens) else ""
            if unit.startswith(_units(lang, "minute_units")):
                taken.update(range(i, after + n + 1))
                return value
            if unit.startswith(_units(lang, "hour_units")):
                taken.update(range(i, after + n + 1))
                return value * 60
            if lasting and not unit:  # "lavender for 15": for a while, said last, is minutes
                taken.update(range(i, after + n))
                return value
    return None


def _lasting_phrase(tokens: list[str], at: int, lang: Language) -> tuple[Phrase, int] | None:
    """One of the minutes' phrases starting at `at` (the longest), then "of" ("half an hour of
    sandalwood"): how long, said without "for"."""
    for p, value in lang.minutes_longest_first:
        end = at + len(p)
        if tuple(tokens[at:end]) == p and tokens[end : end + 1] == ["of"]:
            return p, value
    return None


def eased_off(tokens: list[str], lang: Language) -> bool:
    """ "Ease the diffuser off a bit", "back the music off slightly": "off" with a degree right after
    it is a step down; nothing is switched off a bit."""
    for start, p in find(tokens, lang.power["off"]):
        after = tokens[start + len(p) : start + len(p) + 2]
        after = after[1:] if after[:1] == ["a"] else after
        if after[:1] and after[0] in lang.word_sets["small_steps"]:
            return True
    return False


def described(tokens: list[str], at: int, lang: Language) -> bool:
    """Whether the word at `at` says how something is: a verb of being before it, words of degree
    between ("is looking awful yellow", "it's pitch black")."""
    degree = {w for p in lang.degree for w in p}
    before = at - 1
    while before >= 0 and tokens[before] in degree:
        before -= 1
    verbs = lang.finite_verbs | lang.word_sets["describing"]
    return before >= 0 and (tokens[before] in verbs or has(tokens[before : before + 1], lang.being))


def also_said(tokens: list[str], lang: Language) -> bool:
    """Whether the words say "as well" ("the kitchen too"); a word that is also one of degree, with
    more than courtesy after it, is the degree ("it's way too yellow in the lounge")."""
    both = set(lang.also) & set(lang.degree)
    courtesy = lang.courtesy_phrases

    def said_after(at: int) -> list[str]:  # "…too, if you would": courtesy says nothing
        polite = {i for s, p in find(tokens[at:], courtesy) for i in range(at + s, at + s + len(p))}
        return [t for i, t in enumerate(tokens) if i >= at and i not in polite]

    return any(
        p not in both or all(t in lang.fillers for t in said_after(s + len(p)))
        for s, p in find(tokens, lang.also)
    )


def genre_verbs(tokens: list[str], genres: Sequence[Phrase], taken: set[int], lang: Language) -> set[int]:
    """Where a genre's word is a verb: before a determiner near the start ("pop the lamp on"), or
    opening a phrase for playing, said first ("pop on some jazz")."""
    played = [p for p in lang.play_words if len(p) > 1]
    return {
        s
        for s, _ in find(tokens, genres, set(taken))
        if s < 3
        and tokens[s + 1 : s + 2]
        and (
            tokens[s + 1] in lang.determiners
            or (opens(tokens[s:], played) and all(t in lang.fillers for t in tokens[:s]))
        )
    }


def alone(tokens: list[str], phrases: list[Phrase], taken: set[int], lang: Language) -> bool:
    """Whether one of `phrases` is all that is said, beside fillers and courtesy."""
    found = find(tokens, phrases, set(taken))
    spans = {i for s, p in found[:1] for i in range(s, s + len(p))}
    return len(found) == 1 and all(i in spans or t in lang.fillers for i, t in enumerate(tokens))


def landmarks(tokens: list[str], taken: set[int], lang: Language, have: Collection[str]) -> list[str]:
    """The rooms of `have` said by what is in them: a landmark after a word of place or "where", or
    right before a device's noun ("the light by my bed", "the sofa lamp", "the room where I sleep");
    its words are taken."""
    rooms: list[str] = []
    for room, phrases in lang.landmarks.items():
        for start, p in find(tokens, phrases, set(taken)) if room in have else ():
            before = tokens[max(0, start - 3) : start]
            placed = find(before, lang.beside) or lang.word_sets["landmark_openers"] & set(before)
            if placed or find(tokens[start + len(p) : start + len(p) + 1], lang.device_nouns):
                taken.update(range(start, start + len(p)))
                rooms.append(room)
    return rooms


def only_again(tokens: list[str], taken: set[int], lang: Language) -> bool:
    """Whether the words left ask for the same change again and nothing else ("a bit more, please")."""
    again = {i for s, p in find(tokens, lang.again, set(taken)) for i in range(s, s + len(p))}
    small = lang.fillers | {w for p in lang.degree for w in p}
    return bool(again) and all(i in again or i in taken or t in small for i, t in enumerate(tokens))
