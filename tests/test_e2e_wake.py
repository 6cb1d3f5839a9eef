"""End to end: the wake word through the real `voiced run`, spoken audio, simulated devices.

Without the wake word, no turn; with it, the command acts (said in the same breath, or after
a pause); inside the follow-up window no wake word is needed, and after it, it is again. The
speech is synthesized at test time by the daemon's own voice, which the bundled model hears.
SIGUSR1 mutes and unmutes the running daemon.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import REPO, Broker
from tests.home import SimulatedHome, voiced
from tests.live import spawn_collecting
from tests.speech_fixtures import synthesizer
from voiced.audio.pcm import EAR_RATE, resample_band_limited, silence, write_wav

pytestmark = pytest.mark.e2e

# (words, then seconds of silence); None: the words are said without the wake word.
SCRIPT: list[tuple[str, float]] = [
    ("Turn on the kitchen light.", 2.0),  # overheard: no turn
    ("Okay Nabu turn on the bedroom light.", 3.0),  # in one breath
    ("Turn off the bedroom light.", 9.0),  # inside the follow-up window
    ("Turn on the kitchen light.", 2.0),  # the window has shut: no turn
    ("Okay Nabu.", 1.2),  # the wake word alone, then the request after a pause
    ("Turn on the living room light.", 2.5),
]


def _config(tmp_path: Path, port: int, wake: str) -> Path:
    config = tmp_path / "config.yaml"
    config.write_text(
        f"devices_dir: {REPO / 'devices'}\nweb:\n  port: 0\nmqtt:\n  port: {port}\n  connect_timeout_s: 3\n"
        f"wake:\n{wake}"
    )
    return config


def _script_wav(path: Path) -> Path:
    voice = synthesizer()
    parts = [silence(1.0, EAR_RATE)]
    for words, gap_s in SCRIPT:
        spoken = resample_band_limited(voice.synthesize(words), voice.sample_rate, EAR_RATE)
        parts += [spoken, silence(gap_s, EAR_RATE)]
    write_wav(path, np.concatenate(parts), EAR_RATE)
    return path


def _events(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_only_the_wake_word_and_its_follow_up_make_turns(tmp_path: Path, broker: Broker) -> None:
    config = _config(tmp_path, broker.port, "  word: okay_nabu\n  follow_up_s: 4\n  listen_s: 5\n")
    wav = _script_wav(tmp_path / "in.wav")
    events_file = tmp_path / "events.jsonl"
    with SimulatedHome(config, broker.port) as home:
        done = home.run(wav, tmp_path / "out.wav", "--events", str(events_file), timeout=240)
        assert done.returncode == 0, done.stderr[-3000:]
        published = home.published()
    assert published == [
        ("zigbee2mqtt/bedroom_light/set", {"state": "ON"}),
        ("zigbee2mqtt/bedroom_light/set", {"state": "OFF"}),
        ("zigbee2mqtt/living_room_light/set", {"state": "ON"}),
    ], done.stdout
    events = _events(events_file)
    kinds = [event["kind"] for event in events]
    assert kinds.count("wake_word") == 2, done.stdout
    assert "wake_window_closed" in kinds
    heard = [str(event["text"]).lower() for event in events if event["kind"] == "transcript"]
    assert len(heard) == 3, heard  # the overheard commands were never even transcribed
    assert "nabu" not in heard[0] and "bedroom" in heard[0], heard  # the turn starts after the word
    assert "wake_word" in done.stdout  # shown in `voiced run -v`
    states = [event["state"] for event in events if event["kind"] == "assistant_state"]
    assert "listening" in states and "speaking" in states


def test_sigusr1_mutes_and_unmutes_a_daemon_that_started_muted(tmp_path: Path, broker: Broker) -> None:
    config = _config(tmp_path, broker.port, "  muted: true\n")
    voice = synthesizer()

    def say(words: str) -> np.ndarray:
        return resample_band_limited(voice.synthesize(words), voice.sample_rate, EAR_RATE)

    wav = tmp_path / "in.wav"
    parts = [silence(1.0, EAR_RATE), say("Turn on the bedroom light."), silence(5.5, EAR_RATE)]
    parts += [say("Turn on the kitchen light."), silence(6.0, EAR_RATE)]
    parts += [say("Turn off the kitchen light."), silence(2.0, EAR_RATE)]
    write_wav(wav, np.concatenate(parts), EAR_RATE)
    out: list[str] = []
    with SimulatedHome(config, broker.port) as home:
        run = voiced(config, "run", "-v", "--input", str(wav), "--output", str(tmp_path / "out.wav"))
        proc = spawn_collecting(run, out)
        try:
            _wait_for(out, "ready", proc)
            # The first request (1.0-2.6 s of the input, paced in real time) passes while muted.
            time.sleep(6.0)
            proc.send_signal(signal.SIGUSR1)
            _wait_for(out, "command_sent", proc)  # unmuted: the second request acts
            proc.send_signal(signal.SIGUSR1)  # muted again before the third (2.5 s later at least)
            assert proc.wait(timeout=120) == 0
        finally:
            proc.kill()
        published = home.published()
    shown = "".join(out)
    assert published == [("zigbee2mqtt/kitchen_light/set", {"state": "ON"})], shown
    mutes = [line.split("mute_changed", 1)[1].strip() for line in out if "mute_changed" in line]
    assert mutes == ['{"muted":true}', '{"muted":false}', '{"muted":true}'], shown
    assert shown.count('"state":"muted"') == 2, shown


def _wait_for(out: list[str], text: str, proc: subprocess.Popen[str]) -> None:
    """Until `text` is in the output; 120 s at most."""
    deadline = time.monotonic() + 120
    while text not in "".join(out):
        if time.monotonic() > deadline or proc.poll() is not None:
            raise AssertionError(f"never saw {text!r}:\n{''.join(out)[-3000:]}")
        time.sleep(0.05)
