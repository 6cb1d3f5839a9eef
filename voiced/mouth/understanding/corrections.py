"""Corrections right after a turn: "no, the bedroom one", "actually the kitchen", "not blue, green". The
last request that was understood is said again with the corrected target or value in place of the one it
had, and understood afresh; a light or diffuser the first request changed is put back as it was (the
reply says so), other changes are not undone (the reply says so too). A correction must name a thing of
this home or a value (a room, a device, a colour or white, a scent, a genre, a percentage), and the last
request must hold exactly one word of that sort (or the one said after "not"); otherwise it is no
correction, or it is asked back.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from voiced.devices.colours import COLOR_TEMPS, COLORS
from voiced.devices.model import DeviceCommand
from voiced.devices.vocabulary import HomeVocabulary
from voiced.language import Language, Phrase, english, find, has, phrase, words
from voiced.language.replies import say, the
from voiced.mouth.agent import AgentReply
from voiced.mouth.understanding.grammar import human
from voiced.mouth.understanding.home import Home
from voiced.mouth.understanding.values import number, number_spans, past_percent

log = logging.getLogger(__name__)

_LIGHT_WORDS = r"(?: lights?| lamps?)?"


@dataclass(frozen=True)
class Correction:
    """What a correction says: the new target or value, the old one if it was named, and its sort."""

    new: str
    old: str | None
    sort: str  # "target", "colour", "scent", "genre", "percent"


def _sorts(vocabulary: HomeVocabulary) -> dict[str, set[str]]:
    return {
        "target": {*vocabulary.rooms, *(text for text, _ in vocabulary.named)},
        "colour": {*COLORS, *COLOR_TEMPS},
        "scent": set(vocabulary.scents),
        "genre": set(vocabulary.genres),
        "title": {t.lower() for t in vocabulary.titles},
    }


def said_right(text: str, vocabulary: HomeVocabulary, lang: Language) -> Correction | None:
    """`_said_right`, or the same with the talk after it left out: the parts at the end that name no
    thing of this home and hold no number ("no, I meant the living room, where the kids are")."""
    found = _said_right(text, vocabulary, lang)
    parts = [p for p in re.split(r"\s*(?:[,;.!?]|\s[-\u2013\u2014]\s)\s*", text) if p]
    things = list(_things(vocabulary))
    while found is None and len(parts) > 1:
        tail = words(parts.pop())
        if find(tail, things) or any(number_spans(tail, lang)) or find(tail, lang.correcting):
            return None
        found = _said_right(", ".join(parts), vocabulary, lang)
    return found


def _said_right(text: str, vocabulary: HomeVocabulary, lang: Language) -> Correction | None:
    """A correction read word by word ("wait, no, leave the lounge on, I meant the kitchen", "nah, adele
    instead", "no, pink! pink pink", "sorry, pink I mean", "not blue, green"): it opens with a correcting
    phrase, and after the last one followed by a thing of this home only that thing is said, the right
    one, among small words ("not X, Y": X is the wrong one); the same sort said before is the wrong one.
    None when `text` is no such correction ("no, turn it off" is a request of its own)."""
    tokens = words(text)
    cues = find(tokens, lang.correcting)
    opening = next((i for i, t in enumerate(tokens) if t not in lang.fillers), len(tokens))
    # "not blue, green"; "no, not Beethoven, Chopin"; "not the bedroom" alone excludes
    cue_ends = {opening} | {start + len(p) for start, p in cues}
    nots = [(i, (lang.plain_not,)) for i, t in enumerate(tokens) if t == lang.plain_not and i in cue_ends]
    cues = sorted({*cues, *nots})
    things = _things(vocabulary)
    if not cues or _asks(tokens[: cues[0][0]], lang):
        # "turn on the lamp, I meant …" is corrected in the same breath (`taken_back`)
        return _right_then_wrong(tokens, things, lang) if not cues else None
    mentions = find(tokens, things)
    spoken = [m for m, _ in mentions]
    spoken += [i for i, t in enumerate(tokens) if t not in lang.correction_words and number(tokens, i, lang)]
    ends = [start + len(p) for start, p in cues if any(m >= start + len(p) for m in spoken)]
    if not ends:
        return None
    end = max(ends)
    if tokens[end : end + 1] and tokens[end] in lang.guards["questions"]:
        return None  # "no, what is the bedroom light": a question, not the right one
    after = [(start, p) for start, p in mentions if start >= end]
    covered = {i for start, p in (*after, *cues) for i in range(start, start + len(p))}
    said = [things[p] for _, p in after]
    for i in range(end, len(tokens)):  # "no, forty percent"
        found = None if i in covered or tokens[i] in lang.correction_words else number(tokens, i, lang)
        if found is not None:
            covered.update(range(i, i + found[1]))
            covered.update(
                j for j in (i + found[1],) if tokens[j : j + 1] and has(tokens[j : j + 1], lang.percent)
            )
            said.append(("percent", f"{found[0]} percent"))
    if (after_cue := _right_then_wrong(tokens[end:], things, lang)) is not None:
        return after_cue  # "I meant the lounge, not the bedroom"
    small = lang.correction_words | lang.fillers
    if any(i not in covered and tokens[i] not in small for i in range(end, len(tokens))):
        return None
    said = list(dict.fromkeys(said))
    old: str | None = None
    if tokens[end - 1 : end] == [lang.plain_not]:  # "not blue, green"; "not the bedroom" alone takes it out
        if len(said) != 2 or said[0][0] != said[1][0]:
            return None
        old = said.pop(0)[1]
    if len(said) != 1:
        return None
    sort, new = said[0]
    if old is None:
        before = {things[p][1] for start, p in mentions if start < end and things[p][0] == sort} - {new}
        old = before.pop() if len(before) == 1 else None
    return Correction(new, old, sort)


def _right_then_wrong(
    tokens: list[str], things: dict[Phrase, tuple[str, str]], lang: Language
) -> Correction | None:
    """ "The bedroom, not the kitchen": the right one, then "not" and the wrong one of the same sort,
    among small words only."""
    if lang.plain_not not in tokens:
        return None
    at = tokens.index(lang.plain_not)
    mentions = find(tokens, things)
    before, after = [m for m in mentions if m[0] < at], [m for m in mentions if m[0] > at]
    covered = {at, *(i for start, p in mentions for i in range(start, start + len(p)))}
    small = lang.correction_words | lang.fillers
    if (
        len(before) != 1
        or len(after) != 1
        or any(i not in covered and t not in small for i, t in enumerate(tokens))
    ):
        return None
    (sort, new), (wrong_sort, old) = things[before[0][1]], things[after[0][1]]
    return Correction(new, old, sort) if sort == wrong_sort and new != old else None


def _things(vocabulary: HomeVocabulary) -> dict[Phrase, tuple[str, str]]:
    """Each way to say a thing of this home, with its sort and value."""
    things: dict[Phrase, tuple[str, str]] = {}
    for sort, values in _sorts(vocabulary).items():  # a colour before a title of the same words
        for value in values:
            things.setdefault(phrase(value), (sort, value))
    return things


def _asks(tokens: list[str], lang: Language) -> bool:
    """Whether the words before a correction ask for something themselves ("oh, silly me" does not)."""
    asking = [*lang.up, *lang.down, *lang.power["on"], *lang.power["off"]]
    asking += [p for ps in (*lang.kinds.values(), *lang.music_actions.values()) for p in ps]
    return bool(find(tokens, asking))


def corrected(
    last: str,
    fix: Correction,
    vocabulary: HomeVocabulary,
    *,
    alone: bool = False,
    lang: Language | None = None,
) -> str | None:
    """The last request with the corrected target or value in place; None when it holds no word of
    that sort or several (which one was wrong is not known). `alone`: the last request acted on one
    device without naming it ("a bit brighter"), so the right one is said after it."""
    sorts = _sorts(vocabulary)
    if fix.sort == "percent":
        return _renumbered(last, fix.new, lang or english())
    else:
        values = sorts[fix.sort]
        if fix.sort in ("genre", "title"):  # "play some jazz" - "nah, pink floyd instead": what plays
            values = sorts["genre"] | sorts["title"]
        if fix.sort == "target" and fix.new in vocabulary.rooms:
            values = set(vocabulary.rooms)  # "the kitchen light" -> "the bedroom light": the room only
        found = [v for v in values if re.search(rf"\b{re.escape(v)}\b", last)]
        if fix.sort == "target" and not found:
            found = [v for v in sorts["target"] if re.search(rf"\b{re.escape(v)}\b", last)]
        # "living room light" holds "living room": the longest reading of each place counts once
        candidates = [v for v in found if not any(v != w and v in w for w in found)]
    if fix.old is not None:  # the wrong one named: it picks among several; said another way, it is no help
        named = [c for c in candidates if c == fix.old or c == re.sub(rf"{_LIGHT_WORDS}$", "", fix.old)]
        candidates = named or candidates
    if not candidates and fix.sort == "target" and fix.old is None and alone:
        return f"{last} {fix.new}"  # "a bit brighter" of one device, named none: again, of the right one
    if len(candidates) != 1 or candidates[0] == fix.new:
        return None
    return re.sub(rf"\b{re.escape(candidates[0])}\b", fix.new, last, count=1)


def _renumbered(last: str, new: str, lang: Language) -> str | None:
    """The last request with its one number ("to 75", "to thirty five percent") said as `new`; None
    when it holds none, several different ones, or the same one."""
    tokens = words(last)
    spans = [(i, past_percent(tokens, end, lang), value) for i, end, value in number_spans(tokens, lang)]
    if len({value for _, _, value in spans}) != 1 or f"{spans[0][2]} percent" == new:
        return None
    start, end, _ = spans[0]
    return " ".join([*tokens[:start], new, *tokens[end:]])


def unclear(fix: Correction) -> str:
    return say("correction_unclear", new=fix.new)


def redone(
    fix: Correction,
    reply: AgentReply,
    before: tuple[str, ...],
    after: tuple[str, ...],
    undo: Callable[[list[str]], list[DeviceCommand]] = lambda _names: [],
) -> AgentReply:
    """The reply to the corrected request: what it did, the wrong device put back as it was (`undo`:
    the commands that do it, for the devices it can), and what could not be put back."""
    if not reply.understood or reply.missed:
        said = say("correction_failed", new=fix.new)
        return AgentReply(text=said, understood=False, missed=True)
    said = say("correction_target" if fix.sort == "target" else "correction_value", new=fix.new) + " "
    text = f"{said if reply.commands else ''}{reply.text}"  # a question asked again needs no "okay"
    left = [n for n in before if n not in after]
    back = undo(left) if reply.commands and left else []
    put_back = [human(c.device) for c in back]
    kept = [human(n) for n in left if human(n) not in put_back]
    if put_back:
        text += " " + say("corrected_put_back", [the(name) for name in put_back])
    if reply.commands and kept:
        text += " " + say("corrected_kept", [the(name) for name in kept])
    return replace(reply, text=text, commands=(*back, *reply.commands))


def correct(
    said: str,
    fix: Correction,
    vocabulary: HomeVocabulary,
    understand: Callable[[str], AgentReply],
    home: Home,
    undo: Callable[[list[str]], list[DeviceCommand]] = lambda _names: [],
    lang: Language | None = None,
) -> tuple[AgentReply, str | None]:
    """The reply to a correction of `said`, and the request it made (what a next correction redoes)."""
    redo = corrected(said, fix, vocabulary, alone=len(home.last) == 1, lang=lang)
    if redo is None:
        log.info("a correction to %s of %r, but which part is not clear", fix.new, said)
        return AgentReply(text=unclear(fix), understood=True), None
    log.info("corrected %r to %r", said, redo)
    before = home.last
    reply = redone(fix, understand(redo), before, home.last, undo)
    return reply, redo if reply.understood else None


def taken_back(text: str, vocabulary: HomeVocabulary, lang: Language) -> str | None:
    """ "Turn off the kitchen light, no, the bedroom light": the request as corrected in the same
    breath, or None when it holds no such correction."""
    tokens = words(text)
    for start, _ in find(tokens, lang.correcting):
        before = tokens[:start]
        if not before or not (_asks(before, lang) or find(before, _things(vocabulary))):
            continue
        fix = said_right(" ".join(tokens[start:]), vocabulary, lang)
        if fix is not None:
            return corrected(" ".join(tokens[:start]), fix, vocabulary, lang=lang)
        going_on = _and_then(tokens, start, vocabulary, lang)
        if going_on is not None:
            return going_on
    return _then_taken_back(tokens, vocabulary, lang)


def _then_taken_back(tokens: list[str], vocabulary: HomeVocabulary, lang: Language) -> str | None:
    """ "Lounge light red, uh, orange actually": the last thing said, closed by a word that takes back
    its like before it, replaces that one."""
    closing = [(s, p) for s, p in find(tokens, lang.correcting_after) if s + len(p) == len(tokens)]
    if not closing:
        return None
    cue, things = closing[0][0], _things(vocabulary)
    said = [(s, p) for s, p in find(tokens, things) if s + len(p) == cue]
    if said:
        start, (sort, value) = said[0][0], things[said[0][1]]
    elif (number_at := _number_ending(tokens, cue, lang)) is not None:
        start, sort, value = number_at[0], "percent", f"{number_at[1]} percent"
    else:
        return None
    small = (lang.fillers | set(lang.determiners)) - set(lang.separators)
    while start > 0 and tokens[start - 1] in small:  # "red, uh, orange"; "…light, the bedroom light"
        start -= 1
    # its like right before it, nothing between but a hesitation ("red and kitchen light blue
    # actually", "red, nicer than blue actually": no)
    if sort == "percent":
        like = _number_ending(tokens, start, lang) is not None
    else:
        before = [p for s, p in find(tokens[:start], things) if s + len(p) == start]
        like = bool(before) and things[before[0]][0] == sort
    if not like:
        return None
    return corrected(" ".join(tokens[:start]), Correction(value, None, sort), vocabulary, lang=lang)


def _number_ending(tokens: list[str], at: int, lang: Language) -> tuple[int, int] | None:
    """The number said right before `at` ("40", "40 percent"), as (where it starts, its value)."""
    for s, e, v in number_spans(tokens[:at], lang):
        if e == at or (e == at - 1 and has(tokens[e:at], lang.percent)):
            return s, v
    return None


def _and_then(tokens: list[str], cue: int, vocabulary: HomeVocabulary, lang: Language) -> str | None:
    """ "Kitchen light to 75, sorry, 65, warm white": the thing said right after the correcting phrase
    replaces its like before it, and the request goes on with the words after it."""
    cue_end, cue_said = next(
        (start + len(p), p) for start, p in find(tokens, lang.correcting) if start == cue
    )
    at = cue_end
    while at < len(tokens) and tokens[at] in lang.correction_words:
        at += 1
    found = next(((s, p) for s, p in find(tokens, _things(vocabulary)) if s == at), None)
    if found is not None:
        sort, value = _things(vocabulary)[found[1]]
        after = at + len(found[1])
    elif at < len(tokens) and (number_at := number(tokens, at, lang)) is not None:
        sort, value = "percent", f"{number_at[0]} percent"
        after = (
            at
            + number_at[1]
            + (1 if has(tokens[at + number_at[1] : at + number_at[1] + 1], lang.percent) else 0)
        )
    else:
        return None
    pointing = len(cue_said) == 2 and cue_said[0] == lang.plain_not and at == cue_end  # "not that"
    if pointing and tokens[after : after + 1] and tokens[after] not in lang.correction_words | lang.fillers:
        return None  # "a warm white, not that cold hospital colour": it says which is wrong
    redo = corrected(" ".join(tokens[:cue]), Correction(value, None, sort), vocabulary, lang=lang)
    if redo is None or after >= len(tokens):
        return None  # nothing goes on after it: `said_right` had the whole of it
    return f"{redo} {' '.join(tokens[after:])}"
