"""The dashboard's Rooms panel in Debian's headless Chromium, against the whole daemon with a real
wyoming-satellite in the kitchen, a real Mosquitto and the device simulator: the kitchen row shows
the satellite connected, then what was heard and said there; a page opened afterwards shows it
from its first paint. A screenshot goes to out/dashboard/ (CI artefacts)."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
import yaml
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from tests.browser import headless_chromium
from tests.conftest import REPO, Broker, free_port
from tests.home import SimulatedHome
from tests.satellites import Satellite
from tests.speech_fixtures import spoken
from tests.test_e2e_satellites import REPLY_WITHIN_S, Daemon, engines, home, workdir, write_config
from tests.test_e2e_web import until
from voiced.app import RunOptions, run_daemon
from voiced.audio.sinks import WavFileSink
from voiced.ear.typed import TypedTurns
from voiced.engines import Engines
from voiced.web.server import bind

pytestmark = pytest.mark.e2e
__all__ = ["engines", "home", "workdir"]  # the satellites' fixtures, used here by name
SHOTS = REPO / "out" / "dashboard"


class WebDaemon(Daemon):
    """The satellites' daemon, with the web server on."""

    def start(self) -> None:
        source = TypedTurns.from_stream(io.FileIO(self._read_end, "rb"))
        sink = WavFileSink(self.local_output, self._engines.synthesizer.sample_rate)
        options = RunOptions(events_file=self.events.path, web_socket=bind(self.config.web))
        run = run_daemon(self.config, self.registry, self._engines, source, sink, options)
        self.task = asyncio.create_task(run, name="daemon")


def cell(driver: WebDriver, satellite: str, part: str) -> str:
    row = driver.find_element(By.CSS_SELECTOR, f'#rooms tr[data-satellite="{satellite}"]')
    return str(row.find_element(By.CSS_SELECTOR, part).text)


def test_the_rooms_panel_shows_the_kitchen_satellite_what_it_heard_and_said(
    workdir: Path, broker: Broker, home: SimulatedHome, engines: Engines
) -> None:
    kitchen = Satellite(workdir, "kitchen_satellite")
    kitchen.start()
    try:
        config = write_config(
            workdir, broker, [{"name": kitchen.name, "uri": kitchen.uri, "room": "kitchen"}]
        )
        web_port = free_port()
        settings = yaml.safe_load(config.read_text())
        settings["web"] = {"port": web_port}
        config.write_text(yaml.safe_dump(settings))
        asyncio.run(asyncio.wait_for(_rooms(workdir, config, kitchen, engines, web_port), 180))
    finally:
        kitchen.stop()


async def _rooms(workdir: Path, config: Path, kitchen: Satellite, engines: Engines, port: int) -> None:
    daemon = WebDaemon(workdir, config, engines)
    daemon.start()
    try:
        await daemon.events.count("satellite_connected", kitchen.name, 1, 60)
        await asyncio.to_thread(_browse, kitchen, f"http://127.0.0.1:{port}/")
    finally:
        await daemon.stop()


def _browse(kitchen: Satellite, url: str) -> None:
    output: list[str] = []
    driver = headless_chromium()
    try:
        driver.get(url)
        until(lambda: driver.find_element(By.ID, "rooms-panel").is_displayed(), 15, "the rooms panel", output)
        until(lambda: cell(driver, kitchen.name, ".link") == "connected", 15, "kitchen connected", output)
        assert driver.find_element(By.CSS_SELECTOR, "#rooms td").text == "kitchen"
        assert cell(driver, kitchen.name, ".heard") == ""

        kitchen.say(spoken("Turn on the kitchen light."))
        until(
            lambda: "kitchen light" in cell(driver, kitchen.name, ".heard").lower(),
            REPLY_WITHIN_S,
            "heard",
            output,
        )
        until(lambda: cell(driver, kitchen.name, ".said") != "", REPLY_WITHIN_S, "said", output)
        until(lambda: cell(driver, kitchen.name, ".state") == "idle", REPLY_WITHIN_S, "the turn over", output)
        heard, said = cell(driver, kitchen.name, ".heard"), cell(driver, kitchen.name, ".said")
        assert "kitchen" in said.lower(), said
        # The conversation has the same turn, whole: who said it where, the reply, what was done.
        entry = driver.find_element(By.CSS_SELECTOR, "#transcript li.turn:last-child")
        until(lambda: entry.find_element(By.CSS_SELECTOR, ".done").text != "", 15, "done", output)
        said_here = entry.find_element(By.CSS_SELECTOR, ".heard").text
        assert said_here.startswith("You (kitchen)") and heard in said_here, entry.text
        assert "kitchen" in entry.find_element(By.CSS_SELECTOR, ".said").text.lower(), entry.text
        assert "kitchen light" in entry.find_element(By.CSS_SELECTOR, ".done").text.lower(), entry.text
        SHOTS.mkdir(parents=True, exist_ok=True)
        driver.execute_script("document.getElementById('rooms-panel').scrollIntoView()")
        driver.save_screenshot(str(SHOTS / "rooms.png"))

        driver.get("about:blank")
        driver.get(url)  # a page opened afterwards: the same row from its first paint
        until(lambda: cell(driver, kitchen.name, ".said") == said, 15, "said, on a new page", output)
        assert cell(driver, kitchen.name, ".heard") == heard
        assert cell(driver, kitchen.name, ".link") == "connected"
        assert cell(driver, kitchen.name, ".state") == "idle"
    finally:
        driver.quit()
