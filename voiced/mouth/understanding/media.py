"""Music and diffuser handlers: play, pause, next, search, volume (clamped aloud), scents."""

from __future__ import annotations

import jellyfish

from voiced.language import english
from voiced.language.replies import say
from voiced.mouth.understanding.grammar import human
from voiced.mouth.understanding.home import WHICH_ONE, Home, Match, Outcome, diffuser, music

DEFAULT_VOLUME = 50
VOLUME_STEP = 10
MUSIC = ("music",)
DIFFUSER = ("diffuser",)
ACTION_SAID = {action: say(f"music_{action}") for action in ("pause", "stop", "next", "previous")}
_PLAIN = ("music", "something", "some music", "anything", "a song", "songs")


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
        while words and words[-1] in ("on", "in", "the", "my", "through"):
            words.pop()
    query = " ".join(words)
    genres = {g.lower() for g in getattr(home.registry.get(name), "genres", [])}
    genre = _genre(query, genres)
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


_MUSIC_WORDS = frozenset(("music", "song", "songs", "something", "anything", "track", "tracks", "tunes"))
_WHERE = frozenset(("on", "in", "the", "my", "through"))


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
        if cut in words[1:]:
            words = words[: words.index(cut, 1)]
    while words and words[-1] in lang.vague_music:
        words.pop()
    joined = "".join(words)
    for genre in sorted(genres):
        if joined == genre or (len(joined) >= 4 and (genre.startswith(joined) or _close(joined, genre))):
            return genre
    return None


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
