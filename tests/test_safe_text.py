"""Text from outside made safe once (voiced/safe_text.py), and the one log formatter (voiced/logs.py)."""

from __future__ import annotations

import io
import json
import logging

import pytest

from voiced.ear.utterance import Heard
from voiced.logs import SafeFormatter
from voiced.safe_text import REPLACEMENT, UnsafeJson, clean, clean_value, decode, depth, escape, loads


def test_lone_surrogates_and_control_characters_become_safe_and_encodable() -> None:
    dirty = "lights\ud800 on\x00\x1b[2J\u2028now\x7f"
    cleaned = clean(dirty)
    cleaned.encode("utf-8")  # would raise UnicodeEncodeError on a lone surrogate
    assert cleaned == f"lights{REPLACEMENT} on{REPLACEMENT}{REPLACEMENT}[2J{REPLACEMENT}now{REPLACEMENT}"
    assert clean("kitchen\nlight\tplease\r") == "kitchen light please "
    assert clean("first line\nsecond\ud83d", keep_breaks=True) == f"first line\nsecond{REPLACEMENT}"
    assert clean("Turn on the kitchen light.") == "Turn on the kitchen light."
    assert clean("café — ☕ 😀") == "café — ☕ 😀"  # real characters, pairs included, are kept


def test_json_values_are_cleaned_keys_too() -> None:
    value = json.loads('{"na\\ud800me": ["x\\u0000", {"k": "\\udfff"}], "n": 3}')
    assert clean_value(value) == {f"na{REPLACEMENT}me": [f"x{REPLACEMENT}", {"k": REPLACEMENT}], "n": 3}
    assert decode(b"caf\xc3\xa9 \xff\n") == f"café {REPLACEMENT} "


def test_bounded_json_refuses_deep_nesting_and_huge_numbers_before_python_does() -> None:
    with pytest.raises(UnsafeJson, match="8000 levels deep"):
        loads("[" * 8000 + "]" * 8000)
    with pytest.raises(UnsafeJson, match="5000 digits"):
        loads('{"n": ' + "9" * 5000 + "}")
    with pytest.raises(UnsafeJson, match="NaN"):
        loads('{"n": NaN}')
    with pytest.raises(json.JSONDecodeError):
        loads("{")
    assert loads('{"text": "\\ud800 lights", "deep": [[["ok"]]], "n": -12.5e3}') == {
        "text": f"{REPLACEMENT} lights",
        "deep": [[["ok"]]],
        "n": -12500.0,
    }
    assert depth('[["a\\"[[[", {"b": "]]]"}]]') == 3  # brackets inside strings do not count


def test_every_turn_heard_or_typed_is_cleaned_where_it_is_made() -> None:
    heard = Heard("turn on\ud800 the light\n", 0.0, False, alternatives=("x\x1b",))
    assert heard.text == f"turn on{REPLACEMENT} the light " and heard.alternatives == (f"x{REPLACEMENT}",)


def _formatted(logger: logging.Logger, emit: object) -> str:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(SafeFormatter("%(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)
    logger.propagate = False
    try:
        emit()  # type: ignore[operator]
    finally:
        logger.removeHandler(handler)
    return stream.getvalue()


def test_no_argument_or_message_can_forge_a_log_line() -> None:
    logger = logging.getLogger("test.forgery")
    forged = "a\nERROR voiced.plans: forged\r\x1b[31m\ud800"

    def emit() -> None:
        logger.warning("refused step %s", forged)
        logger.warning("built by concatenation: " + forged)
        try:
            raise ValueError(forged)
        except ValueError:
            logger.exception("step %d failed", 2)

    text = _formatted(logger, emit)
    lines = text.splitlines()
    at_margin = [line for line in lines if not line.startswith(" ")]
    assert at_margin == [
        "WARNING test.forgery: refused step a\\x0aERROR voiced.plans: forged\\x0d\\x1b[31m\\ud800",
        "WARNING test.forgery: built by concatenation: a\\x0aERROR voiced.plans: forged\\x0d\\x1b[31m\\ud800",
        "ERROR test.forgery: step 2 failed",
    ]
    assert "    Traceback (most recent call last):" in lines
    assert "    ERROR voiced.plans: forged\r\x1b[31m\ud800" not in lines  # the exception's own text
    assert escape("x\u2029y") == "x\\u2029y"
