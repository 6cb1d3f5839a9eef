"""A fast word gate in front of hassil: only templates whose literal words all occur are tried.

Each template's literal text gives requirements: groups of words, one of which must appear in
the utterance (an alternative without an empty branch gives one group; a list, of the values the
block's context allows, as hassil filters them). Templates are split one per block, so an
utterance is matched only against the few that could fit. hassil's own regex filter still runs
after this; the gate only saves it work.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from hassil import Intents
from hassil.expression import (
    Alternative,
    Expression,
    Group,
    ListReference,
    RuleReference,
    Sentence,
    TextChunk,
)
from hassil.intents import Intent, IntentData, SlotList, TextSlotList
from hassil.util import check_excluded_context, check_required_context, normalize_text, remove_punctuation

Requirement = frozenset[str]
LONG_LIST = 10  # values: a shorter list is tried whole (its narrowing costs about what it saves)


def one_per_block(grammar: dict[str, Any]) -> dict[str, Any]:
    """The same grammar with one sentence template per data block (so blocks can be gated alone)."""
    split = dict(grammar)
    split["intents"] = {
        name: {
            **intent,
            "data": [
                {**block, "sentences": [text]} for block in intent["data"] for text in block["sentences"]
            ],
        }
        for name, intent in grammar["intents"].items()
    }
    return split


class _Needs:
    """Requirements of expressions, given the rules and lists they refer to."""

    def __init__(self, rules: dict[str, Sentence], lists: dict[str, SlotList], data: IntentData) -> None:
        self.rules = rules
        self.lists = lists
        self.data = data

    def of(self, expr: Expression, depth: int = 0) -> list[Requirement]:
        if depth > 20:
            return []
        if isinstance(expr, TextChunk):
            return [frozenset([word]) for word in expr.text.lower().split()]
        if isinstance(expr, RuleReference):
            rule = self.rules.get(expr.rule_name)
            return [] if rule is None else self.of(rule.expression, depth + 1)
        if isinstance(expr, ListReference):
            slot_list = self.lists.get(expr.list_name)
            if not isinstance(slot_list, TextSlotList) or not slot_list.values:
                return []  # numbers, wildcards: any words
            # as hassil does, only the values the block's context allows (none: it cannot match)
            allowed = [v for v in slot_list.values if self._allows(v.context)]
            return self._either([self.of(v.text_in, depth + 1) for v in allowed])
        if not isinstance(expr, Group):
            return []
        if isinstance(expr, Alternative):
            if expr.is_optional:
                return []
            return self._either([self.of(item, depth + 1) for item in expr.items])
        found: list[Requirement] = []
        for item in expr.items:  # a sequence or a permutation: every item is said
            found.extend(self.of(item, depth + 1))
        return found

    def _allows(self, value: dict[str, Any] | None) -> bool:
        required, excluded = self.data.requires_context, self.data.excludes_context
        if required and not check_required_context(required, value, allow_missing_keys=True):
            return False
        return not excluded or check_excluded_context(excluded, value)

    @staticmethod
    def _either(branches: list[list[Requirement]]) -> list[Requirement]:
        if any(not branch for branch in branches):
            return []  # a branch with no literal words: nothing is certain
        # no branch: an empty requirement, never met (a branch holding one never matches: no word)
        return [frozenset().union(*(min(branch, key=len) for branch in branches))]


def _words(expr: Expression, needs: _Needs, found: set[str], seen: set[str]) -> None:
    """Every literal word an expression can produce, through its rules and lists."""
    if isinstance(expr, TextChunk):
        found.update(re.findall(r"[a-z][a-z']*", expr.text.lower()))
    elif isinstance(expr, RuleReference):
        if expr.rule_name not in seen and (rule := needs.rules.get(expr.rule_name)) is not None:
            seen.add(expr.rule_name)
            _words(rule.expression, needs, found, seen)
    elif isinstance(expr, ListReference):
        slot_list = needs.lists.get(expr.list_name)
        if isinstance(slot_list, TextSlotList) and f"{{{expr.list_name}}}" not in seen:
            seen.add(f"{{{expr.list_name}}}")
            for value in slot_list.values:
                _words(value.text_in, needs, found, seen)
    elif isinstance(expr, Group):
        for item in expr.items:
            _words(item, needs, found, seen)


def _said(expr: Expression) -> list[str] | None:
    """A list value's words (None: a template, any words)."""
    return expr.text.lower().split() if isinstance(expr, TextChunk) else None


class WordGate:
    def __init__(self, intents: Intents) -> None:
        self._intents = intents
        self._blocks: list[tuple[str, IntentData, frozenset[Requirement]]] = []
        self.vocabulary: set[str] = set()  # every word the templates can match
        for name, intent in intents.intents.items():
            for data in intent.data:
                needs = _Needs(
                    {**intents.expansion_rules, **data.expansion_rules},
                    {**intents.slot_lists, **data.slot_lists},
                    data,
                )
                required = needs.of(data.sentences[0].expression) if data.sentences else []
                for sentence in data.sentences:
                    _words(sentence.expression, needs, self.vocabulary, set())
                for sentence in data.sentences:  # compile now, not on the first utterance that needs it
                    sentence.compile({**intents.expansion_rules, **data.expansion_rules})
                self._blocks.append((name, data, frozenset(required)))
        # every required word once, with the requirements it meets: found once per utterance
        self._meets: dict[str, list[Requirement]] = {}
        for need in {need for _, _, block_needs in self._blocks for need in block_needs}:
            for word in need:
                self._meets.setdefault(word, []).append(need)
        # each block filed under its narrowest requirement (None: none), checked only when that is met
        self._filed: dict[Requirement | None, list[int]] = {}
        for i, (_, _, block_needs) in enumerate(self._blocks):
            self._filed.setdefault(min(block_needs, key=len) if block_needs else None, []).append(i)
        # hassil tries every value of a list wherever it may stand: a long list keeps, per text, the
        # values whose words all occur in it (a value of other text never matches)
        self._long = {
            name: (sl, [(v, _said(v.text_in)) for v in sl.values])
            for name, sl in intents.slot_lists.items()
            if isinstance(sl, TextSlotList) and len(sl.values) >= LONG_LIST
        }

    def narrow(self, text: str) -> Intents:
        """The intents with only the blocks whose required words all occur in `text`, and the long
        lists with only the values whose words do (in the text as hassil reads it, any case)."""
        kept: dict[str, list[IntentData]] = {}
        # "light" is in "lights"
        met = {need for word, needs in self._meets.items() if word in text for need in needs}
        for i in sorted(i for need in (None, *met) for i in self._filed.get(need, ())):
            name, data, needs = self._blocks[i]
            if needs <= met:
                kept.setdefault(name, []).append(data)
        read = normalize_text(remove_punctuation(text)).lower()
        lists = dict(self._intents.slot_lists)
        for name, (whole, values) in self._long.items():
            said = [v for v, words in values if words is None or all(w in read for w in words)]
            if len(said) < len(values):
                lists[name] = dataclasses.replace(whole, values=said)
        return dataclasses.replace(
            self._intents,
            intents={name: Intent(name=name, data=blocks) for name, blocks in kept.items()},
            slot_lists=lists,
        )
