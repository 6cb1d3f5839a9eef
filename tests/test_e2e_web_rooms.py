"""The dashboard's Rooms panel in Debian's headless Chromium, against the whole daemon with a real
wyoming-satellite in the kitchen, a real Mosquitto and the device simulator: the kitchen row shows
the satellite connected, then what was heard and said there, and the daemon's own room (the
bedroom) its own turn, typed on the page; a page opened afterwards shows them from its first paint.
A screenshot goes to out/dashboard/ (CI artefacts)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from tests.browser import headless_chromium
from tests.conftest import REPO, Broker, free_port
from tests.home import SimulatedHome
from tests.satellites import Satellite
from tests.speech_fixtures import spoken
from tests.test_e2e_satellites import REPLY_WITHIN_S, Daemon, engines, home, workdir, write_config
from tests.test_e2e_web import until
from voiced.engines import Engines

pytestmark = pytest.mark.e2e
__all__ = ["engines", "home", "workdir"]  # the satellites' fixtures, used here by name
SHOTS = REPO / "out" / "dashboard"


def cell(driver: WebDriver, satellite: str, part: str) -> str:
    row = driver.find_element(By.CSS_SELECTOR, f'#rooms tr[data-satellite="{satellite}"]')
    return str(row.find_element(By.CSS_SELECTOR, part).text)


def local(driver: WebDriver, part: str) -> str:
    """A cell of the daemon's own room's row."""
    return str(driver.find_element(By.CSS_SELECTOR, f"#rooms tr[data-local] {part}").text)


def test_the_rooms_panel_shows_the_kitchen_satellite_what_it_heard_and_said(
    workdir: Path, broker: Broker, home: SimulatedHome, engines: Engines
) -> None:
    kitchen = Satellite(workdir, "kitchen_satellite")
    kitchen.start()
    try:
        web_port = free_port()
        satellites = [{"name": kitchen.name, "uri": kitchen.uri, "room": "kitchen"}]
        config = write_config(workdir, broker, satellites, web_port=web_port)
        asyncio.run(asyncio.wait_for(_rooms(workdir, config, kitchen, engines, web_port), 180))
    finally:
        kitchen.stop()


async def _rooms(workdir: Path, config: Path, kitchen: Satellite, engines: Engines, port: int) -> None:
    daemon = Daemon(workdir, config, engines)
    daemon.start(web=True)
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
        assert local(driver, "td") == "bedroom" and local(driver, ".state") == "idle"  # after the satellites

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
        assert local(driver, ".heard") == ""  # the kitchen's turn is not the bedroom's

        # A turn in the daemon's own room (typed on the page, as said to its microphone): its row.
        answer = httpx.post(url + "api/say", json={"text": "turn on the light in here"}, timeout=120)
        assert answer.status_code == 200, answer.text
        until(lambda: local(driver, ".heard") == "turn on the light in here", 15, "heard here", output)
        until(lambda: "bedroom" in local(driver, ".said").lower(), 15, "said here", output)
        until(lambda: local(driver, ".state") == "idle", REPLY_WITHIN_S, "the local turn over", output)
        assert cell(driver, kitchen.name, ".heard") == heard
        SHOTS.mkdir(parents=True, exist_ok=True)
        driver.execute_script("document.getElementById('rooms-panel').scrollIntoView()")
        driver.save_screenshot(str(SHOTS / "rooms.png"))

        driver.get("about:blank")
        driver.get(url)  # a page opened afterwards: the same row from its first paint
        until(lambda: cell(driver, kitchen.name, ".said") == said, 15, "said, on a new page", output)
        assert cell(driver, kitchen.name, ".heard") == heard
        assert cell(driver, kitchen.name, ".link") == "connected"
        assert cell(driver, kitchen.name, ".state") == "idle"
        until(lambda: local(driver, ".heard") == "turn on the light in here", 15, "heard here, anew", output)
        assert local(driver, "td") == "bedroom" and local(driver, ".state") == "idle"
    finally:
        driver.quit()
