"""Which handler carries out which intent (HA's and ours)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from voiced.language import english
from voiced.mouth.understanding import answers, lights, media, switching
from voiced.mouth.understanding.home import WHICH_ONE, Home, Match, Outcome

RESET_SCENE = "\x00reset"  # the scene value "never mind" stands for
Handler = Callable[[Home, Match], Outcome | None]


def _scene(match: Match) -> Outcome:
    """A scene is the vibe agent's work: a preset name, the user's words, or a reset."""
    if match.intent == "ResetVibe":
        return Outcome("", scene=RESET_SCENE)
    if match.intent == "Scene":
        return Outcome("", scene=str(match.get("scene")), farewell=bool(match.get("farewell")))
    words = str(match.get("mood")).split()
    while words and words[0] in english().word_sets["mood_openers"]:  # a looser template won
        words.pop(0)
    return Outcome("", scene=" ".join(words))


def _relative(home: Home, match: Match, step: int, scent_limit: int) -> Outcome | None:
    """ "Lower", "higher": the kind of device just acted on decides what moves."""
    kinds = {home.kind_of(n) for n in home.last if n in {d.name for d in home.registry}}
    up = match.get("direction") == "up"
    if kinds == {"light"}:
        return lights.step(home, match, step, up)
    if kinds == {"music"}:
        return media.volume_step(home, match)
    if kinds == {"diffuser"}:
        return media.diffuser_step(home, match, scent_limit)
    return Outcome(WHICH_ONE, acted=False)


def handlers(step: int, scent_limit: int, now: Callable[[], datetime]) -> dict[str, Handler]:
    muted: dict[str, int] = {}
    return {
        "HassTurnOn": lambda h, m: switching.turn(h, m, True),
        "HassTurnOff": lambda h, m: switching.turn(h, m, False),
        "HassLightSet": lights.light_set,
        "LightBrightness": lights.light_set,
        "LightColor": lights.color,
        "LightStep": lambda h, m: lights.step(h, m, step, m.get("direction") == "up"),
        "LightWarmth": lambda h, m: lights.warmth(h, m, m.get("direction") == "warm"),
        "LightColorQuestion": answers.light_colour,
        "WhatIsOn": answers.what_is_on,
        "DiffuserStep": lambda h, m: media.diffuser_step(h, m, scent_limit),
        "Stop": media.bare_stop,
        "Relative": lambda h, m: _relative(h, m, step, scent_limit),
        "LightState": lambda h, m: lights.light_state(h, m, str(m.get("state"))),
        "AllLightsBut": lambda h, m: switching.all_lights_but(h, m, m.get("state") == "ON"),
        "TurnMany": lambda h, m: switching.turn(h, m, m.get("state") == "ON"),
        "Everything": lambda h, m: switching.everything(h, m, m.get("state") == "ON"),
        "HassMediaPause": lambda h, m: media.music_action(h, m, "pause"),
        "HassMediaUnpause": lambda h, m: media.music_action(h, m, "play"),
        "HassMediaNext": lambda h, m: media.music_action(h, m, "next"),
        "HassMediaPrevious": lambda h, m: media.music_action(h, m, "previous"),
        "MusicAction": lambda h, m: media.music_action(h, m, str(m.get("action"))),
        "HassMediaSearchAndPlay": media.search_and_play,
        "MusicSearch": media.search_and_play,
        "HassSetVolume": lambda h, m: media.set_volume(h, m, float(m.get("volume_level"))),
        "MusicVolume": lambda h, m: media.set_volume(h, m, float(m.get("vol"))),
        "HassSetVolumeRelative": media.volume_step,
        "MusicVolumeStep": media.volume_step,
        "HassMediaPlayerMute": lambda h, m: media.mute(h, m, True, muted),
        "HassMediaPlayerUnmute": lambda h, m: media.mute(h, m, False, muted),
        "DiffuserState": lambda h, m: media.diffuser_state(h, m, str(m.get("state"))),
        "DiffuserScent": media.diffuser_scent,
        "DiffuserIntensity": lambda h, m: media.diffuser_intensity(h, m, scent_limit),
        "HassGetState": answers.get_state,
        "WhatIsPlaying": answers.what_is_playing,
        "LightLevel": answers.light_level,
        "WhatScent": answers.what_scent,
        "StateQuestion": lambda h, m: answers.get_state(h, m, whole=True),
        "VolumeLevel": answers.volume_level,
        "WhatDay": lambda h, m: answers.current_date(now()),
        "Help": lambda h, m: answers.help_text(h),
        "HassGetCurrentTime": lambda h, m: answers.current_time(now()),
        "HassGetCurrentDate": lambda h, m: answers.current_date(now()),
        "Scene": lambda h, m: _scene(m),
        "VibeRequest": lambda h, m: _scene(m),
        "ResetVibe": lambda h, m: _scene(m),
    }
