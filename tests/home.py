"""A home for end-to-end runs: `voiced simulate` plays the devices, a recorder hears every command."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import TracebackType

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from tests.live import spawn_collecting
from tests.test_e2e_wav import Recorder

READY = "simulator: playing"
UP_WITHIN_S = 60.0  # a start-up deadline: the suite runs two files at once on two cores


def voiced(config: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "voiced", "-c", str(config), *args]


class SimulatedHome:
    def __init__(self, config: Path, port: int, *simulate: str) -> None:
        """`simulate`: options for `voiced simulate` (`--delay-ms`, `--silent DEVICE`...)."""
        self.config = config
        self._port = port
        self._simulate = simulate
        self._output: list[str] = []
        self._simulator: subprocess.Popen[str] | None = None
        self._recorder: Recorder | None = None

    def __enter__(self) -> SimulatedHome:
        try:
            self._start()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _start(self) -> None:
        self._simulator = spawn_collecting(voiced(self.config, "simulate", *self._simulate), self._output)
        deadline = time.monotonic() + UP_WITHIN_S
        while not any(READY in line for line in self._output):
            if time.monotonic() > deadline or self._simulator.poll() is not None:
                raise RuntimeError(f"the simulator did not come up:\n{''.join(self._output)}")
            time.sleep(0.05)
        # It says "playing" even while it still waits for the broker. Zigbee2MQTT retains no device
        # state, but its bridge's retained `online` is the proof that it is connected.
        if not self._bridge_online(deadline - time.monotonic()):
            raise RuntimeError(f"the simulator's bridge never came online:\n{''.join(self._output)}")
        self._recorder = Recorder(self._port)

    def _bridge_online(self, timeout: float) -> bool:
        seen = threading.Event()
        client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        # Retained if it was published before we subscribed, live (retain flag cleared) if after.
        client.on_message = lambda _c, _u, m: seen.set() if b'"online"' in m.payload else None
        client.on_connect = lambda c, *_: c.subscribe("zigbee2mqtt/bridge/state", qos=1)
        client.connect("127.0.0.1", self._port)
        client.loop_start()
        try:
            return seen.wait(max(0.1, timeout))
        finally:
            client.loop_stop()
            client.disconnect()

    def __exit__(
        self, _type: type[BaseException] | None, _exc: BaseException | None, _tb: TracebackType | None
    ) -> None:
        if self._recorder is not None:
            self._recorder.close()
        if self._simulator is not None:
            self._simulator.send_signal(signal.SIGTERM)
            try:
                self._simulator.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._simulator.kill()
                self._simulator.wait(timeout=10)
                raise

    def run(
        self, wav: Path, out: Path, *extra: str, timeout: float = 300
    ) -> subprocess.CompletedProcess[str]:
        """`voiced run -v` on the spoken `wav` (in real time), replies written to `out`."""
        return subprocess.run(
            voiced(self.config, "run", "-v", "--input", str(wav), "--output", str(out), *extra),
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def published(self) -> list[tuple[str, dict[str, object]]]:
        """Every command the devices were sent since the last call."""
        assert self._recorder is not None
        return self._recorder.drain()
