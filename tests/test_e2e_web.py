"""The dashboard in a real browser (Debian's headless Chromium) against the real `voiced run`.

A spoken WAV turn shows in the transcript and its device tile changes; a command typed in the
page's text box is handled like a spoken one; after a daemon restart the page comes back live.
The screenshot is kept under out/ as a CI artifact.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from tests.browser import headless_chromium
from tests.conftest import REPO, Broker, free_port
from tests.home import SimulatedHome, voiced
from tests.live import spawn_collecting
from tests.speech_fixtures import synthesizer
from voiced.audio.pcm import EAR_RATE, silence, write_wav
from voiced.demo import speak_script

pytestmark = pytest.mark.e2e

OUT = REPO / "out"


def write_config(tmp_path: Path, broker: Broker, web_port: int) -> Path:
    config = tmp_path / "config.yaml"
    config.write_text(
        f"devices_dir: {REPO / 'devices'}\nmqtt:\n  port: {broker.port}\n  connect_timeout_s: 3\n"
        f"web:\n  port: {web_port}\n"
    )
    return config


def until(check: Callable[[], object], timeout: float, what: str, output: list[str]) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except Exception:
            pass
        time.sleep(0.1)
    raise AssertionError(f"{what} within {timeout} s; daemon said:\n{''.join(output[-40:])}")


def healthy(port: int) -> bool:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as response:
        return bool(json.load(response)["ok"])


def tile_state(driver: WebDriver, device: str) -> dict[str, object]:
    raw = driver.find_element(By.CSS_SELECTOR, f'.card[data-device="{device}"]').get_attribute("data-state")
    return json.loads(raw or "null") or {}


def test_the_dashboard_shows_a_spoken_turn_takes_a_typed_one_and_survives_a_restart(
    tmp_path: Path, broker: Broker
) -> None:
    OUT.mkdir(exist_ok=True)
    port = free_port()
    config = write_config(tmp_path, broker, port)
    # Silence first, so the page is open before the words; silence after, for the typed turn.
    speech = speak_script(synthesizer(), ["Turn on the kitchen light."])
    wav = tmp_path / "spoken.wav"
    write_wav(wav, np.concatenate([silence(8.0, EAR_RATE), speech, silence(40.0, EAR_RATE)]), EAR_RATE)
    output: list[str] = []
    with SimulatedHome(config, broker.port) as home:
        command = voiced(config, "run", "--input", str(wav), "--output", str(tmp_path / "out.wav"))
        daemon = spawn_collecting(command, output)
        driver = headless_chromium()
        try:
            until(lambda: healthy(port), 60, "the web server did not answer", output)
            driver.get(f"http://127.0.0.1:{port}/")
            link = driver.find_element(By.ID, "link")
            until(lambda: link.text == "live", 10, "the page did not connect", output)
            until(
                lambda: tile_state(driver, "kitchen_light").get("state") == "OFF",
                10,
                "the kitchen light's tile showed no state",
                output,
            )
            transcript = driver.find_element(By.ID, "transcript")
            until(
                lambda: "kitchen light" in transcript.text.lower(),
                30,
                "no spoken turn in the transcript",
                output,
            )
            until(
                lambda: tile_state(driver, "kitchen_light").get("state") == "ON",
                5,
                "the kitchen light's tile did not change after the spoken turn",
                output,
            )
            assert any(topic.endswith("kitchen_light/set") for topic, _ in home.published())

            box = driver.find_element(By.ID, "say-text")
            box.send_keys("turn off the kitchen light")
            driver.find_element(By.CSS_SELECTOR, "#say button").click()
            result = driver.find_element(By.ID, "say-result")
            until(lambda: "Done: Kitchen light: off" in result.text, 30, "the typed turn did nothing", output)
            until(
                lambda: tile_state(driver, "kitchen_light").get("state") == "OFF",
                5,
                "the tile did not change after the typed turn",
                output,
            )
            assert "turn off the kitchen light" in transcript.text.lower()
            until(lambda: driver.find_elements(By.CSS_SELECTOR, "#chart rect"), 5, "no latency chart", output)
            driver.save_screenshot(str(OUT / "web-dashboard.png"))

            # A restart: the page notices, and comes back live on its own.
            daemon.send_signal(signal.SIGTERM)
            assert daemon.wait(timeout=30) == 0, "".join(output[-40:])
            until(lambda: link.text != "live", 10, "the page did not notice the daemon stopped", output)
            daemon = spawn_collecting(command, output)
            until(lambda: healthy(port), 60, "the restarted web server did not answer", output)
            until(lambda: link.text == "live", 15, "the page did not reconnect after the restart", output)
            mode = driver.find_element(By.ID, "mode")
            until(
                lambda: mode.text in ("idle", "listening", "thinking"), 10, "no state after restart", output
            )
            driver.save_screenshot(str(OUT / "web-dashboard-restarted.png"))
        finally:
            driver.quit()
            if daemon.poll() is None:
                daemon.send_signal(signal.SIGTERM)
                try:
                    daemon.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    daemon.kill()
                    daemon.wait(timeout=10)
