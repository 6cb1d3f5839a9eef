"""The home's words, read once from the declared devices: the one vocabulary the ear's hints,
the mouth's hearing corrections and the brain's reading of preferences all share."""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass

from voiced.devices.colours import COLORS
from voiced.devices.registry import DeviceRegistry
from voiced.language import english


@dataclass(frozen=True)
class HomeVocabulary:
    scents: tuple[str, ...]
    genres: tuple[str, ...]
    rooms: tuple[str, ...]
    devices: tuple[str, ...] = ()  # device names (snake_case)
    aliases: tuple[str, ...] = ()
    light_rooms: tuple[str, ...] = ()
    colours: tuple[str, ...] = tuple(COLORS)
    named: tuple[tuple[str, str], ...] = ()  # (a way to say a device, its name): "bedroom light", aliases
    titles: tuple[str, ...] = ()  # the music devices' libraries: artists, albums, songs

    @classmethod
    def of(cls, registry: DeviceRegistry) -> HomeVocabulary:
        """Read once per version of the registry (every request reads it, often more than once)."""
        kept = _read.get(registry)
        if kept is None or kept[0] != registry.version:
            kept = _read[registry] = (registry.version, cls._of(registry))
        return kept[1]

    @classmethod
    def _of(cls, registry: DeviceRegistry) -> HomeVocabulary:
        return cls(
            scents=_sorted(s for d in registry.by_kind("diffuser") for s in getattr(d, "scents", [])),
            genres=_sorted(g for d in registry.by_kind("music") for g in getattr(d, "genres", [])),
            rooms=_sorted(d.room for d in registry if d.room),
            devices=tuple(d.name for d in registry),
            aliases=tuple(dict.fromkeys(a for d in registry for a in d.aliases)),
            light_rooms=_sorted(d.room for d in registry.by_kind("light") if d.room),
            named=tuple(
                (text.lower(), d.name)
                for d in registry
                for text in dict.fromkeys([_spoken(d.name), *d.aliases])
            ),
            titles=tuple(
                dict.fromkeys(t for d in registry.by_kind("music") for t in getattr(d, "library", []))
            ),
        )

    def own_words(self) -> dict[str, str]:
        """Each word of a device's name or aliases that no other device's has ("lamp" of the desk
        lamp beside the room lights) and that names no room, colour, scent or genre: its device."""
        owners: dict[str, set[str]] = {}
        for text, name in self.named:
            for word in re.findall(r"[a-z]+", text.lower()):
                owners.setdefault(word, set()).add(name)
        lang = english()
        skip = {*lang.determiners, *(w for p in lang.room_words for w in p)}
        skip |= {w for text in (*self.rooms, *self.scents, *self.genres, *self.colours) for w in text.split()}
        return {w: next(iter(n)) for w, n in owners.items() if len(n) == 1 and len(w) > 2 and w not in skip}

    @property
    def terms(self) -> tuple[str, ...]:
        """Every word or phrase that names something in this home."""
        return (*self.scents, *self.genres, *self.rooms, *(_spoken(d) for d in self.devices))


_read: weakref.WeakKeyDictionary[DeviceRegistry, tuple[int, HomeVocabulary]] = weakref.WeakKeyDictionary()


def _spoken(name: str) -> str:
    return name.replace("_", " ")


def _sorted(words: object) -> tuple[str, ...]:
    return tuple(sorted(set(words)))  # type: ignore[call-overload]
