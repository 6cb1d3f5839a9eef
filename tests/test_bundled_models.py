"""Whisper base's weights come from pip in two parts: joined whole, once, and found again."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from voiced.ear.bundled import BASE, _join, bundled_model


def test_the_parts_are_joined_whole_beside_the_small_files_and_a_dead_join_is_cleared(tmp_path: Path) -> None:
    source = tmp_path / "package"
    source.mkdir()
    for name in ("config.json", "tokenizer.json", "vocabulary.json"):
        (source / name).write_text(name)
    parts = (tmp_path / "model.bin.part1", source / "model.bin.part2")
    parts[0].write_bytes(b"first" * 1000)
    parts[1].write_bytes(b"second")
    folder = tmp_path / "models" / "whisper-base"
    folder.mkdir(parents=True)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    leftover = folder / f"model.bin.{dead.stdout.strip()}.joining"
    leftover.write_bytes(b"half a join")
    _join(parts, folder, source)
    assert (folder / "model.bin").read_bytes() == b"first" * 1000 + b"second"
    assert (folder / "tokenizer.json").read_text() == "tokenizer.json"
    assert not leftover.exists() and not list(folder.glob("*.joining"))


def test_the_bundled_base_model_is_a_whole_ctranslate2_folder(tmp_path: Path) -> None:
    folder = bundled_model(BASE, tmp_path)
    assert folder is not None
    assert (folder / "model.bin").stat().st_size > 140_000_000  # both parts: 145 MB
    assert {"config.json", "tokenizer.json"} <= {p.name for p in folder.iterdir()}
    assert bundled_model("large-v3", tmp_path) is None
