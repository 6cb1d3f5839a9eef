"""The grammar and words of the home as the registry has it now: templates, fuzzy models, vocabulary."""

from __future__ import annotations

from hassil import Intents

from voiced.devices.registry import DeviceRegistry
from voiced.devices.vocabulary import HomeVocabulary
from voiced.mouth.understanding.grammar import build_grammar, load_unsupported, rooms
from voiced.mouth.understanding.hearing import Vocabulary, english_words, home_phrases
from voiced.mouth.understanding.matcher import Matcher
from voiced.mouth.understanding.prefilter import one_per_block

Learned = tuple[Matcher, Vocabulary, set[str]]
# hassil builds its number-word tables and opens the fuzzy models on first use: do it at start.
WARM_UP = (
    "turn on the light",
    "set the light brightness to max",
    "lights on living room please",
    "set the bedroom light to fifty percent",
    "set the volume to one hundred fifty",
    "turn on the diffuser for thirty minutes",
    "set the kitchen light to three thousand kelvin",
    "turn up the volume by ten",
    "set the diffuser intensity to one hundred twenty percent",
)


def learn(registry: DeviceRegistry, room: str | None, fuzzy: bool) -> Learned:
    """Blocking (~1 s): run it off the loop when discovered devices come or go."""
    grammar = one_per_block(build_grammar(registry, room))
    matcher = Matcher(Intents.from_dict(grammar), load_unsupported(), room, fuzzy=fuzzy)
    for text in WARM_UP:  # hassil compiles on first use, and the fuzzy models open their databases
        matcher.strict(text)
        matcher.fuzzy(text, [])
    vocabulary = Vocabulary(
        home_phrases(HomeVocabulary.of(registry), rooms(registry, room)),
        matcher.vocabulary,
        english_words(),
    )
    return matcher, vocabulary, set(rooms(registry, room))
