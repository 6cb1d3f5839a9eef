"""End to end: the wake word through the real `voiced run`, spoken audio, simulated devices.

Through a private PulseAudio server (a virtual microphone): without the wake word, no turn;
with it, the command acts (said in the same breath, or after a pause); inside the follow-up
window no wake word is needed, and after it, it is again. The speech is synthesized at test
time by the daemon's own voice, which the bundled model hears. SIGUSR1 mutes and unmutes a
running daemon (`voiced run --input`).
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import REPO, Broker
from tests.home import SimulatedHome, voiced
from tests.live import LiveDaemon, spawn_collecting
from tests.pulse import MIC_SINK, PulseServer
from tests.speech_fixtures import synthesizer
from voiced.audio.pcm import EAR_RATE, resample_band_limited, silence, write_wav

pytestmark = pytest.mark.e2e


def _config(tmp_path: Path, port: int, wake: str) -> Path:
    config = tmp_path / "config.yaml"
    config.write_text(
        f"devices_dir: {REPO / 'devices'}\nweb:\n  port: 0\nmqtt:\n  port: {port}\n  connect_timeout_s: 3\n"
        f"wake:\n{wake}"
    )
    return config


@pytest.fixture
def pulse(tmp_path: Path) -> Iterator[PulseServer]:
    server = PulseServer(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def _say(pulse: PulseServer, path: Path, *lines: str, pause_s: float = 1.0) -> None:
    """Speak `lines` into the virtual microphone (a pause between them), and wait until it is said."""
    voice = synthesizer()
    rate = voice.sample_rate
    parts = [silence(0.3, rate)]
    for line in lines:
        parts += [voice.synthesize(line), silence(pause_s, rate)]
    write_wav(path, np.concatenate(parts), rate)
    subprocess.run(["paplay", f"--device={MIC_SINK}", str(path)], env=pulse.env(), check=True, timeout=60)


def test_through_pulseaudio_only_the_wake_word_and_its_follow_up_make_turns(
    tmp_path: Path, pulse: PulseServer, broker: Broker
) -> None:
    wake = {"word": "okay_nabu", "follow_up_s": 3, "listen_s": 5}
    live = LiveDaemon(tmp_path, pulse, {"mqtt": {"port": broker.port}, "wake": wake}, log_level="INFO")
    with SimulatedHome(live.config_path, broker.port) as home:
        live.start()
        try:
            # Overheard, without the wake word: no turn. Then the word and the request in one breath.
            _say(pulse, tmp_path / "1.wav", "Turn on the kitchen light.")
            _say(pulse, tmp_path / "2.wav", "Okay Nabu turn on the bedroom light.")
            on = live.wait_for("command_sent", lambda e: e["device"] == "bedroom_light", timeout=60)
            live.wait_for("turn_finished", lambda e: e["turn"] == on["turn"], timeout=30)
            # Inside the follow-up window: no wake word needed.
            _say(pulse, tmp_path / "3.wav", "Turn off the bedroom light.")
            off = live.wait_for("command_sent", lambda e: e["turn"] > on["turn"], timeout=60)
            live.wait_for("wake_window_closed", lambda e: e["t"] > off["t"], timeout=30)
            # The window has shut: overheard again. Then the word alone, and the request after a pause.
            _say(pulse, tmp_path / "4.wav", "Turn on the kitchen light.")
            _say(pulse, tmp_path / "5.wav", "Okay Nabu.", "Turn on the living room light.")
            live.wait_for("command_sent", lambda e: e["device"] == "living_room_light", timeout=60)
            time.sleep(0.5)  # let the recorder receive the last command
            published = home.published()
            events = live.events()
        finally:
            code = live.stop()
            (tmp_path / "daemon.log").write_text("".join(live.output))
    assert code == 0
    assert published == [
        ("zigbee2mqtt/bedroom_light/set", {"state": "ON"}),
        ("zigbee2mqtt/bedroom_light/set", {"state": "OFF"}),
        ("zigbee2mqtt/living_room_light/set", {"state": "ON"}),
    ], live.report()
    kinds = [event["kind"] for event in events]
    assert kinds.count("wake_word") == 2, live.report()
    heard = [str(event["text"]).lower() for event in events if event["kind"] == "transcript"]
    assert len(heard) == 3, heard  # the overheard requests were never even transcribed
    assert "nabu" not in heard[0] and "bedroom" in heard[0], heard  # the turn starts after the word
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
