"""The grammar and words of the home as the registry has it now: templates, fuzzy models, vocabulary."""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections import OrderedDict

from hassil import Intents

from voiced.devices.registry import DeviceRegistry
from voiced.devices.vocabulary import HomeVocabulary
from voiced.language import english
from voiced.mouth.understanding.grammar import build_grammar, load_unsupported, rooms
from voiced.mouth.understanding.hearing import Vocabulary, english_words, home_phrases
from voiced.mouth.understanding.matcher import Matcher
from voiced.mouth.understanding.prefilter import one_per_block

log = logging.getLogger(__name__)
Learned = tuple[Matcher, Vocabulary, set[str]]
# A matcher holds no conversation (each agent keeps its own): one built for the same grammar, room
# and fuzziness is shared instead of compiled again (~1 s each; ~2 MB each: one per room is kept).
KEEP_MATCHERS = 8
_matchers: OrderedDict[tuple[str, str | None, bool], Matcher] = OrderedDict()
_building: dict[tuple[str, str | None, bool], threading.Lock] = {}  # one build per key at a time
_lock = threading.Lock()


def _matcher(grammar: dict[str, object], room: str | None, fuzzy: bool) -> Matcher:
    text = json.dumps(grammar, sort_keys=True, default=repr).encode()
    key = (hashlib.sha256(text).hexdigest(), room, fuzzy)
    with _lock:
        building = _building.setdefault(key, threading.Lock())
    with building:  # a second caller for the same grammar waits for the first, then shares its matcher
        with _lock:
            if key in _matchers:
                _matchers.move_to_end(key)
                return _matchers[key]
        matcher = Matcher(Intents.from_dict(grammar), load_unsupported(), room, fuzzy=fuzzy)
        for said in english().warm_up:  # hassil and the fuzzy models build their tables on first use
            matcher.strict(said)
            matcher.fuzzy(said, [])
        with _lock:
            _matchers[key] = matcher
            while len(_matchers) > KEEP_MATCHERS:
                _building.pop(_matchers.popitem(last=False)[0], None)
    log.debug("grammar compiled (room %s, fuzzy %s); %d kept", room, fuzzy, len(_matchers))
    return matcher


def learn(registry: DeviceRegistry, room: str | None, fuzzy: bool) -> Learned:
    """Blocking (~1 s for a grammar not seen before): run it off the loop when devices come or go."""
    matcher = _matcher(one_per_block(build_grammar(registry, room)), room, fuzzy)
    vocabulary = Vocabulary(
        home_phrases(HomeVocabulary.of(registry), rooms(registry, room)),
        matcher.vocabulary,
        english_words(),
    )
    return matcher, vocabulary, set(rooms(registry, room))


def learn_ahead(registry: DeviceRegistry, room: str | None) -> threading.Thread:
    """Compile the grammar in a thread (pure Python, ~1.5 s) while the models load on the other core:
    the LocalIntentAgent built afterwards takes the matcher from the cache. Join it before that."""

    def compile_it() -> None:
        try:
            learn(registry, room, True)
        except Exception:  # the agent learns it again, in the open, and fails there if it must
            log.exception("compiling the grammar ahead of the agent failed")

    thread = threading.Thread(target=compile_it, name="learn-ahead", daemon=True)
    thread.start()
    return thread
