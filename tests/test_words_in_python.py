"""No English word list is written in the understanding package: the words it reads are
voiced/language/en.yaml's (`english()`), so a second language is a second file.

Every set, tuple or list literal in voiced/mouth/understanding/*.py is read with `ast`; one of three or
more strings, each lower-case words only ("every", "this one"), is refused unless listed below with
why it is no English. An entry that matches nothing fails too, so the list cannot keep what the code
no longer has. Single words compared in code (`== "the"`) are not caught here.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "voiced" / "mouth" / "understanding"
LEAST = 3

# (file, the list's first item): why it is no English word list
ALLOWED: dict[tuple[str, str], str] = {
    ("answers.py", "light"): "kinds of device, as the device files name them",
    ("switching.py", "light"): "kinds of device, as the device files name them",
    ("scoping.py", "light"): "kinds of device, as the device files name them",
    ("dialogue.py", "brightness"): "a device state's fields",
    ("lights.py", "name"): "Home Assistant's slot names",
    ("media.py", "pause"): "the music player's actions",
    ("media.py", "album"): "the music library's kinds of search",
}


def word_lists(root: Path = ROOT) -> list[tuple[str, int, list[str]]]:
    """(file, line, items) for every literal in `root`'s modules that is a list of English words."""
    found = []
    for path in sorted(root.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Set | ast.Tuple | ast.List) or len(node.elts) < LEAST:
                continue
            items = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if len(items) == len(node.elts) and all(_words(item) for item in items):
                found.append((path.name, node.lineno, items))
    return found


def _words(item: str) -> bool:
    return item == item.lower() and item.replace(" ", "").replace("'", "").isalpha()


def test_no_word_list_is_written_in_python() -> None:
    written = [
        f"{name}:{line}: {items}" for name, line, items in word_lists() if (name, items[0]) not in ALLOWED
    ]
    assert written == [], "English words belong in voiced/language/en.yaml:\n" + "\n".join(written)


def test_every_allowed_list_is_still_there() -> None:
    used = {(name, items[0]) for name, _, items in word_lists()}
    assert sorted(set(ALLOWED) - used) == []


def test_a_word_list_in_python_is_found(tmp_path: Path) -> None:
    (tmp_path / "words.py").write_text(
        'SMALL = frozenset({"the", "a", "an"})\n'
        'SLOTS = ("name2", "area2", "domain2")\n'
        'TWO = ("on", "off")\n'
        'SAID = ["Turn on", "the light", "please"]\n'
    )
    assert word_lists(tmp_path) == [("words.py", 1, ["the", "a", "an"])]
