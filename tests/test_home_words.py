"""What people call things at home, and words that must not act: plain asserts on the local intents."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from voiced.devices.model import DiffuserSet, LightSet, MusicSet
from voiced.devices.registry import DeviceRegistry
from voiced.mouth.intents import LocalIntentAgent
from voiced.vibe.presets import preset_moods

REGISTRY = DeviceRegistry.load(Path(__file__).parent.parent / "devices")
STATES = {"music": {"state": "playing", "volume": 50}, "diffuser": {"state": "ON", "intensity": 50}}


def agent(room: str | None = "bedroom") -> LocalIntentAgent:
    return LocalIntentAgent(
        REGISTRY, STATES.get, room=room, now=lambda: datetime(2026, 11, 28, 15), moods=preset_moods()
    )


def test_pet_names_of_the_devices() -> None:
    assert agent().understand("turn the big light on").commands == (
        LightSet(device="bedroom_light", state="ON"),
    )
    (scent,) = agent().understand("can you turn the smelly thing off").commands
    assert isinstance(scent, DiffuserSet) and scent.state == "OFF"
    (music,) = agent().understand("turn the jukebox off").commands
    assert isinstance(music, MusicSet) and music.action == "stop"


def test_open_and_close_a_light() -> None:
    opened = agent().understand("please, open the light in the kitchen").commands
    assert opened == (LightSet(device="kitchen_light", state="ON"),)
    for refused in ("open the windows in the kitchen", "close the door", "open the blinds"):
        assert agent().understand(refused).commands == (), refused


def test_a_genre_said_whole_is_no_title_with_an_s() -> None:
    (music,) = agent().understand("get the jukebox going, some blues").commands
    assert isinstance(music, MusicSet) and music.genre == "blues" and music.query is None
    (album,) = agent().understand("play Kind of Blue").commands
    assert isinstance(album, MusicSet) and album.query == "kind of blue"


def test_a_reminder_and_the_old_days_change_nothing() -> None:
    assert agent().understand("remind me to buy more peppermint oil").commands == ()
    said = agent().understand("back in my day we lit candles, not these clever lights")
    assert said.commands == () and said.scene is None


def test_a_device_named_then_what_to_do_with_it() -> None:
    (light,) = agent(room=None).understand("kitchen. 30%.").commands
    assert isinstance(light, LightSet) and light.device == "kitchen_light" and light.brightness == 76
    (scent,) = agent(room=None).understand("the diffuser, make it more strong").commands
    assert isinstance(scent, DiffuserSet) and scent.intensity is not None and scent.intensity > 50
    assert agent(room=None).understand("kitchen, bedroom").commands == ()  # two names, nothing asked
