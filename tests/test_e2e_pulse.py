"""End to end through real audio devices: a private PulseAudio server with a virtual microphone
and a virtual speaker, `voiced run` on sounddevice's `pulse` device, a real Mosquitto broker."""

from __future__ import annotations

import contextlib
import json
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import paho.mqtt.client as mqtt
import pytest
import yaml
from paho.mqtt.enums import CallbackAPIVersion

from tests.conftest import REPO, Broker
from tests.pulse import MIC_SINK, SPEAKER_SINK, PulseServer
from tests.speech_fixtures import synthesizer
from voiced.audio.pcm import rms_dbfs, silence, write_wav

REC_RATE = 16000
TOPIC = "zigbee2mqtt/kitchen_light/set"


def wait_until(what: str, check: Callable[[], bool], timeout: float, report: Callable[[], str]) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {what}\n{report()}")
        time.sleep(0.1)


def frame_dbfs(samples: np.ndarray, frame_s: float = 0.03) -> list[float]:
    step = int(REC_RATE * frame_s)
    return [rms_dbfs(samples[i : i + step]) for i in range(0, len(samples) - step + 1, step)]


def loudest_second_dbfs(samples: np.ndarray) -> float:
    starts = range(0, max(1, len(samples) - REC_RATE + 1), REC_RATE // 10)
    return max(rms_dbfs(samples[i : i + REC_RATE]) for i in starts)


def write_request(path: Path) -> None:
    """The request as the person in the room says it; silence after lets the VAD hangover close."""
    tts = synthesizer()
    rate = tts.sample_rate
    voice = tts.synthesize("Turn on the kitchen light.")
    write_wav(path, np.concatenate([silence(0.3, rate), voice, silence(1.5, rate)]), rate)


def write_config(tmp_path: Path, broker: Broker) -> Path:
    config = {
        "devices_dir": str(REPO / "devices"),
        "models_dir": str(REPO / "models"),
        "audio": {"input_device": "pulse", "output_device": "pulse"},
        "mqtt": {"port": broker.port, "client_id": "voiced-e2e"},
        "web": {"port": 0},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def subscribe(stack: contextlib.ExitStack, broker: Broker, received: queue.Queue[bytes]) -> None:
    client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, client_id="e2e-watcher")
    subscribed = threading.Event()
    client.on_message = lambda _c, _u, message: received.put(bytes(message.payload))
    client.on_subscribe = lambda *_args: subscribed.set()
    client.connect("127.0.0.1", broker.port)
    client.loop_start()
    stack.callback(client.disconnect)
    stack.callback(client.loop_stop)
    client.subscribe(TOPIC, qos=1)
    assert subscribed.wait(10), "test subscriber got no SUBACK from the broker within 10 s"


def spawn(stack: contextlib.ExitStack, args: list[str], **kwargs: Any) -> subprocess.Popen[Any]:
    proc: subprocess.Popen[Any] = subprocess.Popen(args, **kwargs)

    def kill() -> None:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)

    stack.callback(kill)
    return proc


@pytest.mark.e2e
def test_spoken_command_through_pulseaudio_devices(
    tmp_path: Path, broker: Broker, pulse: PulseServer
) -> None:
    request = tmp_path / "request.wav"
    write_request(request)
    recording, events = tmp_path / "speaker.raw", tmp_path / "events.jsonl"
    received: queue.Queue[bytes] = queue.Queue()
    output: list[str] = []

    def report() -> str:
        logged = events.read_text() if events.exists() else "(no events file)"
        return (
            f"daemon output:\n{''.join(output)}\nevents:\n{logged}\n"
            f"pulseaudio log tail:\n{pulse.log.read_text()[-2000:]}"
        )

    def recorded() -> np.ndarray:
        raw = recording.read_bytes()
        return np.frombuffer(raw[: len(raw) // 2 * 2], dtype=np.int16)

    with contextlib.ExitStack() as stack:
        subscribe(stack, broker, received)
        rec_args = [f"--device={SPEAKER_SINK}.monitor", f"--rate={REC_RATE}", "--channels=1"]
        with recording.open("wb") as out:
            spawn(
                stack,
                ["parec", *rec_args, "--format=s16le", "--latency-msec=20"],
                env=pulse.env(),
                stdout=out,
            )
        env = pulse.env() | {"PULSE_SOURCE": f"{MIC_SINK}.monitor", "PULSE_SINK": SPEAKER_SINK}
        config = write_config(tmp_path, broker)
        daemon = spawn(
            stack,
            [sys.executable, "-m", "voiced", "-c", str(config), "run", "--events", str(events)],
            env=env,
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        stream = daemon.stdout
        assert stream is not None
        reader = threading.Thread(target=lambda: output.extend(stream), daemon=True)
        reader.start()

        wait_until(
            "the daemon's ready line", lambda: any("voiced is ready" in s for s in output), 120, report
        )

        def mic_open() -> bool:
            return pulse.source_outputs_of(f"{MIC_SINK}.monitor") > 0

        wait_until("the daemon to open the microphone", mic_open, 15, report)
        wait_until("0.5 s from the speaker recorder", lambda: recording.stat().st_size > REC_RATE, 15, report)
        before = recorded()
        assert max(frame_dbfs(before)) < -60, "the virtual speaker was not silent before the command"

        play = subprocess.run(
            ["paplay", f"--device={MIC_SINK}", str(request)], env=pulse.env(), capture_output=True, timeout=30
        )
        assert play.returncode == 0, f"paplay failed: {play.stderr!r}"
        try:
            payload = received.get(timeout=30)
        except queue.Empty:
            pytest.fail(f"nothing published on {TOPIC} within 30 s\n{report()}")
        assert json.loads(payload) == {"state": "ON"}, payload

        def finished() -> bool:
            return events.exists() and '"kind": "turn_finished"' in events.read_text()

        wait_until("the spoken reply to finish", finished, 30, report)
        time.sleep(0.5)  # the recorder's own latency
        reply = recorded()[len(before) :]
        write_wav(tmp_path / "speaker.wav", reply, REC_RATE)  # for a listen after a failure
        audible_s = sum(1 for db in frame_dbfs(reply) if db > -50) * 0.03
        loudest = loudest_second_dbfs(reply)
        assert loudest > -40, f"reply too quiet: loudest second {loudest:.1f} dBFS\n{report()}"
        assert audible_s >= 0.5, f"only {audible_s:.2f} s of audible reply\n{report()}"
        assert received.empty(), f"unexpected extra commands: {list(received.queue)}"

        daemon.send_signal(signal.SIGTERM)
        try:
            code = daemon.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pytest.fail(f"daemon did not exit within 10 s of SIGTERM\n{report()}")
        reader.join(timeout=5)
        assert code == 0, f"daemon exited with {code}\n{report()}"
        assert any(f"-> {TOPIC} " in line for line in output), report()
