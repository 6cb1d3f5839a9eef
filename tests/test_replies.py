"""Every reply template in voiced/language/replies_en.yaml, said of one thing, of several and, where
the list said can be empty, of none.

Each is rendered with each of its cases in tests/replies_cases.yaml and the sentence is checked word
for word: a verb that does not agree ("the lights is"), a plural for one ("1 plans"), a piece missing.
A template added to the file without its cases for one and for many fails
`test_every_template_is_checked`; every rendering is also checked for what no sentence holds (a field
left unfilled, a doubled space, a space before a stop, a plural after "1").
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from voiced.errors import ConfigError
from voiced.language.replies import Replies, replies, say
from voiced.yamlfile import load_yaml

CASES: dict[str, dict[str, dict[str, Any]]] = load_yaml(Path(__file__).with_name("replies_cases.yaml"))
FORMS = ("one", "many", "none")
# what no rendering holds: a field left unfilled, a doubled or stray space, a plural after "1"
BROKEN = re.compile(r"[{}]|  | [.,;:?!]|^\s|\s$|\b1 (?:plans|steps|seconds|minutes|hours|commands|lights)\b")


@pytest.mark.parametrize("key", sorted(CASES))
def test_each_template_reads_right_for_one_and_for_many(key: str) -> None:
    for form in FORMS:
        case = CASES[key].get(form)
        if case is None:
            continue
        said = say(key, case.get("things", []), count=case.get("count"), **case.get("fields", {}))
        assert said == case["said"], (key, form)
        assert not BROKEN.search(said), (key, form, said)


def _count(case: dict[str, Any]) -> int:
    count = case.get("count")
    return len(case.get("things", [])) if count is None else int(count)


def test_every_template_is_checked() -> None:
    assert sorted(replies().templates) == sorted(CASES)
    for key, cases in CASES.items():
        assert {"one", "many"} <= set(cases) <= set(FORMS), key
        template = replies().templates[key]
        if isinstance(template, str):
            continue
        # a template said of a number or a list: its cases say one of them, several, and none if it can
        assert (_count(cases["one"]), _count(cases["many"]) > 1) == (1, True), key
        assert ("none" in template) == ("none" in cases), key
        assert "none" not in cases or _count(cases["none"]) == 0, key


def test_a_template_with_forms_has_both(tmp_path: Path) -> None:
    bad = tmp_path / "replies.yaml"
    bad.write_text('lonely:\n  one: "{things} is here."\n', encoding="utf-8")
    with pytest.raises(ValueError, match="lonely must be a sentence, or its 'one' and 'many' forms"):
        Replies.load(bad)
    bad.write_text("twice: a\ntwice: b\n", encoding="utf-8")
    with pytest.raises(ConfigError):
        Replies.load(bad)
