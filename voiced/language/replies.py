"""Replies as data (`replies_en.yaml`): a template said of one thing and of several.

`say("device_offline", ["the kitchen light", "the bedroom light"])` picks the template's `many` form
(its `one` form for a single thing, or when `count` is 1; its `none` form, where it has one, for
none), joins the things with "and" as `{things}` (with "or" as `{either}`: "the bedroom or the
kitchen"), fills the other fields and gives a whole sentence its capital (a piece of one, "in 5
seconds", keeps none). A template without forms is said as it is.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from voiced.language import HERE
from voiced.yamlfile import load_yaml

Template = str | Mapping[str, str]


def capital(text: str) -> str:
    return text[:1].upper() + text[1:]


@dataclass(frozen=True)
class Replies:
    templates: Mapping[str, Template]

    @classmethod
    def load(cls, path: Path) -> Replies:
        raw = load_yaml(path)
        for key, value in raw.items():
            forms = set(value) if isinstance(value, dict) else set()
            if not isinstance(value, str) and not {"one", "many"} <= forms <= {"one", "many", "none"}:
                raise ValueError(
                    f"{path.name}: {key} must be a sentence, or its 'one' and 'many' forms (and 'none')"
                )
        return cls(raw)

    def form(self, key: str, count: int) -> str:
        template = self.templates[key]
        if isinstance(template, str):
            return template
        if count == 0 and "none" in template:
            return template["none"]
        return template["one"] if count == 1 else template["many"]

    def join(self, items: Sequence[str], either: bool = False) -> str:
        """ "a", "a and b", "a, b and c" ("or" when `either`): the joining words are templates too."""
        if len(items) < 2:
            return "".join(items)
        return self.form("list_or" if either else "list_and", 2).format(
            first=", ".join(items[:-1]), last=items[-1]
        )

    def say(self, key: str, things: Sequence[str] = (), *, count: int | None = None, **fields: object) -> str:
        """The template `key` for `things` (`count` of them: len(things) unless given)."""
        count = len(things) if count is None else count
        form = self.form(key, count)
        text = form.format(things=self.join(things), either=self.join(things, True), count=count, **fields)
        return capital(text) if text.endswith((".", "?", "!")) else text  # a sentence, not a piece of one


@functools.cache
def replies() -> Replies:
    return Replies.load(HERE / "replies_en.yaml")


def join(items: Sequence[str], either: bool = False) -> str:
    return replies().join(items, either)


def chain(items: Sequence[str]) -> str:
    """ "a and b and c": the pieces of one reply, each joined to the one before."""
    return functools.reduce(lambda said, piece: join([said, piece]), items[1:], items[0]) if items else ""


def knows(key: str) -> bool:
    return key in replies().templates


def the(device: str) -> str:
    """A device as a reply names it: "the kitchen light"."""
    return replies().say("the_device", device=device)


def say(key: str, things: Sequence[str] = (), *, count: int | None = None, **fields: object) -> str:
    return replies().say(key, things, count=count, **fields)
