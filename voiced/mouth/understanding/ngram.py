"""N-gram models of our own templates, so HA's fuzzy matcher knows our intents too.

Sentences are sampled from the templates with slots as tokens ("set the {diffuser} to
{scent}"), counted up to trigrams and smoothed by absolute discounting with back-off: the
same shape of model (log10 probabilities) as the ones home-assistant-intents ships.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
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
from hassil.fuzzy import SlotCombinationInfo
from hassil.ngram import BOS, EOS, UNK_LOG_PROB, NgramProbCache

ORDER = 3
DISCOUNT = 0.5
MAX_SAMPLES = 400  # per template: alternatives multiply quickly
DOMAIN = "voiced"  # model names are "<domain>_<Intent>", as HA's are
_WORD = re.compile(r"[a-z0-9][a-z0-9']*")
Tokens = tuple[str, ...]


def _expand(expr: Expression, rules: dict[str, Sentence], depth: int = 0) -> Iterator[Tokens]:
    if depth > 20:
        yield ()
    elif isinstance(expr, TextChunk):
        yield tuple(_WORD.findall(expr.text.lower()))
    elif isinstance(expr, ListReference):
        yield (f"{{{expr.slot_name}}}",)
    elif isinstance(expr, RuleReference):
        rule = rules.get(expr.rule_name)
        yield from (() if rule is None else _expand(rule.expression, rules, depth + 1)) or [()]
    elif isinstance(expr, Alternative):
        for item in expr.items:
            yield from _expand(item, rules, depth + 1)
        if expr.is_optional:
            yield ()
    elif isinstance(expr, Group):
        parts = [list(itertools.islice(_expand(item, rules, depth + 1), MAX_SAMPLES)) for item in expr.items]
        for combo in itertools.islice(itertools.product(*parts), MAX_SAMPLES):
            yield tuple(token for part in combo for token in part)
    else:
        yield ()


class CountedModel:
    """A back-off n-gram model in memory, with the interface hassil's fuzzy matcher uses."""

    def __init__(self, sentences: Iterable[Tokens], order: int = ORDER) -> None:
        self.order = order
        counts: list[Counter[Tokens]] = [Counter() for _ in range(order + 1)]
        for sentence in sentences:
            tokens = (BOS, *sentence, EOS)
            for n in range(1, order + 1):
                for i in range(len(tokens) - n + 1):
                    counts[n][tokens[i : i + n]] += 1
        self.words: dict[str, str] = {w[0]: str(i) for i, w in enumerate(counts[1]) if w[0] != BOS}
        self._probs: dict[Tokens, float] = {}
        self._backoff: dict[Tokens, float] = {}
        total = sum(c for w, c in counts[1].items() if w[0] != BOS)
        for (word,), count in counts[1].items():
            self._probs[(word,)] = math.log10(count / total)
        for n in range(2, order + 1):
            history_total: Counter[Tokens] = Counter()
            followers: dict[Tokens, int] = defaultdict(int)
            for gram, count in counts[n].items():
                history_total[gram[:-1]] += count
                followers[gram[:-1]] += 1
            for gram, count in counts[n].items():
                self._probs[gram] = math.log10((count - DISCOUNT) / history_total[gram[:-1]])
            for history, count in history_total.items():
                self._backoff[history] = math.log10(DISCOUNT * followers[history] / count)

    def get_log_prob(
        self,
        tokens: Iterable[str],
        unk_log_prob: Callable[[str], float] | None = None,
        cache: NgramProbCache | None = None,
    ) -> float:
        cache = {} if cache is None else cache
        total = 0.0
        context: list[str] = []
        for word in tokens:
            if word == BOS:
                context.append(word)
                continue
            key = (*context, word)
            if key in cache:
                total = cache[key]
                context.append(word)
                continue
            found = False
            for n in range(self.order, 0, -1):
                prefix = tuple(context[-(n - 1) :]) if n > 1 else ()
                if len(prefix) < n - 1:
                    continue
                gram = (*prefix, word)
                if gram in self._probs:
                    total += self._probs[gram]
                    found = True
                    break
                total += self._backoff.get(prefix, 0.0)
            if not found:
                total += unk_log_prob(word) if unk_log_prob is not None else UNK_LOG_PROB
            context.append(word)
            cache[key] = total
        return total


def _variant(intent: str, fixed: dict[str, Any]) -> str:
    """A fuzzy intent per block's fixed slots: LightStep + {direction: up} -> LightStepUp."""
    suffix = "".join(str(v).title() for v in fixed.values() if isinstance(v, str | int))
    return intent + re.sub(r"[^A-Za-z0-9]", "", suffix)


def train(
    intents: Intents, names: Iterable[str]
) -> tuple[
    dict[str, CountedModel],
    dict[str, dict[Tokens, SlotCombinationInfo]],
    dict[str, tuple[str, dict[str, Any]]],
]:
    """Models, slot combinations and (fuzzy name -> intent, fixed slots) for our intents."""
    samples: dict[str, list[Tokens]] = defaultdict(list)
    combos: dict[str, dict[Tokens, SlotCombinationInfo]] = defaultdict(dict)
    variants: dict[str, tuple[str, dict[str, Any]]] = {}
    for name in names:
        for data in intents.intents[name].data:
            fuzzy_name = _variant(name, data.slots)
            variants[fuzzy_name] = (name, dict(data.slots))
            rules = {**intents.expansion_rules, **data.expansion_rules}
            for sentence in data.sentences:
                for tokens in itertools.islice(_expand(sentence.expression, rules), MAX_SAMPLES):
                    samples[fuzzy_name].append(tokens)
                    slots = tuple(sorted({t[1:-1] for t in tokens if t.startswith("{")}))
                    needs_area = "area" in data.requires_context
                    combos[fuzzy_name].setdefault(slots, SlotCombinationInfo(context_area=needs_area))
    models = {f"{DOMAIN}_{name}": CountedModel(sentences) for name, sentences in samples.items()}
    return models, dict(combos), variants
