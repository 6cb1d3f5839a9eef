"""Whisper's several readings of one short utterance: one encoder pass, one beam search, every beam kept.

faster-whisper's `transcribe` returns only the best beam. For a command, the others are worth
having: when the best reading means nothing here, the next may (the mouth decides which are safe
to try). This decodes exactly as `transcribe` does for one window without timestamps (same
features, prompt, suppressed tokens and beam), so the best reading is the text `transcribe` gives;
when that reading fails `transcribe`'s own checks (too unsure, repetitive, or silence), it
returns None and the caller runs `transcribe`, with its temperature fallback.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

# faster-whisper's defaults: below this average log-probability, or above this compression
# ratio, it decodes again at a higher temperature.
LOG_PROB_THRESHOLD = -1.0
COMPRESSION_RATIO_THRESHOLD = 2.4
MAX_INITIAL_TIMESTAMP_INDEX = 50  # 1 s in 20 ms steps, as transcribe sets it
FULL_WINDOW_FRAMES = 3000  # Whisper's own window: 30 s in 10 ms frames
READING_MARGIN = 0.8  # a reading this much less likely per token than the best is not kept


@dataclass(frozen=True)
class Beams:
    text: str  # the best reading
    tokens: tuple[int, ...]  # its tokens, without the end of text
    avg_logprob: float
    others: tuple[str, ...]  # the other readings, most likely first, none the same as `text`


def decode_beams(
    model: Any,  # faster_whisper.WhisperModel
    tokenizer: Any,  # faster_whisper.tokenizer.Tokenizer
    audio: np.ndarray,
    *,
    prompt: str | None,
    hotwords: str | None,
    beam_size: int,
    window_frames: int = FULL_WINDOW_FRAMES,
) -> Beams | None:
    """`window_frames`: the encoder's window in 10 ms frames (Whisper's own is 30 s; the encoder's
    cost grows with it, whatever part of it is padding)."""
    from faster_whisper.audio import pad_or_trim
    from faster_whisper.transcribe import get_compression_ratio, get_suppressed_tokens

    features = model.feature_extractor(audio)
    segment = pad_or_trim(features[:, : features.shape[-1] - 1], window_frames)
    encoder_output = model.encode(segment)
    previous = tokenizer.encode(" " + prompt.strip()) if prompt else []
    tokens_in = model.get_prompt(tokenizer, previous, without_timestamps=True, hotwords=hotwords)
    result = model.model.generate(
        encoder_output,
        [tokens_in],
        beam_size=beam_size,
        num_hypotheses=beam_size,
        patience=1,
        length_penalty=1,
        repetition_penalty=1,
        no_repeat_ngram_size=0,
        max_length=model.max_length,
        return_scores=True,
        return_no_speech_prob=True,
        suppress_blank=True,
        suppress_tokens=get_suppressed_tokens(tokenizer, [-1]),
        max_initial_timestamp_index=MAX_INITIAL_TIMESTAMP_INDEX,
    )[0]
    best = [t for t in result.sequences_ids[0] if t < tokenizer.eot]
    text = tokenizer.decode(best).strip()
    # as transcribe recovers it: the score is the log-probability per token, the average counts the end
    avg_logprob = result.scores[0] * len(best) / (len(best) + 1)
    if avg_logprob < LOG_PROB_THRESHOLD or get_compression_ratio(text) > COMPRESSION_RATIO_THRESHOLD:
        return None
    others: list[str] = []
    for sequence, score in zip(result.sequences_ids[1:], result.scores[1:], strict=True):
        reading = tokenizer.decode([t for t in sequence if t < tokenizer.eot]).strip()
        likely = score >= result.scores[0] - READING_MARGIN
        if likely and reading and reading != text and reading not in others:
            others.append(reading)
    return Beams(text, tuple(best), avg_logprob, tuple(others))


def repeats(text: str) -> bool:
    """Whether `text` is one sentence said over again: the decoder looping, not the speaker."""
    sentences = [" ".join(s.lower().split()) for s in re.split(r"[.!?]+", text)]
    sentences = [s for s in sentences if s]
    return len(sentences) > 1 and len(set(sentences)) == 1
