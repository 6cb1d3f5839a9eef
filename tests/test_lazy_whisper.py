"""The second Whisper model loaded the first time a turn needs it (real Whisper base)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from voiced.config import load_config
from voiced.devices.registry import DeviceRegistry
from voiced.ear.lazy_whisper import LazyWhisper
from voiced.engines import load_engines

ROOT = Path(__file__).parent.parent


def test_the_second_model_waits_for_its_first_turn_then_hears(tmp_path: Path) -> None:
    config = load_config(ROOT / "config.yaml", {})
    registry = DeviceRegistry.load(ROOT / "devices")
    engines = load_engines(config, registry)
    second = engines.second
    assert isinstance(second, LazyWhisper) and not second.loaded
    silence = np.zeros(16000, dtype=np.int16)
    heard = second.transcribe_scored(silence)
    assert second.loaded and isinstance(heard.text, str)
    fits = second.fit(silence.astype(np.float32), ["turn on the kitchen light", "play some jazz"])
    assert len(fits) == 2 and all(isinstance(f, float) for f in fits)


def test_at_start_loads_it_with_the_rest() -> None:
    config = load_config(ROOT / "config.yaml", {})
    config = config.model_copy(
        update={"asr": config.asr.model_copy(update={"second_model_loads": "at_start"})}
    )
    engines = load_engines(config, DeviceRegistry.load(ROOT / "devices"))
    assert engines.second is not None and not isinstance(engines.second, LazyWhisper)
