"""Cutting streamed text into speakable sentences, and cleaning text meant for the eye.

Pure functions and a small stateful splitter: feed it token deltas, it returns whole
sentences as soon as they are certain. Abbreviations ("Dr.", "e.g."), initials, decimals
("3.5") and numbered ordinals do not end a sentence.
"""

from __future__ import annotations

import re
import unicodedata

_ABBREVIATED = "mr mrs ms dr prof st sr jr vs etc e.g i.e approx appt apt dept est min max no fig inc ltd co"
_ABBREVIATED += " mt ft jan feb mar apr jun jul aug sep sept oct nov dec mon tue wed thu fri sat sun"
ABBREVIATIONS = frozenset(_ABBREVIATED.split())
_ENDERS = ".!?…"
_CLOSERS = "\"')]\u201d\u2019"  # straight and curly closing quotes, brackets
_MARKDOWN_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_MARKDOWN_MARKS = re.compile(r"(\*\*|__|\*|`+|~~)")
_LINE_MARKERS = re.compile(r"^\s*(#{1,6}\s+|[-*+•]\s+|\d+[.)]\s+|>\s*)", re.MULTILINE)
_URL = re.compile(r"https?://\S+")
_SPACES = re.compile(r"\s+")


def _is_emoji(char: str) -> bool:
    code = ord(char)
    return (
        unicodedata.category(char) in ("So", "Cs")
        or 0x1F000 <= code <= 0x1FAFF
        or code in (0x200D, 0xFE0F, 0x20E3)
    )


def speakable(text: str) -> str:
    """Text for the ear: no markdown, no emoji, no URLs, single spaces."""
    text = _MARKDOWN_LINK.sub(r"\1", text)
    text = _LINE_MARKERS.sub("", text)
    text = _MARKDOWN_MARKS.sub("", text)
    text = _URL.sub("", text)
    text = "".join(char for char in text if not _is_emoji(char))
    return _SPACES.sub(" ", text).strip()


def _ends_sentence(text: str, index: int) -> bool:
    """Is the punctuation at `index` (followed by whitespace) the end of a sentence?"""
    if text[index] != ".":
        return True
    words = text[:index].split()
    if not words:
        return False
    word = words[-1].lstrip("(\"'").lower()
    if word in ABBREVIATIONS:
        return False
    # A single letter is an initial ("J. Smith"); "e.g"/"i.e" are caught above.
    return not (len(word) == 1 and word.isalpha())


class SentenceSplitter:
    def __init__(self) -> None:
        self._buffer = ""

    def feed(self, delta: str) -> list[str]:
        self._buffer += delta
        sentences: list[str] = []
        start = 0
        index = 0
        text = self._buffer
        while index < len(text):
            char = text[index]
            if char == "\n" and text[start:index].strip():
                sentences.append(text[start:index])
                start = index + 1
            elif char in _ENDERS:
                end = index + 1
                while end < len(text) and (text[end] in _ENDERS or text[end] in _CLOSERS):
                    end += 1
                if end >= len(text):
                    break  # need to see what follows before deciding
                if text[end].isspace() and _ends_sentence(text, index):
                    sentences.append(text[start:end])
                    start = end
                index = end
                continue
            index += 1
        self._buffer = text[start:]
        return [clean for sentence in sentences if (clean := speakable(sentence))]

    def flush(self) -> list[str]:
        rest, self._buffer = self._buffer, ""
        clean = speakable(rest)
        return [clean] if clean else []


def split_sentences(text: str) -> list[str]:
    splitter = SentenceSplitter()
    return splitter.feed(text) + splitter.flush()
