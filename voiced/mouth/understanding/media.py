"""Music and diffuser handlers: play, pause, next, search, volume (clamped aloud), scents."""

from __future__ import annotations

import jellyfish

from voiced.language import Language, english, find
from voiced.language.replies import chain, say, the
from voiced.mouth.understanding import values
from voiced.mouth.understanding.grammar import human
from voiced.mouth.understanding.home import WHICH_ONE, Home, Match, Outcome, diffuser, music

DEFAULT_VOLUME = 50
VOLUME_STEP = 10
MUSIC = ("music",)
DIFFUSER = ("diffuser",)
ACTION_SAID = {action: say(f"music_{action}") for action in ("pause", "stop", "next", "previous")}
_PLAIN = english().word_sets["plain_music"]


def _player(home: Home, match: Match) -> str | None:
    """The one player a media request is for (the first of the room's, or of the home's)."""
    picked = home.pick(match, MUSIC)
    if picked is None or not picked.names:
        return None
    return picked.names[0]


def music_action(home: Home, match: Match, action: str) -> Outcome | None:
    name = _player(home, match)
    if name is None:
        return None
    genre = match.get("genre")
    if action == "play":
        said = say("playing_genre", genre=genre) if genre else say("playing_music")
        return Outcome(said, [music(name, action="play", genre=genre)], (name,))
    return Outcome(ACTION_SAID[action], [music(name, action=action)], (name,))


def search_and_play(home: Home, match: Match) -> Outcome | None:
    name = _player(home, match)
    if name is None:
        return None
    words = str(match.get("search_query", match.get("query", ""))).lower().split()
    plain = " ".join(words)
    while words and words[0] in english().search_openers:
        words.pop(0)
    spoken = {w for n in home.of_kinds(MUSIC) for w in (*n.split("_"), *home.registry.get(n).aliases)}
    while words and words[-1].rstrip("s") in spoken:  # "... on the speaker": where, not what
        words.pop()
        while words and words[-1] in _WHERE:
            words.pop()
    while (
        len(words) > 1 and words[-1] in english().title_closers
    ):  # "play Ed Sheeran instead": what, not a part of it
        words.pop()
    timed: set[int] = set()
    if values.minutes(words, timed, english()) is not None and max(timed) == len(words) - 1:
        del words[min(timed) :]  # "jazz for 20 minutes": how long is no part of what to play
    genres = {g.lower() for g in getattr(home.registry.get(name), "genres", [])}
    level = _level(words, english())
    if level is not None:  # "jazz at 30 percent": the play, and the volume
        what, volume, change = level
        genre = _genre(" ".join(what), genres)
        if genre is not None or change is None:  # "bring me up" is a title, "jazz louder" a level
            return _played_at(home, name, genre, " ".join(what), volume, change)
    query = " ".join(words)
    library = getattr(home.registry.get(name), "library", [])
    genre = _genre(query, genres) or _genre_among(words, genres, library)
    if genre is not None:
        return Outcome(say("playing_genre", genre=genre), [music(name, action="play", genre=genre)], (name,))
    if not query and not _asks_for_music(plain.split(), spoken):
        return None  # "play some of the on the speaker": something was named, and lost to the ear
    if not query or plain in _PLAIN:
        return Outcome(say("playing_music"), [music(name, action="play")], (name,))
    kind = match.get("media_class", match.get("media_kind"))
    named = kind in ("album", "artist", "playlist")
    said = say("playing_kind", kind=kind, query=query) if named else say("playing_query", query=query)
    return Outcome(said, [music(name, action="play", query=query)], (name,))


def _level(words: list[str], lang: Language) -> tuple[list[str], int | None, int | None] | None:
    """A search ending in a level for what it names ("jazz at 30 percent", "jazz a bit louder"):
    the words of what to play, and the volume or the change to it; None when it ends in no level
    (a title may hold such words: "turn down for what")."""
    taken: set[int] = set()
    settings = lang.word_sets["settings"]
    while len(words) > 1 and words[-1] in settings:  # "jazz at 25 percent volume"
        words = words[:-1]
    volume = values.percent(words, taken, lang)
    ups, downs = find(words, lang.up), find(words, lang.down)
    way = (1 if ups else -1) if bool(ups) != bool(downs) else 0
    if way and not any(_ends_with_step(words[s + len(p) :], lang) for s, p in (*ups, *downs)):
        way = 0
    by = values.step_size(words, lang) if way and isinstance(volume, int) and volume > 0 else None
    change = None
    if volume is not None and volume != values.TWO_VALUES and taken and max(taken) == len(words) - 1:
        cut = min(taken)
    elif way:  # "jazz louder", "jazz 20 percent louder": a step from where it is
        volume, change = None, (by or VOLUME_STEP) * way
        cut = min(start for start, _ in [*ups, *downs, *((i, ()) for i in taken)])
    else:
        return None
    what = words[:cut]
    while what:  # "jazz at about 30", "jazz at volume 30", "jazz a bit louder": how the level is said
        said_how = [p for p in lang.degree if tuple(what[-len(p) :]) == p]
        if said_how:
            del what[-len(said_how[0]) :]
        elif what[-1] in (*lang.where_played, *lang.approximately) or values.names_a_level(what[-1], lang):
            what.pop()
        else:
            break
    return (what, volume, change) if what else None


def _ends_with_step(rest: list[str], lang: Language) -> bool:
    """Nothing after a way ("jazz louder"), or only how far ("jazz louder by 20")."""
    if not rest:
        return True
    spans = list(values.number_spans(rest, lang))
    return (
        rest[0] in lang.step_openers
        and len(spans) == 1
        and spans[0][0] == 1
        and (values.past_percent(rest, spans[0][1], lang) == len(rest))
    )


def _played_at(
    home: Home, name: str, genre: str | None, query: str, volume: int | None, change: int | None
) -> Outcome:
    """Play the genre (or search for the rest) at the level said with it."""
    if change is None:
        volume = max(0, min(100, volume or 0))
        level = say("framed_volume", volume=volume)
    else:
        volume = max(0, min(100, _volume_now(home, name) + change))
        level = say("framed_louder" if change > 0 else "framed_quieter")
    playing = say("framed_playing", what=genre or query)
    fields = {"genre": genre} if genre is not None else {"query": query}
    said = say("framed_done", [the(human(name))], said=chain([playing, level]))
    return Outcome(said, [music(name, action="play", volume=volume, **fields)], (name,))


_MUSIC_WORDS = english().word_sets["music_words"]
_WHERE = english().word_sets["where_music"]


def _asks_for_music(words: list[str], players: set[str]) -> bool:
    """Whether words that name no title still ask for music: "some music", "on the speaker"."""
    return any(w in _MUSIC_WORDS for w in words) or all(
        w in _WHERE or w.rstrip("s") in players for w in words
    )


def _genre(query: str, genres: set[str]) -> str | None:
    """A search that names a genre plays the genre: "low fi beats", "classic", "jazz on the speeker"."""
    lang = english()
    words = query.split()
    for cut in lang.where_played:
        if cut in words[1:] and not any(values.number_spans(words[words.index(cut, 1) :], lang)):
            words = words[: words.index(cut, 1)]  # "jazz on the speaker"; "jazz at 25 percent …" is more
    while words and words[-1] in lang.vague_music:
        words.pop()
    joined = "".join(words)
    for genre in sorted(genres):
        if joined == genre or (len(joined) >= 4 and (genre.startswith(joined) or _close(joined, genre))):
            return genre
    return None


def _genre_among(words: list[str], genres: set[str], library: list[str]) -> str | None:
    """ "Some relaxing jazz", "a bit of jazz while I cook": one genre among words that are no part
    of a title in the library plays the genre; the other words say how, not what."""
    said = [g for g in genres if find(words, [tuple(g.split())])]
    query = " ".join(words)
    if len(said) != 1 or any(t.lower() in query or query in t.lower() for t in library):
        return None
    lang = english()
    if find(words, [*lang.up, *lang.down, *(tuple(w.split()) for w in lang.word_sets["settings"])]):
        return None  # "classical real soft, 'bout twenty on the volume": a level we did not read
    return said[0]


def _close(heard: str, genre: str) -> bool:
    return jellyfish.levenshtein_distance(heard, genre) <= (1 if len(genre) <= 5 else 2)


def _volume_now(home: Home, name: str) -> int:
    try:
        return int(home.state(name).get("volume", DEFAULT_VOLUME))
    except (TypeError, ValueError):
        return DEFAULT_VOLUME


def set_volume(home: Home, match: Match, value: float) -> Outcome | None:
    name = _player(home, match)
    if name is None:
        return None
    volume = round(value)
    note = ""
    if volume > 100:
        note, volume = " " + say("volume_over_max", asked=volume), 100
    said = say("setting_volume", volume=volume) + note
    return Outcome(said, [music(name, volume=volume)], (name,))


def volume_step(home: Home, match: Match) -> Outcome | None:
    name = _player(home, match)
    if name is None:
        return None
    raw = match.get("volume_step", match.get("direction"))
    if raw in ("up", "down"):
        change = VOLUME_STEP if raw == "up" else -VOLUME_STEP
    else:
        try:
            change = round(float(raw))
        except (TypeError, ValueError):
            return None
    volume = max(0, min(100, _volume_now(home, name) + change))
    said = say("music_up" if change > 0 else "music_down")
    return Outcome(said, [music(name, volume=volume)], (name,))


def mute(home: Home, match: Match, on: bool, remembered: dict[str, int]) -> Outcome | None:
    name = _player(home, match)
    if name is None:
        return None
    if on:
        remembered[name] = _volume_now(home, name) or DEFAULT_VOLUME
        return Outcome(say("music_mute"), [music(name, volume=0)], (name,))
    volume = remembered.pop(name, DEFAULT_VOLUME)
    return Outcome(say("music_unmute"), [music(name, volume=volume)], (name,))


def _diffuser(home: Home, match: Match) -> str | None:
    value = match.get("diffuser")
    if isinstance(value, str):
        return value.split(",")[0]
    picked = home.pick(match, DIFFUSER)
    return picked.names[0] if picked is not None and picked.names else None


def diffuser_state(home: Home, match: Match, state: str) -> Outcome | None:
    name = _diffuser(home, match)
    if name is None:
        return None
    minutes = match.get("minutes")
    if minutes is not None:
        command = diffuser(name, state=state, duration_min=round(float(minutes)))
        said = say("diffuser_for", count=round(float(minutes)), device=human(name))
        return Outcome(said, [command], (name,))
    said = say("device_turning", state=state.lower(), device=human(name))
    return Outcome(said, [diffuser(name, state=state)], (name,))


def diffuser_scent(home: Home, match: Match) -> Outcome | None:
    name = _diffuser(home, match)
    if name is None:
        return None
    scent = str(match.get("scent"))
    command = diffuser(name, state="ON", scent=scent)
    return Outcome(say("device_setting_to", device=human(name), value=scent), [command], (name,))


def diffuser_intensity(home: Home, match: Match, limit: int) -> Outcome | None:
    name = _diffuser(home, match)
    if name is None:
        return None
    pct = round(float(match.get("pct")))
    if pct <= 0:
        said = say("device_turning", state="off", device=human(name))
        return Outcome(said, [diffuser(name, state="OFF")], (name,))
    note = ""
    if pct > limit:
        note, pct = " " + say("diffuser_over_limit", asked=pct, limit=limit), limit
    command = diffuser(name, state="ON", intensity=pct)
    said = say("device_setting_percent", device=human(name), percent=pct) + note
    return Outcome(said, [command], (name,))


SCENT_STEP = 20  # percent a "stronger" / "less scent" moves the diffuser
SCENT_LOWEST = 10


def diffuser_step(home: Home, match: Match, limit: int) -> Outcome | None:
    """Stronger or weaker than the diffuser is now; "make it stronger" where "it" is no diffuser asks."""
    if match.get("pointed"):
        return Outcome(WHICH_ONE, acted=False)  # "it" was resolved to the diffuser before this
    name = _diffuser(home, match)
    if name is None:
        return None
    up = match.get("direction") == "up"
    state = home.state(name)
    if not state:
        home.unknown.add(name)
    try:
        now = int(state.get("intensity", 50))
    except (TypeError, ValueError):
        now = 50
    off = str(state.get("state", "ON")).upper() == "OFF"
    if not up and off:
        return Outcome(say("device_is_off", device=human(name)), [], (name,), acted=False)
    new = min(limit, now + SCENT_STEP) if up else max(SCENT_LOWEST, now - SCENT_STEP)
    if new == now and not off:
        key = "scent_at_limit" if up else "scent_at_lowest"
        said = say(key, device=human(name), limit=limit, lowest=SCENT_LOWEST)
        return Outcome(said, [], (name,), acted=False)
    command = diffuser(name, state="ON", intensity=new)
    said = say("scent_stronger" if up else "scent_weaker", device=human(name), percent=new)
    return Outcome(said, [command], (name,))


def bare_stop(home: Home, match: Match) -> Outcome | None:
    """ "Stop": the music, when it plays (asked for first when it has not reported)."""
    name = _player(home, match)
    if name is None:
        return None
    state = home.states(name)
    if state is None:
        home.unknown.add(name)
    elif str(state.get("state", "")).lower() != "playing":
        return Outcome(say("nothing_to_stop"), targets=(name,), acted=False)
    return Outcome(ACTION_SAID["stop"], [music(name, action="stop")], (name,))
