"""A quick look at the first words of a short stretch of speech, to decide a barge-in.

Whisper's encoder runs over a 30 s window however short the speech: 60-85 % of a command's
transcription, and 0.9 s for a half-second "stop" on a busy 2-core box. Here it sees the speech
plus one second of silence (0.13 s then), and decodes greedily a few tokens. tiny.en, trained on
whole windows, may loop or cut short the end of a sentence so heard ("ah ah ah ah" for "uh-huh"),
which is why this never makes a turn: it only tells a stop word, a backchannel, or more words,
and the turn's own transcript is the full one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

MARGIN_FRAMES = 100  # 1 s of features (10 ms each) past the speech
MIN_FRAMES = 300
GLANCE_TOKENS = 16  # enough for "please turn on the kitchen light"; a stop word needs two


def glance_text(model: Any, tokenizer: Any, audio: np.ndarray) -> str:
    """`model`: a faster_whisper.WhisperModel; `tokenizer`: its Tokenizer; `audio`: float32, 16 kHz."""
    import ctranslate2

    features = model.feature_extractor(audio)
    frames = features.shape[-1]
    width = min(3000, max(frames + MARGIN_FRAMES, MIN_FRAMES))
    window = np.zeros((features.shape[0], width), dtype=np.float32)
    window[:, : min(frames, width)] = features[:, :width]
    prompt = [*tokenizer.sot_sequence, tokenizer.no_timestamps]
    result = model.model.generate(
        ctranslate2.StorageView.from_array(window[None]),
        [prompt],
        beam_size=1,
        max_length=GLANCE_TOKENS,
        suppress_blank=True,
    )[0]
    return str(tokenizer.decode([t for t in result.sequences_ids[0] if t < tokenizer.eot])).strip()
