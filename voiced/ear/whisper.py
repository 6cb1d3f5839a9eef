"""faster-whisper backend; the models named in bundled.py come from pip."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from voiced.audio.pcm import EAR_RATE
from voiced.config import AsrConfig
from voiced.devices.vocabulary import HomeVocabulary
from voiced.ear.bundled import BUNDLED, bundled_model
from voiced.ear.transcriber import Hearing
from voiced.ear.whisper_beams import FULL_WINDOW_FRAMES, Beams, decode_beams, repeats
from voiced.ear.whisper_glance import glance_text
from voiced.ear.whisper_score import fitted_window, sentence_scores
from voiced.errors import ConfigError

_LOGGER = logging.getLogger(__name__)
# A word heard with less than this probability is doubtful: "Claire to learn" for "Clair de Lune"
# scores 0.13 on "Claire", while names heard right score 0.8-1.0 (bench: understanding-spoken).
DOUBT_BELOW = 0.5
# The prompt's commands: Whisper base, on words it cannot make out, sometimes recites one of them.
PROMPT_EXAMPLES = ("Turn on the light.", "Play some jazz.", "Dim the kitchen light.")
ALIGN_MIN_FRAMES = 300


def resolve_model_path(name: str, models_dir: Path, field: str = "asr.model") -> Path:
    bundled = bundled_model(name, models_dir)
    if bundled is not None:
        return bundled
    for candidate in (Path(name), models_dir / name):
        if (candidate / "model.bin").is_file():
            return candidate
    raise ConfigError(
        f"{field}: {name!r} is neither one of {', '.join(map(repr, BUNDLED))} nor a CTranslate2 model "
        f"folder (looked in {name} and {models_dir / name})"
    )


class WhisperTranscriber:
    def __init__(
        self,
        config: AsrConfig,
        models_dir: Path,
        *,
        prompt: str | None = None,
        hotwords: str | None = None,
        weigh_words: Callable[[str], bool] | None = None,
        model: str | None = None,
        field: str = "asr.model",
        glances: bool = True,
        examples: bool = True,
    ) -> None:
        """`model`: which model (the config's by default; `field` names it in errors). `glances`:
        load the second, one-thread instance for barge-in glances (the second ear needs none)."""
        from faster_whisper import WhisperModel
        from faster_whisper.tokenizer import Tokenizer

        self._config = config
        self._examples = examples
        # A prompt with the home's vocabulary steers tiny.en away from "place some jazz".
        self._prompt = config.initial_prompt or prompt
        # Hotwords bias decoding towards the home's names ("bedroom", not "Madroom").
        self._hotwords = (hotwords if config.hotwords is None else config.hotwords) or None
        path = resolve_model_path(model or config.model, models_dir, field)
        _LOGGER.info("loading Whisper model from %s", path)
        # With glances, two workers on one copy of the weights: a barge-in's words never wait for a
        # transcription already running (CTranslate2 runs one call at a time per worker, and a running
        # call cannot be stopped). A second model instance cost ~100 MB more, weights and buffers.
        self._model = WhisperModel(
            str(path),
            device="cpu",
            compute_type=config.compute_type,
            cpu_threads=config.threads,
            num_workers=2 if glances else 1,
        )
        self._quick = self._model
        # Which transcripts need each word weighed (titles to search for): it costs a forced
        # decoding, so only those pay for it.
        self._weigh_words = weigh_words
        self._tokenizer = Tokenizer(
            self._model.hf_tokenizer,
            self._model.model.is_multilingual,
            task="transcribe",
            language=config.language,
        )

    def hear_home(self, vocabulary: HomeVocabulary) -> None:
        """The home changed (devices discovered): its words steer Whisper from the next utterance,
        unless the config fixed the prompt or the hotwords."""
        self._prompt = self._config.initial_prompt or vocabulary_prompt(vocabulary, examples=self._examples)
        if self._config.hotwords is None:
            self._hotwords = vocabulary_hotwords(vocabulary) or None

    def transcribe(self, samples: np.ndarray) -> str:
        return self.transcribe_scored(samples).text

    def transcribe_scored(self, samples: np.ndarray) -> Hearing:
        """Text; confidence, the geometric mean of the tokens' probabilities (1.0 for silence); and
        the doubtful words, when `weigh_words` asks for them."""
        audio = samples.astype(np.float32) / 32768.0
        # A wider beam on short commands hears the voices tiny.en finds hard (the spoken bench:
        # espeak +8-10 points) and still ends within the VAD hangover; long speech keeps the narrow one.
        short = len(samples) <= self._config.short_utterance_s * EAR_RATE
        if short:
            window = self._window_frames(len(samples))
            beams = self._beams(audio, window)
            if beams is not None and window < FULL_WINDOW_FRAMES and repeats(beams.text):
                # tiny.en over a short window sometimes says it twice ("… to 40%. … to 40%."): it
                # was trained on 30 s windows, whose padding ends the text; read it over one
                _LOGGER.debug("a short window looped (%r): decoding over 30 s", beams.text)
                beams = self._beams(audio, FULL_WINDOW_FRAMES)
            if beams is not None:
                return self._heard(audio, beams.text, list(beams.tokens), beams.avg_logprob, beams.others)
        segments, _info = self._model.transcribe(
            audio,
            language=self._config.language,
            beam_size=self._config.short_beam_size if short else self._config.beam_size,
            vad_filter=False,
            condition_on_previous_text=False,
            without_timestamps=True,
            initial_prompt=self._prompt,
            hotwords=self._hotwords,
        )
        pieces = list(segments)
        text = " ".join(segment.text.strip() for segment in pieces).strip()
        if not pieces:
            return Hearing(text)
        mean_logprob = sum(s.avg_logprob for s in pieces) / len(pieces)
        tokens = [t for s in pieces for t in s.tokens if t < self._tokenizer.eot]
        return self._heard(audio, text, tokens, mean_logprob)

    def fit(self, audio: np.ndarray, sentences: Sequence[str]) -> list[float]:
        """How well each sentence fits `audio` (float32), as this model's summed token log-probability
        (blocking): voiced/ear/whisper_score.py."""
        return sentence_scores(self._model, self._tokenizer, audio, sentences, self._config.fit_batch)

    def _beams(self, audio: np.ndarray, window_frames: int) -> Beams | None:
        return decode_beams(
            self._model,
            self._tokenizer,
            audio,
            prompt=self._prompt,
            hotwords=self._hotwords,
            beam_size=self._config.short_beam_size,
            window_frames=window_frames,
        )

    def _window_frames(self, samples: int) -> int:
        """The encoder's window for `samples` of speech: the configured one when the speech and a
        second of silence fit in it, else Whisper's own 30 s."""
        window_s = self._config.short_window_s
        return int(window_s * 100) if samples / EAR_RATE + 1.0 <= window_s else FULL_WINDOW_FRAMES

    def glance(self, samples: np.ndarray) -> Hearing:
        """The first words of a short burst, fast (whisper_glance.py): for a barge-in, never a turn."""
        audio = samples.astype(np.float32) / 32768.0
        try:
            return Hearing(glance_text(self._quick, self._tokenizer, audio))
        except (RuntimeError, ValueError) as exc:
            _LOGGER.warning("a quick look at the words failed (%s): transcribing in full", exc)
            return self.transcribe_scored(samples)

    def _heard(
        self, audio: np.ndarray, text: str, tokens: list[int], logprob: float, others: tuple[str, ...] = ()
    ) -> Hearing:
        doubtful: tuple[str, ...] = ()
        if text and self._weigh_words is not None and self._weigh_words(text):
            doubtful = self._doubtful(audio, tokens)
        return Hearing(text, float(math.exp(logprob)), doubtful, others)

    def _doubtful(self, audio: np.ndarray, tokens: list[int]) -> tuple[str, ...]:
        """The words whose tokens the model, forced to say them again, gives little probability.

        The encoder sees the speech and a second of silence, not the padded 30 s window: about
        ten times faster, with word probabilities close to the full window's."""
        import ctranslate2

        if not tokens:
            return ()
        try:
            window, frames = fitted_window(self._model, audio, ALIGN_MIN_FRAMES)
            result = self._model.model.align(
                ctranslate2.StorageView.from_array(window[None]),
                self._tokenizer.sot_sequence,
                [tokens],
                frames,
            )[0]
        except (RuntimeError, ValueError) as exc:
            # unweighed is not sure: every word stays doubtful (a title is read back, not played)
            _LOGGER.warning("could not weigh the words heard: %s", exc)
            words = self._tokenizer.split_to_word_tokens([*tokens, self._tokenizer.eot])[0][:-1]
            return tuple(dict.fromkeys(w for w in map(_clean, words) if w))
        probabilities = result.text_token_probs
        words, word_tokens = self._tokenizer.split_to_word_tokens([*tokens, self._tokenizer.eot])
        doubtful: list[str] = []
        start = 0
        for word, pieces in zip(words[:-1], word_tokens[:-1], strict=True):
            end = start + len(pieces)
            clean = _clean(word)
            if clean and end <= len(probabilities) and float(np.mean(probabilities[start:end])) < DOUBT_BELOW:
                doubtful.append(clean)
            start = end
        return tuple(doubtful)


def _clean(word: str) -> str:
    return "".join(ch for ch in word.lower() if ch.isalnum() or ch == "'")


def vocabulary_prompt(vocabulary: HomeVocabulary, *, examples: bool = True) -> str:
    """Words the home uses, in the shape of commands, as Whisper's initial prompt. `examples`: begin
    with a few whole commands."""
    parts = [" ".join(PROMPT_EXAMPLES)] if examples else []
    if vocabulary.light_rooms:
        parts.append(f"Lights: {', '.join(vocabulary.light_rooms)}.")
    if vocabulary.scents:
        parts.append(f"Set the diffuser to {', '.join(vocabulary.scents)}.")
    if vocabulary.genres:
        parts.append(f"Music: {', '.join(vocabulary.genres)}.")
    return " ".join(parts)


def vocabulary_hotwords(vocabulary: HomeVocabulary) -> str:
    """The home's names as Whisper hotwords: rooms, aliases, scents, genres."""
    words = [*vocabulary.rooms, *vocabulary.aliases, *vocabulary.scents, *vocabulary.genres]
    return ", ".join(dict.fromkeys(w for w in words if w))
