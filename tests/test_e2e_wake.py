"""End to end: the wake word through the real `voiced run`, spoken audio, simulated devices.

Through a private PulseAudio server (a virtual microphone): without the wake word, no turn;
with it, the command acts (said in the same breath, or after a pause); inside the follow-up
window no wake word is needed, and after it, it is again. The speech is synthesized at test
time by the daemon's own voice, which the bundled model hears. The daemon starts muted
(`wake.muted`), and SIGUSR1 unmutes it and mutes it again.
"""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import Broker
from tests.home import SimulatedHome
from tests.live import LiveDaemon
from tests.pulse import MIC_SINK, PulseServer
from tests.speech_fixtures import synthesizer
from voiced.audio.pcm import silence, write_wav

pytestmark = pytest.mark.e2e


def _say(pulse: PulseServer, path: Path, *lines: str, pause_s: float = 1.0) -> None:
    """Speak `lines` into the virtual microphone (a pause between them), and wait until it is said."""
    voice = synthesizer()
    rate = voice.sample_rate
    parts = [silence(0.3, rate)]
    for line in lines:
        parts += [voice.synthesize(line), silence(pause_s, rate)]
    write_wav(path, np.concatenate(parts), rate)
    subprocess.run(["paplay", f"--device={MIC_SINK}", str(path)], env=pulse.env(), check=True, timeout=60)


def _signal_mute(live: LiveDaemon, muted: bool) -> None:
    """SIGUSR1 toggles the microphone; wait until the daemon says it did."""
    assert live._proc is not None
    last = max((e["t"] for e in live.events() if e["kind"] == "mute_changed"), default=0.0)
    live._proc.send_signal(signal.SIGUSR1)
    live.wait_for("mute_changed", lambda e: e["muted"] is muted and e["t"] > last, timeout=30)


def test_through_pulseaudio_only_the_wake_word_and_its_follow_up_make_turns_and_sigusr1_mutes(
    tmp_path: Path, pulse: PulseServer, broker: Broker
) -> None:
    wake = {"word": "okay_nabu", "follow_up_s": 3, "listen_s": 5, "muted": True}
    live = LiveDaemon(tmp_path, pulse, {"mqtt": {"port": broker.port}, "wake": wake}, log_level="INFO")
    with SimulatedHome(live.config_path, broker.port) as home:
        live.start()
        try:
            # Started muted: not even the wake word is heard. SIGUSR1 unmutes.
            _say(pulse, tmp_path / "0.wav", "Okay Nabu turn on the kitchen light.", pause_s=1.5)
            _signal_mute(live, False)
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
            # Muted again at run time: the wake word and a request go unheard.
            _signal_mute(live, True)
            _say(pulse, tmp_path / "6.wav", "Okay Nabu turn off the living room light.", pause_s=1.5)
            time.sleep(0.5)  # let the recorder receive any command
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
    assert [e["muted"] for e in events if e["kind"] == "mute_changed"] == [True, False, True]
    states = [event["state"] for event in events if event["kind"] == "assistant_state"]
    assert states[:2] == ["idle", "muted"] and states[-1] == "muted", states
    assert "listening" in states and "speaking" in states
