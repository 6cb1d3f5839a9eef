"""The dashboard's Plans panel in a real browser (Debian's headless Chromium): its Confirm, Refuse and
Cancel buttons drive the real daemon's plans (`voiced run --text -`), seen on the simulator's broker."""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from tests.browser import headless_chromium
from tests.conftest import Broker
from tests.home import SimulatedHome
from tests.plans_home import TypedDaemon, plan_config
from tests.test_e2e_plans import SET, _sent_by
from tests.test_e2e_web import until

pytestmark = pytest.mark.e2e


def _panel(driver: WebDriver, task: str) -> str:
    """The plan's box as the page shows it (it is redrawn on every plan event: found afresh)."""
    return str(driver.find_element(By.CSS_SELECTOR, f'.plan[data-task="{task}"]').text)


def _status(driver: WebDriver, task: str) -> str:
    return str(
        driver.find_element(By.CSS_SELECTOR, f'.plan[data-task="{task}"]').get_attribute("data-status")
    )


def _click(driver: WebDriver, task: str, label: str) -> None:
    box = driver.find_element(By.CSS_SELECTOR, f'.plan[data-task="{task}"]')
    box.find_element(By.XPATH, f'.//button[text()="{label}"]').click()


def test_the_plans_panel_confirms_refuses_and_cancels(tmp_path: Path, broker: Broker) -> None:
    config = plan_config(tmp_path, broker.port)
    with SimulatedHome(config, broker.port) as home:
        daemon = TypedDaemon(config, tmp_path)
        driver = headless_chromium()
        output = daemon.output
        try:
            driver.get(f"http://127.0.0.1:{daemon.port}/")
            link = driver.find_element(By.ID, "link")
            until(lambda: link.text == "live", 15, "the page did not connect", output)

            def create(requirement: str) -> str:
                created = daemon.http("POST", "/api/tasks", {"requirement": requirement})
                assert created.json()["status"] == "waiting_confirmation", created.text
                task = str(created.json()["id"])
                until(
                    lambda: _status(driver, task) == "waiting_confirmation", 10, f"{task} not shown", output
                )
                assert "Waiting for your OK." in _panel(driver, task)
                return task

            movie = create(
                "Movie night: dim the living room to 20 percent, turn off the kitchen light "
                "and play some jazz"
            )
            assert "Turn off the kitchen light once you confirm." in _panel(driver, movie)
            assert _sent_by(home) == []
            _click(driver, movie, "Confirm")
            until(lambda: _status(driver, movie) == "completed", 30, "not completed", output)
            assert "Done." in _panel(driver, movie) and _panel(driver, movie).count("— done") == 3
            assert sorted(_sent_by(home), key=str) == sorted(
                [
                    (SET.format("living_room_light"), {"state": "ON", "brightness": 51}),
                    (SET.format("kitchen_light"), {"state": "OFF"}),
                    ("voiced/music/set", {"action": "play", "genre": "jazz"}),
                ],
                key=str,
            )

            party = create(
                "Party: turn on the kitchen light, play some rock and set the bedroom light to 40 percent"
            )
            _click(driver, party, "Refuse")
            until(lambda: _status(driver, party) == "cancelled", 10, "not refused", output)

            later = create("in 10 minutes turn off the bedroom light")
            _click(driver, later, "Confirm")
            until(lambda: _status(driver, later) == "executing", 10, "not executing", output)
            assert "Running: 0 of 1 done." in _panel(driver, later)
            _click(driver, later, "Cancel")
            until(lambda: _status(driver, later) == "cancelled", 10, "not cancelled", output)
            assert "Cancelled." in _panel(driver, later)
            history = daemon.http("GET", f"/api/tasks/{later}/progress").json()["execution_history"]
            assert [(e["decision"], e["decided_by"]) for e in history] == [("end", "rules")]
            statuses = {t["id"]: t["status"] for t in daemon.http("GET", "/api/tasks").json()["tasks"]}
            assert statuses == {movie: "completed", party: "cancelled", later: "cancelled"}
            assert _sent_by(home) == []  # nothing of the refused plan, nor of the cancelled one
        except AssertionError as exc:
            shown = driver.find_element(By.ID, "plans").text
            raise AssertionError(f"{exc}\nthe Plans panel showed:\n{shown}") from None
        finally:
            driver.quit()
            daemon.stop()
