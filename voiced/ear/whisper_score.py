"""How well each of a few given sentences fits an utterance's audio, by Whisper's own measure: the
model is made to say each (forced decoding), and the log-probabilities of its tokens are summed.
What lets the ear weigh names it knows ("Clair de Lune", from a music library) against the words it
heard ("clear the loon") on the sound itself, not on their spelling."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

ALIGN_MARGIN_FRAMES = 100  # 1 s of features past the speech; the rest of the 30 s window is skipped
FIT_MIN_FRAMES = 1000
_FLOOR = 1e-9  # a token the model gives no chance at all still scores, very low


def fitted_window(model: Any, audio: np.ndarray, min_frames: int) -> tuple[np.ndarray, int]:
    """The log-mel features of `audio` in a window of the speech and a second of silence (not the
    padded 30 s: ~10x faster, with token probabilities close to the full window's), and how many of
    its frames hold the speech."""
    features = model.feature_extractor(audio)
    frames = features.shape[-1]
    width = min(3000, max(frames + ALIGN_MARGIN_FRAMES, min_frames))
    window = np.zeros((features.shape[0], width), dtype=np.float32)
    window[:, : min(frames, width)] = features[:, :width]
    return window, min(frames, width)


def sentence_scores(
    model: Any, tokenizer: Any, audio: np.ndarray, sentences: Sequence[str], batch: int = 8
) -> list[float]:
    """The summed log-probability of each sentence's tokens given `audio` (float32, 16 kHz), from a
    faster-whisper `model` (blocking; the encoder runs once for all of them). The decoder weighs
    `batch` sentences at a time: each holds its tokens' probabilities over the whole vocabulary
    (~8 MB for Whisper base) until its batch is done."""
    import ctranslate2

    if not sentences:
        return []
    window, frames = fitted_window(model, audio, FIT_MIN_FRAMES)
    encoded = np.array(model.model.encode(ctranslate2.StorageView.from_array(window[None]), to_cpu=True))
    tokens = [tokenizer.encode(" " + sentence.strip()) for sentence in sentences]
    scores: list[float] = []
    for start in range(0, len(tokens), batch):
        some = tokens[start : start + batch]
        repeated = ctranslate2.StorageView.from_array(np.ascontiguousarray(np.repeat(encoded, len(some), 0)))
        results = model.model.align(repeated, tokenizer.sot_sequence, some, [frames] * len(some))
        scores.extend(float(np.sum(np.log(np.maximum(r.text_token_probs, _FLOOR)))) for r in results)
    return scores
