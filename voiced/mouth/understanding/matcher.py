"""Strict template matching first, Home Assistant's fuzzy n-gram matcher second, refusals last."""

from __future__ import annotations

import functools
import logging
import re
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hassil import Intents, recognize_all
from hassil.fuzzy import FuzzyNgramMatcher, SlotCombinationInfo
from hassil.models import MatchEntity
from hassil.ngram import Sqlite3NgramModel
from home_assistant_intents import get_fuzzy_config, get_fuzzy_language

from voiced.language import english
from voiced.mouth.understanding.guesses import acceptable
from voiced.mouth.understanding.home import Match, Slot
from voiced.mouth.understanding.ngram import train
from voiced.mouth.understanding.prefilter import WordGate

log = logging.getLogger(__name__)
MAX_STRICT = 12  # candidate parses kept per segment
KEEP_STRICT = 512  # texts whose parses are kept
KEEP_NGRAMS = 8192  # n-gram lookups kept per model
WHOLE_HOUSE = "\x00house"  # the context room when the daemon has none: no device is in it


def _slot(entity: MatchEntity) -> Slot:
    return Slot(entity.value, "" if entity.is_wildcard and not entity.text else entity.text_clean)


def _rank(result: Any) -> tuple[int, int, int, int]:
    name = result.entities.get("name")
    wildcard = any(e.is_wildcard for e in result.entities.values())
    return (
        int(name is not None and not name.is_wildcard),
        len(name.text) if name is not None else 0,
        int(getattr(result, "text_chunks_matched", 0)),
        int(not wildcard),
    )


# Our intents the fuzzy matcher learns from our templates, and the lists that fill their slots.
OUR_FUZZY = ("LightStep", "LightColor", "DiffuserState", "DiffuserScent", "DiffuserIntensity", "Everything")
OUR_LISTS = {"scent": ["scent"], "diffuser": ["diffuser"], "pct": ["pct"], "minutes": ["minutes"]}
NAME_DOMAINS = {"light", "media_player", "switch"}


@dataclass
class _KeptModel(Sqlite3NgramModel):
    """hassil's n-gram model with its answers kept (the database is read-only) and its database opened
    once per thread: hassil opens it again for every sentence it scores."""

    def __post_init__(self) -> None:
        self._open = threading.local()
        self._answer = functools.lru_cache(maxsize=KEEP_NGRAMS)(self._ask)

    def _ask(self, sql: str, params: tuple[str, ...]) -> Any:
        if getattr(self._open, "db", None) is None:
            self._open.db = sqlite3.connect(f"file:{self.database_path}?mode=ro", uri=True)
        return self._open.db.execute(sql, params).fetchone()

    def _get_cursor(self) -> Any:
        lookups = _Lookups(self._answer)
        return lookups, lookups  # hassil's connection and cursor, one per sentence scored


@dataclass
class _Lookups:
    answer: Callable[[str, tuple[str, ...]], Any]
    row: Any = None

    def execute(self, sql: str, params: tuple[str, ...]) -> None:
        self.row = self.answer(sql, params)

    def fetchone(self) -> Any:
        return self.row

    def close(self) -> None:
        pass


def build_fuzzy(intents: Intents) -> tuple[FuzzyNgramMatcher, dict[str, tuple[str, dict[str, Any]]]] | None:
    """Home Assistant's fuzzy matcher: the n-gram models home-assistant-intents ships, and ours.

    Also returns what each of our fuzzy intents stands for (LightStepUp: LightStep, direction up).
    """
    language = get_fuzzy_language("en")
    if language is None:
        log.warning("home-assistant-intents ships no fuzzy models for English; strict matching only")
        return None
    config = get_fuzzy_config()
    ours, our_combos, variants = train(intents, OUR_FUZZY)
    for combos in our_combos.values():
        for combo, info in combos.items():
            if "name" in combo:
                info.name_domains = set(NAME_DOMAINS)
    models: dict[str, Any] = {
        name: _KeptModel(
            order=model.order,
            words={word: str(word_id) for word, word_id in model.words.items()},
            database_path=model.database_path,
        )
        for name, model in language.ngram_models.items()
    }
    models.update(ours)
    matcher = FuzzyNgramMatcher(
        intents=intents,
        intent_models=models,
        intent_slot_list_names={**config.slot_list_names, **OUR_LISTS},
        slot_combinations={
            **{
                intent: {
                    combo: SlotCombinationInfo(
                        context_area=info.context_area,
                        name_domains=set(info.name_domains) if info.name_domains else None,
                    )
                    for combo, info in combos.items()
                }
                for intent, combos in config.slot_combinations.items()
            },
            **our_combos,
        },
        domain_keywords=language.domain_keywords,
        stop_words=language.stop_words,
    )
    return matcher, variants


class Matcher:
    def __init__(self, intents: Intents, unsupported: Intents, room: str | None, fuzzy: bool = True) -> None:
        self._gate = WordGate(intents)
        self.vocabulary = self._gate.vocabulary
        self._unsupported = unsupported
        # with no room of our own, requests HA ties to the speaker's room ("pause") reach the whole house
        self._context = {"area": room or WHOLE_HOUSE}
        self._room = room
        built = build_fuzzy(intents) if fuzzy else None
        self._fuzzy: FuzzyNgramMatcher | None = built[0] if built is not None else None
        self._variants: dict[str, tuple[str, dict[str, Any]]] = built[1] if built is not None else {}
        language = get_fuzzy_language("en")
        self._stop_words = set(language.stop_words or ()) if language is not None else set()
        self._stop_words |= english().guess_fillers
        # pure of the text: a segment is matched again as its spans are tried, and by complete()
        self.strict = functools.lru_cache(maxsize=KEEP_STRICT)(self._strict)

    def _strict(self, text: str) -> tuple[Match, ...]:
        narrowed = self._gate.narrow(text)
        results = list(recognize_all(text, narrowed, intent_context=self._context or None))
        results.sort(key=_rank, reverse=True)
        return tuple(
            Match(
                r.intent.name,
                {k: _slot(e) for k, e in r.entities.items()},
                wild=any(e.is_wildcard for e in r.entities.values()),
            )
            for r in results[:MAX_STRICT]
        )

    def fuzzy(self, text: str, unknown: list[str]) -> Match | None:
        """HA's fuzzy guess, unless a word it would ignore may name something we do not have."""
        if self._fuzzy is None:
            return None
        if text.split()[:1] and text.split()[0] in english().never_guessed:
            return None  # a question is answered or not, never guessed into a command
        if any(word not in self._stop_words for word in unknown):
            log.debug("no fuzzy guess for %r: unknown words %s", text, unknown)
            return None
        result = self._fuzzy.match(text, context_area=self._room)
        if result is None:
            return None
        slots = {k: Slot(v.value, v.text) for k, v in result.slots.items()}
        if not acceptable(result.intent_name, slots, text, self._stop_words):
            log.debug("fuzzy guess %s %s for %r not taken", result.intent_name, slots, text)
            return None
        if result.intent_name in self._variants:  # one of ours: LightStepUp is LightStep going up
            intent, fixed = self._variants[result.intent_name]
            slots.update({k: Slot(v, "") for k, v in fixed.items()})
            return Match(intent, slots, fuzzy=True)
        if result.name_domain and "domain" not in slots:
            slots["domain"] = Slot(result.name_domain, "")
        return Match(result.intent_name, slots, fuzzy=True)

    def unsupported(self, text: str) -> Match | None:
        lowered = text.lower()
        for result in recognize_all(text, self._unsupported):
            # hassil lets a wildcard start inside a word: "cleaning mode" as "clean" + "ing mode"
            if all(_whole_words(str(e.text), lowered) for e in result.entities.values() if e.is_wildcard):
                return Match(result.intent.name, {k: _slot(e) for k, e in result.entities.items()})
        return None


def _whole_words(part: str, text: str) -> bool:
    """Whether `part` stands in `text` as whole words, not from inside one."""
    return (
        not part.strip()
        or re.search(rf"(?<![\w']){re.escape(part.strip().lower())}(?![\w'])", text) is not None
    )
