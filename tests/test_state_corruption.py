"""A damaged state file is moved aside (kept, renamed with the time) and a new session starts; a
directory in its place is a clear exit 2. Real SQLite files, corrupted in several ways."""

from __future__ import annotations

import logging
import random
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from voiced.brain.setup import build_brain
from voiced.brain.store import StateStore
from voiced.bus import EventBus
from voiced.config import BrainConfig, Config
from voiced.devices.registry import DeviceRegistry
from voiced.errors import ConfigError

REPO = Path(__file__).resolve().parent.parent
PAGE = 4096


def written(path: Path, sessions: int = 40) -> Path:
    """A real state file, several pages long, checkpointed so the main file holds everything."""
    store = StateStore(path)
    state = store.open_session(new=False)
    for number in range(sessions):
        store.save(state.model_copy(update={"session_id": f"s{number}", "compressed_memory": "x" * 2000}))
    with sqlite3.connect(path) as db:
        db.execute("pragma wal_checkpoint(truncate)")
    return path


def truncated(path: Path) -> None:
    data = written(path).read_bytes()
    path.write_bytes(data[: len(data) // 3])


def random_page_2(path: Path) -> None:
    data = bytearray(written(path).read_bytes())
    data[PAGE : 2 * PAGE] = random.Random(2).randbytes(PAGE)
    path.write_bytes(bytes(data))


def random_header(path: Path) -> None:
    data = bytearray(written(path).read_bytes())
    data[:100] = random.Random(3).randbytes(100)
    path.write_bytes(bytes(data))


def other_schema(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("create table states (id integer primary key, payload blob)")
        db.execute("insert into states (payload) values (x'00ff')")


def a_view(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("create view states as select 'a' as session_id, '{}' as body, 'now' as updated")


def text_file(path: Path) -> None:
    path.write_text("session_id,body\n" * 500)


DAMAGE: dict[str, Callable[[Path], None]] = {
    "truncated": truncated,
    "random-bytes-over-page-2": random_page_2,
    "random-header": random_header,
    "another-schema": other_schema,
    "a-view-named-states": a_view,
    "a-text-file": text_file,
}


@pytest.mark.parametrize("damage", DAMAGE.values(), ids=DAMAGE.keys())
def test_a_damaged_file_is_moved_aside_and_a_new_session_starts(
    tmp_path: Path, damage: Callable[[Path], None], caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "state.sqlite"
    damage(path)
    before = path.read_bytes()
    caplog.set_level(logging.INFO)
    store = StateStore(path)
    state = store.open_session(new=False)
    assert store.moved_aside is not None and store.moved_aside.read_bytes() == before  # kept, untouched
    assert store.moved_aside.name.startswith("state.sqlite.damaged-20")
    assert any("moved it aside" in r.getMessage() and "new session" in r.getMessage() for r in caplog.records)
    # The new file works, and the next start resumes it rather than moving anything again.
    again = StateStore(path)
    assert again.moved_aside is None and again.open_session(new=False).session_id == state.session_id


def test_zero_bytes_start_a_new_session_in_place(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite"
    path.write_bytes(b"")
    store = StateStore(path)
    assert store.open_session(new=False).session_id and store.moved_aside is None


def test_a_directory_in_its_place_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "state.sqlite").mkdir()
    with pytest.raises(ConfigError, match=r"brain.state_file: .*state.sqlite is not a file"):
        StateStore(tmp_path / "state.sqlite")


def test_two_damaged_files_in_one_second_are_both_kept(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite"
    kept = []
    for _ in range(2):
        text_file(path)
        kept.append(StateStore(path).moved_aside)
    assert kept[0] != kept[1] and all(p is not None and p.is_file() for p in kept)


def test_the_brain_starts_on_a_damaged_file(tmp_path: Path, registry: DeviceRegistry) -> None:
    path = tmp_path / "state.sqlite"
    random_page_2(path)
    config = Config(brain=BrainConfig(state_file=path, use_llm=False))
    brain = build_brain(config, registry, EventBus())
    assert brain.state.processed_turns == 0
    aside = [p.name for p in tmp_path.glob("state.sqlite.damaged-*") if not p.name.endswith(("-wal", "-shm"))]
    assert len(aside) == 1


def run_state(tmp_path: Path, state_file: str) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "config.yaml"
    config.write_text(f"devices_dir: {REPO / 'devices'}\nbrain:\n  state_file: {state_file}\n")
    command = [sys.executable, "-m", "voiced", "-c", str(config), "state"]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


def test_voiced_state_on_damaged_and_misplaced_files(tmp_path: Path) -> None:
    random_page_2(tmp_path / "state.sqlite")
    damaged = run_state(tmp_path, "state.sqlite")
    assert "Traceback" not in damaged.stderr and "moved it aside" in damaged.stderr
    assert damaged.returncode == 1 and "no conversation state" in damaged.stderr  # honest: none left
    (tmp_path / "folder.sqlite").mkdir()
    folder = run_state(tmp_path, "folder.sqlite")
    assert folder.returncode == 2 and "Traceback" not in folder.stderr
    assert "brain.state_file" in folder.stderr and "is not a regular file" in folder.stderr
