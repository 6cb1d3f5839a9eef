"""The entity frame: the home's devices, rooms and kinds, and the values said, in any order and with
any verb; the values decide the action. Pure: the text, the home's words and what is known of the
conversation in, a `Frame` out (or None when the words name nothing here to act on).

It is the general pass after the templates: "drop the kitchen light to 15 percent", "citrus at 30
percent", "all lights out", "kitchen on full brightness". A kind the home lacks ("the living room fan")
is refused by name and never lands on another device. The words are in `voiced/language/en.yaml`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from voiced.language import Language, find, has, opens
from voiced.language.replies import say
from voiced.mouth.understanding import values
from voiced.mouth.understanding.home_words import Words
from voiced.mouth.understanding.lacking import lacking
from voiced.mouth.understanding.said_about import nouns, only_beside, ours, told_of_the_past


@dataclass(frozen=True)
class Frame:
    """What the words ask for. `targets` empty with `refusal` set: nothing to do, and why."""

    targets: tuple[str, ...] = ()
    kind: str | None = None
    power: str | None = None  # "ON" / "OFF"
    percent: int | None = None
    direction: str | None = None  # "up" / "down"
    by: int | None = None  # how far a step goes, in percent points ("up by 20", "10% dimmer")
    colour: str | None = None  # a colour's name
    white: str | None = None  # warm, cool, warmer, cooler
    scent: str | None = None
    genre: str | None = None
    title: str | None = None  # from the music library: a search
    action: str | None = None  # play, pause, stop, next, previous
    minutes: int | None = None
    refusal: str | None = None
    follow_up: bool = False  # targets only, said as "the kitchen as well": the last request again
    felt: bool = False  # the change comes from how it feels ("it's quite strong"), not a request
    named: tuple[str, ...] = field(default=())  # what was said of the targets, for the reply
    excluding: tuple[str, ...] = ()  # "not the bedroom", "except the kitchen": taken out of the last request
    bare: bool = False  # targets named with nothing asked of them ("the diffuser" after "kill the music and")
    recalled: bool = False  # the targets are the devices last acted on, none was named


def is_question(tokens: list[str], lang: Language) -> bool:
    asks_nothing = opens(tokens, lang.asking_openers) or opens(tokens, lang.exclaiming)
    return opens(tokens, lang.question_openers) and not asks_nothing


def read(
    text_tokens: list[str],
    words: Words,
    lang: Language,
    *,
    room: str | None,
    last: tuple[str, ...],
    heard: bool = False,
    repeat: str | None = None,
    going_on: bool = False,
) -> Frame | None:
    """`repeat`: the direction of the last change ("a bit more" after "dim it" is dimmer still).
    `going_on`: the words go on a request of the same breath that acted on `last` ("set the bedroom
    light to 45 percent, colour yellow"): values they name are for those devices, among any words.
    The frame of a reading; a reading opening with a known mishearing of a request's first words
    ("Sandalwood diffuser to 40%": Whisper's "Set the") is taken as said, if it then asks for something."""
    for misheard, said in lang.confusions:
        if tuple(text_tokens[: len(misheard)]) == misheard:
            swapped = [*said, *text_tokens[len(misheard) :]]
            if is_question(swapped, lang):
                return None  # "Our all lights off.": Whisper's "are", a question
            again = _read(
                swapped, words, lang, room=room, last=last, heard=heard, repeat=repeat, going_on=going_on
            )
            if again is not None and ((again.targets and not again.bare) or again.refusal):
                return again
    return _read(
        text_tokens, words, lang, room=room, last=last, heard=heard, repeat=repeat, going_on=going_on
    )


def _read(
    text_tokens: list[str],
    words: Words,
    lang: Language,
    *,
    room: str | None,
    last: tuple[str, ...],
    heard: bool,
    repeat: str | None = None,
    going_on: bool = False,
) -> Frame | None:
    room_names = words.room_names(lang.room_synonyms)
    names = {w for p in (*words.devices, *room_names) for w in p}
    # "the diffuser's a bit much": a name's "'s" is the name
    tokens = [t[:-2] if t.endswith("'s") and t[:-2] in names else t for t in text_tokens]
    white_phrases = [p for ps in lang.whites.values() for p in ps]
    # "cool white in the kitchen": a filler's word opening a value's phrase is the value
    value_openings = [p for p in white_phrases if len(p) > 1]
    while tokens and tokens[0] in lang.fillers and not opens(tokens, value_openings):
        tokens.pop(0)
    # "stronger" after "citrus", "warmer", "half": a change of the last device said alone
    steps = (
        *lang.up,
        *lang.down,
        *lang.whites.get("warmer", ()),
        *lang.whites.get("cooler", ()),
        *lang.amounts,
    )
    lone_power = [] if heard else lang.lone_power  # "just off" typed; heard alone, it may be noise
    lone_direction = len(tokens) == 1 and has(tokens, [*steps, *white_phrases, *lone_power])  # "warm", "off"
    carried = opens(text_tokens, lang.follow_openers)  # "and bedroom", "now the lounge"
    # "put some pop on, thirty maybe": a number alone, going on a request of the same breath, is its level
    level_alone = values.only_a_number(tokens, lang) if going_on else None
    if (
        (len(tokens) < 2 and not (lone_direction or carried or level_alone is not None))
        or is_question(tokens, lang)
        or has(tokens, lang.past)
        or told_of_the_past(tokens, lang, nouns(words, lang))
    ):
        return None  # one word alone ("blues") is a part of something else, or a mishearing
    courtesy = lang.courtesy_phrases
    polite_at = {i for s, p in find(tokens, courtesy) for i in range(s, s + len(p))}
    unhedged = [t for i, t in enumerate(tokens) if i not in polite_at]  # "if you don't mind" negates nothing
    negated = has(unhedged, lang.negations) and not values.felt_only_negation(unhedged, lang)
    taken: set[int] = set()
    named = find(tokens, words.devices, taken)
    # "the lamps" are many: one word of a device's name names it only as said ("the lamp")
    plural = [(s, p) for s, p in named if p in words.own and tokens[s] != p[0]]
    taken.difference_update(s for s, _ in plural)
    named = [found for found in named if found not in plural]
    for s, p in list(named):  # "the lounge speaker": a device's name that is its room's, before another kind
        after = tokens[s + len(p) :]
        other_kinds = [ps for k, ps in lang.kinds.items() if k != words.kinds[words.devices[p]]]
        before = s - 1
        while before >= 0 and tokens[before] in lang.determiners:
            before -= 1
        placed = before >= 0 and tokens[before] == lang.here_in  # "sandalwood in the lounge": where
        if p in room_names and (placed or any(opens(after, ps) for ps in other_kinds)):
            named.remove((s, p))
            taken.difference_update(range(s, s + len(p)))
    room_words = set(lang.room_words)
    placed_by = values.landmarks(tokens, taken, lang, set(room_names.values()))  # "the light by my bed"
    for label, phrases in lang.absent.items():
        found = find(tokens, phrases, set(taken))
        if found and not only_beside(tokens, found, ours(tokens, named, words, lang), lang):
            return Frame(refusal=say("absent_here", thing=label))
        taken.update(i for s, p in found for i in range(s, s + len(p)))
    rooms_found = find(tokens, room_names, taken)
    other_room = find(tokens, lang.room_words, set(taken))
    if other_room:
        where = " ".join(other_room[0][1])
        return Frame(refusal=say("absent_here", thing=where))
    if lacked := lacking(tokens, set(words.kinds.values()), lang, taken):
        return Frame(refusal=say("absent_here", thing=lacked))  # "play some jazz" with no music player
    # "all the lights but the bedroom": what comes after "but" is taken out
    cut = next((s for s, _ in find(tokens, lang.excepting, set(taken))), None)
    excluded = [words.devices[p] for s, p in named if cut is not None and s > cut]
    excluded_rooms = [room_names[p] for s, p in rooms_found if cut is not None and s > cut]
    if negated and cut != 0:
        return None  # "I don't like this off": not a plain request ("not the bedroom" takes one out)
    devices = [words.devices[p] for s, p in named if cut is None or s < cut]
    rooms = [room_names[p] for s, p in rooms_found if cut is None or s < cut]
    rooms += list(dict.fromkeys(placed_by)) if not (rooms or devices) else []
    here_said = bool(room and values.take(tokens, lang.here, taken))
    if room and here_said:
        rooms.append(room)
    # "all the way up" is an amount, not every device
    amounts_at = {i for s, p in find(tokens, lang.amounts, set(taken)) for i in range(s, s + len(p))}
    every_at = find(tokens, lang.every, taken | amounts_at)
    taken.update(i for s, p in every_at for i in range(s, s + len(p)))
    every = bool(every_at)

    # "some lofi", "Bohemian Rhapsody, please": a genre said alone is asked for (not one that also names
    # a colour: "…, blues" after a light's request); a title, free text, only when asked politely
    polite = bool(polite_at)
    asked_alone = (
        values.alone(tokens, list(words.genres), taken, lang) and not find(tokens, words.colours)
    ) or (polite and values.alone(tokens, list(words.title_phrases), taken, lang))
    # "put the kitchen light on blue": a colour of a light named (a scent of the diffuser) is no title
    kinds_named = {words.kinds[words.devices[p]] for _, p in named}
    kinds_named |= {kind for kind, ps in lang.kinds.items() if find(tokens, ps)}  # "the lounge light"
    values_named = {
        *(words.colours if "light" in kinds_named else ()),
        *(words.scents if "diffuser" in kinds_named else ()),
    }
    playing = has(tokens, lang.play_words) or asked_alone
    titles = words.titles_in(tokens, taken, values_named) if playing else []
    scent = values.take(tokens, words.scents, taken)
    taken.update(values.genre_verbs(tokens, words.genres, taken, lang))  # "pop the lounge lamp on"
    genre_at = find(tokens, words.genres, set(taken))
    genre = values.take(tokens, words.genres, taken)
    music_said = find(tokens, lang.kinds.get("music", ())) or (
        has(tokens, lang.pointers) and any(words.kinds.get(d) == "music" for d in last)
    )
    # "jazz on", "lofi at 25": a genre switched on, or at a level, is played
    genre_on = not named and any(
        tuple(tokens[s + len(p) : s + len(p) + 1]) in lang.power["on"]
        or (
            tuple(tokens[s + len(p) : s + len(p) + 1]) in lang.level_at
            and values.number(tokens, s + len(p) + 1, lang) is not None
        )
        for s, p in genre_at
    )
    unplayed = bool(genre) and not (has(tokens, lang.play_words) or music_said or asked_alone or genre_on)
    if unplayed:
        genre = []  # "turn the living room like blues": a genre is asked for with a word for playing
    white_at = find(tokens, white_phrases, set(taken))
    white = values.one_of(tokens, lang.whites, taken)  # before the colours: "warm white" is no "white"
    if white is not None:
        values.take(tokens, white_phrases, taken)
    colour_at = find(tokens, words.colours, set(taken))
    colour = values.take(tokens, words.colours, taken)
    if colour_at and all(values.described(tokens, s, lang) for s, _ in colour_at):
        colour = []  # "the lounge light's looking awful yellow", "it's pitch black": how it is, not asked
    # "a warm orange", "more blue", "less yellow": a word right before a colour says what it is like
    white_words = {w for p in white_phrases for w in p}  # "a cooler white" is a white, not the colour
    before_colour = {s for s, p in colour_at if not set(p) <= white_words}
    if colour and any(s + len(p) in before_colour for s, p in white_at):
        white = None
    light_words = lang.kinds.get("light", ())
    if any(find(tokens[s + len(p) : s + len(p) + 1], light_words) for s, p in colour_at):
        return None  # "turn on the green light": a light called so, which this home has not
    minutes = values.minutes(tokens, taken, lang)
    percent = values.percent(tokens, taken, lang)
    if percent is None and level_alone is not None:
        percent = level_alone
        taken.update(range(len(tokens)))
    compared = values.compared(tokens, taken, lang)  # "more dark": a request, not a feeling
    felt = [(k, "down") for k, ps in lang.too_much.items() if find(tokens, ps, set(taken))]
    # "I can't hear myself think" is too loud: its words are no "can't hear" of too little
    much_at = {
        i
        for ps in lang.too_much.values()
        for s, p in find(tokens, ps, set(taken))
        for i in range(s, s + len(p))
    }
    felt += [(k, "up") for k, ps in lang.too_little.items() if find(tokens, ps, taken | much_at)]
    felt += values.felt(tokens, taken, lang) if not felt else []
    felt = compared or felt
    direction = None
    if len(felt) == 1:
        direction = felt[0][1]
    else:
        ups, downs = find(tokens, lang.up, set(taken)), find(tokens, lang.down, set(taken))
        if any(s + len(p) in before_colour for s, p in downs):
            return None  # "less yellow" is no colour to set
        ups = [(s, p) for s, p in ups if s + len(p) not in before_colour]  # "more blue" is blue
        if ups and downs and all(p in lang.again for _, p in ups):
            ups = []  # "even more dim": "more" says how much, "dim" which way
        if bool(ups) != bool(downs):
            direction = "up" if ups else "down"
    if repeat is not None and values.only_again(tokens, taken, lang):
        direction = repeat  # "dim it" - "a bit more": dimmer still
    by = values.step_size(tokens, lang) if direction and isinstance(percent, int) and percent > 0 else None
    if by is not None:
        percent = None  # "turn it up by 20 percent": 20 more, not 20
    # "hold the music", "kill the music": an action's words may hold the player's own name
    players = {i for s, p in named if words.kinds[words.devices[p]] == "music" for i in range(s, s + len(p))}
    action = values.one_of(tokens, lang.music_actions, taken - players)
    if action in ("pause", "stop"):
        genre, titles = [], []  # "pause the rock music": what plays, held; nothing new to play
    acted = {
        i
        for s, p in find(tokens, lang.music_actions.get(action or "", ()), set(taken))
        for i in range(s, s + len(p))
    }
    own_out = {  # "would you mind sorting that out": the verb's own "out", not off
        i
        for i, t in enumerate(tokens)
        if t in lang.word_sets["out_word"]
        and (
            set(tokens[max(0, i - 3) : i]) & set(lang.word_sets["own_out"])
            or (tokens[i - 1 : i] and tokens[i - 1] in lang.word_sets["own_out_next"])
        )
    }
    power = values.one_of(tokens, lang.power, taken | acted | own_out)  # "off you go" is no "off"
    if power == "off" and values.eased_off(tokens, lang):
        power, direction = None, direction or "down"  # "ease the diffuser off a bit": less, not off
    if power == "off" and isinstance(percent, int) and percent > 0:
        return None  # "turn off the light at 20": no level is off; it may be a time
    kind_words = {k for k, ps in lang.kinds.items() if find(tokens, ps, set(taken))}
    home_words = {  # whole one-word names only: "room" of "living room" names nothing alone
        p[0]
        for p in (*words.devices, *room_names, *words.scents, *words.genres, *words.colours)
        if len(p) == 1
    }
    kind_at = find(tokens, lang.device_nouns, set(taken))
    excepting_at = {i for s, p in find(tokens, lang.excepting) for i in range(s, s + len(p))}
    for start, p in [*rooms_found, *kind_at]:
        beside = [
            i for i in (start - 1, start + len(p)) if 0 <= i < len(tokens) and i not in taken | excepting_at
        ]
        if any(tokens[i] not in lang.known | home_words for i in beside):
            return None  # "the bedroom flibber", "the memory light": a device we do not know
    said = tuple(" ".join(p) for _, p in sorted([*named, *rooms_found]))
    if here_said and room:
        said = (*said, room)  # "same in here": here is our room
    valued = (titles, scent, genre, colour, white, minutes, percent, direction, action, power)
    if cut == 0 and any(v is not None and v != [] for v in valued):
        return None  # "not the kitchen to 50": what is wanted where is not clear
    if not any(v is not None and v != [] for v in valued):
        if cut == 0 and (excluded or excluded_rooms):
            in_rooms = [d for d, r in words.in_room.items() if r in excluded_rooms and d not in excluded]
            out = [*excluded, *in_rooms]
            return Frame(excluding=tuple(out), named=said)
        closed = tokens[-1:] and tokens[-1] in lang.follow_closers and len(tokens) > 1
        follow = values.also_said(tokens, lang) or carried or bool(closed)
        if follow and said and (devices or rooms):
            return Frame(targets=tuple(devices), follow_up=True, named=said)
        if said and devices and not rooms and not negated:
            return Frame(targets=tuple(devices), named=said, bare=True)
        return None
    if len(scent) > 1 or len(genre) > 1 or len(colour) > 1 or len(titles) > 1 or percent == values.TWO_VALUES:
        return None  # two scents, two colours: which was meant is a guess

    valued_kinds = {
        k for k, said in (("diffuser", scent), ("music", genre or titles), ("light", colour or white)) if said
    }
    if len(valued_kinds) == 1 and devices and all(words.kinds[d] not in valued_kinds for d in devices):
        # "sandalwood in the lounge": a device named for its place ("lounge" is the living room light);
        # "the diffuser with the orange smell" names no place: orange is no colour for its room's light
        if any(p not in room_names for _, p in named if cut is None or _ < cut):
            return None
        rooms += [words.in_room[d] for d in devices if words.in_room[d]]
        devices = []
    kinds = {words.kinds[d] for d in devices}
    if scent:
        kinds.add("diffuser")  # a duration alone is no scent ("focus for a couple of hours")
    if genre or titles or (action and action != "play"):
        kinds.add("music")
    if colour or white:
        kinds.add("light")
    if felt and len(felt) == 1 and felt[0][0] != "any":
        kinds.add(felt[0][0])
    if not kinds:
        kinds = set(kind_words)
    values_said = (titles, scent, genre, colour, white, minutes, percent, direction, action)
    only_power = power is not None and not any(v is not None and v != [] for v in values_said)
    if power is not None and only_power and has(tokens, lang.everything) and not (kinds - {"light"}):
        # "everything off in the lounge", "everything off but the kitchen": every device there, or
        # every one but those, whatever its kind ("the lounge" names a light, and its room)
        places = {*rooms, *(words.in_room[d] for d in devices)} - {""}
        kept_rooms = [
            words.in_room[words.devices[p]]
            for s, p in named
            if cut is not None and s > cut and p in room_words
        ]
        left = {*excluded_rooms, *kept_rooms}
        there = [
            d
            for d, r in words.in_room.items()
            if (r in places or not (places or devices)) and r not in left and d not in excluded
        ]
        if (places or cut is not None) and there:
            return Frame(targets=tuple(there), kind="mixed", power=power.upper(), named=said)
    if not kinds and rooms and (percent is not None or direction or power):
        kinds = {"light"}  # "the bedroom on half", "kitchen off": a room alone is its lights
    # "it", "them"; or a value said alone, briefly ("a bit stronger"): the last device acted on
    alone = (
        len(tokens) <= lang.alone_words
        and not (devices or rooms or kind_words or every)
        and all(t in lang.known or t.isdigit() or i in taken for i, t in enumerate(tokens))
    )
    # a request naming no device, room or "all" is for the device last acted on, if it is of the kind
    # ("and brightness to 25"); "the lights" are all of them
    known = all(t in lang.known or t.isdigit() or i in taken for i, t in enumerate(tokens))
    if going_on and not known and (direction or power or action):
        return None  # "…, the baby's finally down": talk beside the request, a level only said plainly
    recall = not (devices or rooms or every) and not has(tokens, lang.many) and (going_on or known)
    pointed = last if has(tokens, lang.pointers) or alone or recall else ()
    music_meant = {"music"} & (kind_words | {words.kinds[d] for d in (*devices, *pointed)})
    if action is not None and not (music_meant or alone or has(tokens, lang.music_only)):
        return None  # "concentrate for the next hour": "next" is no song unless the music is meant
    if not kinds and (percent is not None or direction or colour or power or minutes) and pointed:
        kinds = {words.kinds[pointed[0]]}
    if not kinds and action == "play":
        kinds = {"music"}
    if len(kinds) > 1 and power is not None and only_power and devices and not rooms and cut is None:
        # "kill the bedroom light and the music": each device named, switched as its kind is
        return Frame(targets=tuple(dict.fromkeys(devices)), kind="mixed", power=power.upper(), named=said)
    if len(kinds) != 1:
        return None
    kind = kinds.pop()
    if felt == [] and has(tokens, lang.being):
        return None  # "the kitchen light is on": how things are, not a request
    if heard:  # read from audio: a word nobody here knows may be the request, misheard
        unknown = [i for i, t in enumerate(tokens) if i not in taken and t not in lang.known | home_words]
        inferred = not (devices or rooms or kind_words or pointed)  # the values alone say which device
        if unknown and (unknown != [0] or (inferred and len(taken) + 1 >= len(tokens))):
            return None  # heard "Switch none of eucalyptus", "Mad room to maximum brightness"
    targets = words.targets(kind, devices, rooms, every, pointed, room)
    if len(targets) > 1 and not (devices or rooms or kind_words or has(tokens, lang.pointers)):
        return None  # "turn every bump red": a value alone never reaches several devices
    targets = [t for t in targets if t not in excluded and words.in_room[t] not in excluded_rooms]
    if not targets:
        return None
    recalled = not (devices or rooms or every) and tuple(targets) == tuple(pointed)
    if recalled and unplayed and kind != "music":
        return None  # a genre said is no level of the diffuser last acted on
    return Frame(
        targets=tuple(targets),
        kind=kind,
        power=None if power is None else power.upper(),
        percent=percent,
        direction=direction,
        by=by,
        colour=" ".join(colour[0]) if colour else None,
        white=white,
        scent=" ".join(scent[0]) if scent else None,
        genre="".join(genre[0]) if genre else None,
        title=words.titles[titles[0]] if titles else None,
        action=action,
        minutes=minutes,
        named=said,
        felt=bool(felt) and not compared and direction is not None,
        recalled=recalled,
    )
