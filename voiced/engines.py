"""The models, loaded and warmed up before the daemon reports ready: Whisper (and its second ear),
piper, and the grammar compiled meanwhile."""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from voiced.config import Config
from voiced.devices.registry import DeviceRegistry
from voiced.devices.vocabulary import HomeVocabulary
from voiced.ear.asr_queue import Reconsider
from voiced.ear.broad import BroadCheck
from voiced.ear.choice import ChoiceCheck
from voiced.ear.lazy_whisper import LazyWhisper
from voiced.ear.library import TitleMatcher, TitleRules
from voiced.ear.second_opinion import Rules, SecondEar
from voiced.ear.transcriber import Hearing
from voiced.ear.whisper import PROMPT_EXAMPLES, WhisperTranscriber, vocabulary_hotwords, vocabulary_prompt
from voiced.ear.wyoming_asr import WyomingTranscriber
from voiced.memory import give_back, limit_arenas
from voiced.mouth.dry_run import DryRun
from voiced.mouth.foresight import WAIT_S, Foresight
from voiced.mouth.piper_tts import PiperSynthesizer
from voiced.mouth.rehearsal import rehearsal_agent
from voiced.mouth.rehearsal_file import RehearsalFile
from voiced.mouth.speech import Rehearsed
from voiced.mouth.synthesizer import Synthesizer
from voiced.mouth.understanding.hearing import english_words
from voiced.mouth.understanding.learning import learn_ahead
from voiced.mouth.understanding.titles import may_name_a_title
from voiced.mouth.wyoming_tts import WyomingSynthesizer

T = TypeVar("T")
_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class Engines:
    transcriber: WhisperTranscriber | WyomingTranscriber | None  # None when nothing is heard (typed turns)
    synthesizer: PiperSynthesizer | WyomingSynthesizer
    # asr.second_model: hears again a turn whose words the local intents would not act on
    second: WhisperTranscriber | LazyWhisper | None = None
    # the replies rehearsed by an earlier run (tts.rehearsal_file), and those rehearsed from now on
    rehearsed: Rehearsed = field(default_factory=Rehearsed)


def _whisper(
    config: Config, registry: DeviceRegistry, model: str, field: str, *, second: bool
) -> WhisperTranscriber:
    """`second`: the second ear: no glances (never asked over a reply), and no whole commands in its
    prompt (base recites them for words it cannot make out)."""
    words = HomeVocabulary.of(registry)
    glances = examples = not second
    whisper = WhisperTranscriber(
        config.asr,
        config.models_dir,
        prompt=vocabulary_prompt(words, examples=examples),
        hotwords=vocabulary_hotwords(words),
        weigh_words=may_name_a_title,
        model=model,
        field=field,
        glances=glances,
        examples=examples,
    )
    whisper.transcribe(np.zeros(16000, dtype=np.int16))
    return whisper


def load_engines(config: Config, registry: DeviceRegistry, *, whisper: bool = True) -> Engines:
    """Load and warm up the models so the first turn is as fast as the rest.

    `whisper=False`: only piper, for typed turns that need no ears.
    """
    asr, tts = config.asr, config.tts
    limit_arenas(config.memory.malloc_arenas)  # before the models' threads allocate
    grammar = learn_ahead(registry, config.audio.room)  # compiles while the models load
    transcriber: WhisperTranscriber | WyomingTranscriber | None = None
    second = None
    if whisper:
        whisper_model = _whisper(config, registry, asr.model, "asr.model", second=False)
        transcriber = whisper_model
        # A remote engine wraps the local one, loaded above: the fallback is ready before the first turn.
        if asr.backend == "wyoming" and asr.uri is not None:
            transcriber = WyomingTranscriber(
                asr.uri, whisper_model, language=asr.language, connect_s=asr.connect_s, answer_s=asr.answer_s
            )
        # Not for the LLM alone (it takes any words), nor behind a remote engine (likely a larger
        # model than a local second one)
        if asr.second_model is not None and config.agent_kind != "llm" and asr.backend == "local":
            load = functools.partial(
                _loaded, config, registry, asr.second_model, "asr.second_model", second=True
            )
            second = load() if asr.second_model_loads == "at_start" else LazyWhisper(load, asr.second_model)
    piper = PiperSynthesizer(tts, config.models_dir)
    piper.synthesize("Ready.")
    synthesizer: PiperSynthesizer | WyomingSynthesizer = piper
    if tts.backend == "wyoming" and tts.uri is not None:
        synthesizer = WyomingSynthesizer(
            tts.uri, piper, voice=tts.remote_voice, connect_s=tts.connect_s, answer_s=tts.answer_s
        )
    rehearsed = Rehearsed(
        RehearsalFile(tts.rehearsal_file, piper.identity)
        if tts.rehearsal_file is not None and tts.backend == "local"  # a server's voice may change unseen
        else None
    )
    _LOGGER.info("%d rehearsed replies kept from an earlier run", rehearsed.restore())
    grammar.join()
    if config.memory.give_back_after_turn:
        give_back()  # loading a model passes through twice its size
    return Engines(transcriber, synthesizer, second, rehearsed)


def _loaded(
    config: Config, registry: DeviceRegistry, model: str, field: str, *, second: bool
) -> WhisperTranscriber:
    """`_whisper`, then the memory its load passed through given back (a model loaded when first
    needed, mid-run)."""
    whisper = _whisper(config, registry, model, field, second=second)
    if config.memory.give_back_after_turn:
        give_back()
    return whisper


def private_intents(config: Config, registry: DeviceRegistry, build: Callable[..., T]) -> Callable[[], T]:
    """`build` (rehearsal_agent, home_replies) with this home's settings for the local intents."""
    return functools.partial(
        build,
        registry,
        config.agent.brightness_step_pct,
        room=config.audio.room,
        scent_limit=config.safety.scent_max_intensity,
    )


def second_ear(
    config: Config, registry: DeviceRegistry, engines: Engines, answering: Callable[[], bool]
) -> tuple[Reconsider | None, Callable[[], None]]:
    """The ear's second thoughts on a turn, blocking, after the first model heard it (None when it
    has none): the second model's opinion (asr.second_model), a check of an unsure request for
    every device of a kind (broad.py), a question between rooms or names answered by the sound
    (choice.py), then the music library's titles (library.py, when a music
    device declares one). And what to call when the home's devices change
    (their words and the private intents asked follow them). `answering`: the daemon's intents wait
    for an answer (a short reply is then not heard again). Not for the LLM alone (it takes any words)."""
    second, first = engines.second, engines.transcriber
    local = config.agent_kind != "llm" and isinstance(first, WhisperTranscriber)
    if second is None and not local:
        return None, lambda: None
    dry = DryRun(private_intents(config, registry, rehearsal_agent))
    home = [HomeVocabulary.of(registry)]
    steps: list[Reconsider] = []
    acts = lambda h: dry.acts(h.text, h.doubtful, h.alternatives)  # noqa: E731
    if second is not None:
        takes = lambda h: dry.acts(h.text, h.doubtful, h.alternatives, searching=False)  # noqa: E731
        # The sentences of the prompt the second model hears: it may recite them
        recited = (*PROMPT_EXAMPLES, *re.findall(r"[^.!?]+[.!?]", config.asr.initial_prompt or ""))
        rules = Rules(config.asr.second_min_similarity, recited, english_words().__contains__)
        steps.append(SecondEar(second, acts, takes, rules, answering).reconsider)
    if local:
        weigher = second or first
        assert isinstance(weigher, WhisperTranscriber | LazyWhisper)
        # not a title to search for ("Play All of Me"): its "all" is no device's
        acted = lambda h: acts(h) and dry.searched(h.text) is None  # noqa: E731
        steps.append(BroadCheck(weigher.fit, lambda: home[0].rooms, acted).checked)
        asked = lambda h: dry.asked(h.text, h.doubtful, h.alternatives)  # noqa: E731
        fits = [model.fit for model in (first, second) if isinstance(model, WhisperTranscriber | LazyWhisper)]
        steps.append(ChoiceCheck(fits, asked, acted, lambda: home[0].light_rooms).checked)
        titles = TitleMatcher(weigher.fit, dry.searched, lambda: home[0].titles, TitleRules(), acts)
        steps.append(titles.matched)

    def reconsider(samples: np.ndarray, heard: Hearing) -> Hearing:
        dry.new_turn()
        for step in steps:
            try:
                heard = step(samples, heard)
            except Exception:  # each step keeps what it was given on its own failures; a bug too
                _LOGGER.exception("the ear's second thoughts failed: keeping %r", heard.text)
        return heard

    def home_changed() -> None:
        home[0] = HomeVocabulary.of(registry)
        if second is not None:
            second.hear_home(home[0])
        dry.home_changed()

    return reconsider, home_changed


def judges_pauses(config: Config) -> bool:
    """Whether the ear's end-of-turn rule is told what words heard at a pause are (the local intents
    judge them; the LLM alone takes anything)."""
    return config.agent_kind != "llm" and bool(config.vad.complete_hangover_ms)


def foresight(
    config: Config,
    registry: DeviceRegistry,
    synthesizer: Synthesizer,
    rehearsed: Rehearsed,
    *,
    room: str | None,
    wait_s: float = WAIT_S,
) -> tuple[Foresight, Callable[[], None]]:
    """Replies synthesized while the ear of `room` waits for the turn's end (foresight.py), from a
    private copy of the local intents of their own, and kept in `rehearsed` once said; and what to
    call when the home's devices change."""
    dry = DryRun(
        functools.partial(
            rehearsal_agent,
            registry,
            config.agent.brightness_step_pct,
            room=room,
            scent_limit=config.safety.scent_max_intensity,
        )
    )

    def reply_of(text: str) -> str | None:
        dry.new_turn()  # each pause's words in a fresh conversation, the devices as they are now
        return dry.reply(text)

    def said(sentence: str, audio: np.ndarray) -> None:
        rehearsed.keep(sentence, lambda _sentence: audio)

    def home_changed() -> None:  # on the event loop: the copy is built anew on the worker
        dry.home_changed()
        ahead.prepare()

    ahead = Foresight(reply_of, synthesizer.synthesize, said, prepare=dry.prepare, wait_s=wait_s)
    return ahead, home_changed
