"""A Whisper model loaded the first time it is asked for (asr.second_model_loads: when_needed).

The second model hears again only turns the first model's words would not carry out, and weighs
readings only when unsure: most homes need it rarely, and it costs ~190 MB resident once loaded.
The turn that first needs it waits for the load (~1 s, once); the model then stays.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

import numpy as np

from voiced.devices.vocabulary import HomeVocabulary
from voiced.ear.transcriber import Hearing
from voiced.ear.whisper import WhisperTranscriber

_LOGGER = logging.getLogger(__name__)


class LazyWhisper:
    def __init__(self, load: Callable[[], WhisperTranscriber], name: str) -> None:
        self._load = load
        self._name = name
        self._model: WhisperTranscriber | None = None
        self._home: HomeVocabulary | None = None  # the home's words, kept until there is a model
        self._lock = threading.Lock()  # the ASR thread and a weighing may ask at once

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def _ready(self) -> WhisperTranscriber:
        with self._lock:
            if self._model is None:
                _LOGGER.info("loading the %s Whisper model: first needed now", self._name)
                model = self._load()
                if self._home is not None:
                    model.hear_home(self._home)
                self._model = model
            return self._model

    def transcribe(self, samples: np.ndarray) -> str:
        return self._ready().transcribe(samples)

    def transcribe_scored(self, samples: np.ndarray) -> Hearing:
        return self._ready().transcribe_scored(samples)

    def glance(self, samples: np.ndarray) -> Hearing:
        return self._ready().glance(samples)

    def fit(self, audio: np.ndarray, sentences: Sequence[str]) -> list[float]:
        return self._ready().fit(audio, sentences)

    def hear_home(self, vocabulary: HomeVocabulary) -> None:
        with self._lock:
            self._home = vocabulary
            model = self._model
        if model is not None:
            model.hear_home(vocabulary)
