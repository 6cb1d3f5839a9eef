"""Scenes kept across a restart, in-process: the real broker and simulator, the scene checkpointed to
SQLite, the vibe agent stopped mid-scene and a new one opened on the same files (the daemon restarted)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import Broker
from tests.test_vibe import config_for
from tests.vibe_home import Home, write_presets
from voiced.config import Config, load_config
from voiced.console import thought
from voiced.devices.registry import DeviceRegistry
from voiced.errors import ConfigError

LIGHT = "zigbee2mqtt/living_room_light/set"
PRESETS = """
relax:
  keywords: [relax]
  steps:
    - {tool: set_light, device: living_room_light, state: "on", brightness_pct: 30}
    - {tool: set_light, device: living_room_light, brightness_pct: 60}
    - {tool: set_light, device: living_room_light, brightness_pct: 90}
    - {tool: set_scent, device: diffuser, state: "on", scent: lavender, intensity: 40}
focus:
  keywords: [focus]
  steps:
    - {tool: set_light, device: kitchen_light, state: "on", brightness_pct: 100}
"""


def _config(broker: Broker, tmp_path: Path, **vibe: object) -> Config:
    presets = write_presets(tmp_path / "scenes.yaml", PRESETS)
    return config_for(broker, presets_file=presets, confirm_timeout_s=5.0, **vibe)


def _settled(home: Home) -> bool:
    """The light shows the last brightness it was sent (the simulator reports after its delay)."""
    last = [json.loads(payload) for _t, topic, payload in home.watcher.commands() if topic == LIGHT][-1]
    return (home.gateway.state_of("living_room_light") or {}).get("brightness") == last["brightness"]


def test_a_scene_stopped_mid_way_resumes_and_sends_only_what_was_not_done(
    broker: Broker, registry: DeviceRegistry, tmp_path: Path
) -> None:
    async def scenario() -> None:
        home = Home(
            broker,
            registry,
            _config(broker, tmp_path),
            simulator_options={"delay_s": 0.6},
            checkpoint=tmp_path / "scenes.sqlite",
        )
        async with home:
            await home.vibe.start("help me relax", turn=1)
            # The scent and the light's first two steps confirmed, its third on its way: the daemon
            # stops. (Not as the scent's lane ends: a run cancelled in the middle of a checkpoint's
            # write can keep the file locked for another connection of this process.)
            light = lambda: [e for e in home.of("vibe_tool_end", "vibe-1") if e.tool == "set_light"]  # noqa: E731
            await home.until(lambda: len(light()) == 2, "the second light step to be confirmed")
            await home.vibe.aclose(finish_s=0)
            await home.until(lambda: home.of("vibe_cancelled", "vibe-1"), "the stop's event")
            stopped = home.of("vibe_cancelled", "vibe-1")
            assert [e.reason for e in stopped] == ["the daemon is stopping"]
            await home.until(lambda: _settled(home), "the light to show what it was sent")
            before = len(home.watcher.commands())
            assert before in (3, 4)  # the scent, two light steps, and the third or not

            again = home.scenes()
            try:
                assert await again.open() == ["vibe-1"]
                await home.until(lambda: home.of("vibe_resumed"), "the resume's event")
                resumed = home.of("vibe_resumed", "vibe-1")
                assert len(resumed) == 1 and resumed[0].request == "help me relax"
                assert resumed[0].steps_done == 3 and resumed[0].steps_left == 1
                await home.until(lambda: home.of("vibe_complete", "vibe-1"), "the resumed scene to complete")
                assert again.running is None
            finally:
                await again.aclose()
            sent = [(topic, payload) for _t, topic, payload in home.watcher.commands()]
            # Every step exactly once across the stop and the resume.
            assert sorted(sent) == sorted(
                [
                    (LIGHT, '{"state":"ON","brightness":76}'),
                    (LIGHT, '{"brightness":152}'),
                    (LIGHT, '{"brightness":229}'),
                    ("zigbee2mqtt/diffuser/set", '{"state":"ON","scent":"lavender","intensity":40}'),
                ]
            ), sent
            assert home.gateway.state_of("living_room_light")["brightness"] == 229  # type: ignore[index]

    asyncio.run(scenario())


def test_a_cancelled_replaced_or_too_old_scene_is_not_resumed(
    broker: Broker, registry: DeviceRegistry, tmp_path: Path
) -> None:
    async def scenario() -> None:
        config = _config(broker, tmp_path)
        home = Home(
            broker, registry, config, simulator_options={"delay_s": 0.6}, checkpoint=tmp_path / "s.sqlite"
        )
        async with home:
            await home.vibe.start("help me relax", turn=1)  # vibe-1, replaced by vibe-2
            await home.vibe.start("focus", turn=2)  # vibe-2, cancelled ("never mind")
            await home.vibe.cancel("the user asked to stop the scene")
            await home.vibe.start("help me relax", turn=3)  # vibe-3: cut off by the stop
            await home.until(lambda: home.watcher.commands(), "a command of vibe-3")
            await home.vibe.aclose(finish_s=0)
            await asyncio.sleep(0.5)

            old = config.model_copy(update={"vibe": config.vibe.model_copy(update={"resume_within_s": 0.3})})
            later = home.scenes(old)
            try:
                sent = len(home.watcher.commands())
                assert await later.open() == []
                await asyncio.sleep(1.0)  # a resumed step would have gone out by now
                assert len(home.watcher.commands()) == sent
            finally:
                await later.aclose()
            assert home.of("vibe_resumed") == []
            await home.until(lambda: home.of("vibe_dropped"), "the drop's event")
            dropped = home.of("vibe_dropped")
            assert [e.task_id for e in dropped] == ["vibe-3"]
            assert "too long ago" in dropped[0].reason and "vibe.resume_within_s" in dropped[0].reason
            assert (thought(dropped[0]) or "").startswith("[VIBE] vibe-3 not resumed: it began ")

            # Dropped is final: the next start finds nothing to resume, and numbers on.
            last = home.scenes()
            try:
                assert await last.open() == []
                assert (await last.start("focus", turn=1)).startswith("scene vibe-4 ")
                await home.until(lambda: home.of("vibe_complete", "vibe-4"), "vibe-4 to complete")
            finally:
                await last.aclose()
            completed = home.scenes()  # nor is a scene that completed
            try:
                assert await completed.open() == []
            finally:
                await completed.aclose()
            assert len(home.of("vibe_dropped")) == 1 and home.of("vibe_resumed") == []

    asyncio.run(scenario())


def test_the_scenes_checkpoints_go_beside_the_plans_unless_configured(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("brain:\n  state_file: state/voiced.sqlite\n")
    (tmp_path / "state").mkdir()
    loaded = load_config(config, {})
    assert loaded.vibe.checkpoint_file == tmp_path / "state" / "voiced-scenes.sqlite"
    assert loaded.vibe.checkpoint_file.parent == loaded.plans.checkpoint_file.parent  # type: ignore[union-attr]
    assert loaded.vibe.resume_within_s == 300
    config.write_text("vibe:\n  checkpoint_file: s.sqlite\n  resume_within_s: 60\n")
    loaded = load_config(config, {})
    assert (loaded.vibe.checkpoint_file, loaded.vibe.resume_within_s) == (tmp_path / "s.sqlite", 60)
    config.write_text("vibe:\n  resume_within_s: -1\n")
    with pytest.raises(ConfigError, match=r"vibe\.resume_within_s"):
        load_config(config, {})


@pytest.mark.parametrize("damaged", ["scenes.sqlite", "scenes-ledger.sqlite"])
def test_a_damaged_scene_file_is_moved_aside_and_scenes_are_kept_on_a_fresh_one(
    broker: Broker, registry: DeviceRegistry, tmp_path: Path, caplog: pytest.LogCaptureFixture, damaged: str
) -> None:
    (tmp_path / damaged).write_bytes(b"not a database " * 300)

    async def scenario() -> None:
        home = Home(broker, registry, _config(broker, tmp_path), checkpoint=tmp_path / "scenes.sqlite")
        async with home:
            await home.vibe.start("focus", turn=1)
            await home.until(lambda: home.of("vibe_complete", "vibe-1"), "the scene to complete")

    asyncio.run(scenario())
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and f"{damaged} is damaged (file is not a database)" in errors[0], errors
    aside = list(tmp_path.glob(f"{damaged}.damaged-20*"))
    assert len(aside) == 1 and aside[0].read_bytes().startswith(b"not a database")  # kept as it was
    assert f"moved it aside to {aside[0]}" in errors[0]
    with sqlite3.connect(tmp_path / "scenes-ledger.sqlite") as db:  # kept on the fresh files
        assert db.execute("select task_id, finished from plan_index").fetchall() == [("vibe-1", 1)]
