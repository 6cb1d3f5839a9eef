"""The dashboard a household uses, in Debian's headless Chromium, against the real daemon
(`voiced run --text -`), the device simulator and a real Mosquitto: one browser session walks the
page through its states and keeps a screenshot of each under out/dashboard/ (CI artefacts):

fresh → the controls used → after a typed turn → a plan waiting → a scene running → at a phone's
width → the broker lost. Every wait has a timeout; what is asserted is what a person sees.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import Select

from tests.browser import headless_chromium
from tests.conftest import REPO, Broker
from tests.home import SimulatedHome
from tests.plans_home import TypedDaemon, plan_config
from tests.test_e2e_plans import SET
from tests.test_e2e_web import until

pytestmark = pytest.mark.e2e

SHOTS = REPO / "out" / "dashboard"
DESKTOP = (1280, 1500)
PHONE = (390, 2900)  # a phone's width; tall, so the screenshot shows the whole column
DEVICE_DELAY_MS = "600"  # the simulated devices answer a moment later, as radios do: a scene is seen running


def card(driver: WebDriver, device: str) -> WebElement:
    return driver.find_element(By.CSS_SELECTOR, f'.card[data-device="{device}"]')


def card_text(driver: WebDriver, device: str, part: str) -> str:
    return str(card(driver, device).find_element(By.CSS_SELECTOR, part).text)


def slide(driver: WebDriver, device: str, control: str, value: int) -> None:
    """Move a card's slider as a person would end a drag: its value, then `change`."""
    slider = driver.find_element(By.ID, f"{device}-{control}")
    driver.execute_script(
        "arguments[0].value = arguments[1];"
        "arguments[0].dispatchEvent(new Event('input'));"
        "arguments[0].dispatchEvent(new Event('change'));",
        slider,
        value,
    )


def swatch_rgb(driver: WebDriver, device: str) -> tuple[int, ...]:
    colour = (
        card(driver, device)
        .find_element(By.CSS_SELECTOR, ".swatch")
        .value_of_css_property("background-color")
    )
    return tuple(int(n) for n in re.findall(r"\d+", colour)[:3])


def test_the_dashboard_shows_and_runs_the_home_in_peoples_terms(tmp_path: Path, broker: Broker) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    config = plan_config(tmp_path, broker.port, vibe={"confirm_timeout_s": 5.0})
    with SimulatedHome(config, broker.port, "--delay-ms", DEVICE_DELAY_MS) as home:
        daemon = TypedDaemon(config, tmp_path)
        output = daemon.output
        driver = headless_chromium()

        def shot(name: str) -> None:
            driver.execute_script("window.scrollTo(0, 0)")
            driver.save_screenshot(str(SHOTS / f"{name}.png"))

        def outcome(device: str, wanted: str, what: str) -> None:
            until(lambda: wanted in card_text(driver, device, ".outcome"), 15, what, output)

        driver.set_window_size(*DESKTOP)  # tall enough for the whole page in each screenshot
        try:
            # Fresh: the badge says what the assistant is doing from the first paint.
            driver.get(f"http://127.0.0.1:{daemon.port}/")
            assert driver.find_element(By.ID, "mode").text == "idle"
            until(
                lambda: driver.find_element(By.ID, "link").text == "live",
                15,
                "the page did not connect",
                output,
            )
            until(lambda: driver.find_elements(By.CSS_SELECTOR, ".card"), 10, "no device cards", output)
            rooms = [r.get_attribute("data-room") for r in driver.find_elements(By.CSS_SELECTOR, ".room")]
            assert rooms == ["Bedroom", "Kitchen", "Living room"]
            names = [h.text for h in driver.find_elements(By.CSS_SELECTOR, ".card h4")]
            assert names == ["Bedroom light", "Kitchen light", "Diffuser", "Living room light", "Music"]
            until(
                lambda: card_text(driver, "kitchen_light", ".summary").startswith("Off"),
                10,
                "no state",
                output,
            )
            assert "brightness" not in driver.find_element(By.ID, "devices").text  # no raw JSON
            shot("1-fresh")

            # The controls: each a tool call, confirmed by the device, seen on the card.
            home.published()
            slide(driver, "kitchen_light", "brightness", 40)
            outcome("kitchen_light", "✓ Kitchen light says: on · 40 %", "the dimmer was not confirmed")
            assert card_text(driver, "kitchen_light", ".summary").startswith("On · 40 %")
            assert (
                card(driver, "kitchen_light")
                .find_element(By.CSS_SELECTOR, ".toggle")
                .get_attribute("aria-pressed")
                == "true"
            )
            toggle = card(driver, "bedroom_light").find_element(By.CSS_SELECTOR, ".toggle")
            toggle.send_keys(Keys.ENTER)  # the keyboard works the switch
            outcome("bedroom_light", "✓ Bedroom light says: on", "the switch was not confirmed")
            Select(driver.find_element(By.ID, "living_room_light-colour")).select_by_value("colour:blue")
            outcome("living_room_light", "blue", "the colour was not confirmed")
            red, green, blue = swatch_rgb(driver, "living_room_light")
            assert blue > 200 and red < 80 and green < 80, (red, green, blue)
            Select(driver.find_element(By.ID, "diffuser-scent")).select_by_value("citrus")
            outcome("diffuser", "citrus", "the scent was not confirmed")
            card(driver, "music").find_element(By.CSS_SELECTOR, ".toggle").click()
            outcome("music", "playing", "play was not confirmed")
            slide(driver, "music", "volume", 25)
            outcome("music", "volume 25 %", "the volume was not confirmed")
            sent = home.published()
            assert (SET.format("kitchen_light"), {"state": "ON", "brightness": 102}) in sent
            assert (SET.format("bedroom_light"), {"state": "ON"}) in sent
            assert (SET.format("living_room_light"), {"state": "ON", "color": {"hex": "#0000FF"}}) in sent
            assert (SET.format("diffuser"), {"state": "ON", "scent": "citrus"}) in sent
            assert ("voiced/music/set", {"volume": 25}) in sent
            shot("2-controls")

            # A typed turn: heard, said and done, in words; the reply without "(0 commands)".
            box = driver.find_element(By.ID, "say-text")
            box.send_keys("turn off the kitchen light", Keys.ENTER)
            result = driver.find_element(By.ID, "say-result")
            until(
                lambda: "Done: Kitchen light: off" in result.text,
                30,
                "the typed turn was not answered",
                output,
            )
            assert "command" not in result.text
            turn = driver.find_elements(By.CSS_SELECTOR, "#transcript .turn")[-1]
            until(
                lambda: "Kitchen light: off" in turn.find_element(By.CSS_SELECTOR, ".done").text,
                5,
                "no deed",
                output,
            )
            assert "turn off the kitchen light" in turn.find_element(By.CSS_SELECTOR, ".heard").text
            assert turn.find_element(By.CSS_SELECTOR, ".said").text.startswith("voiced")
            until(
                lambda: driver.find_elements(By.CSS_SELECTOR, "#chart rect"), 10, "no latency chart", output
            )
            until(
                lambda: card_text(driver, "kitchen_light", ".summary").startswith("Off"), 10, "card", output
            )
            shot("3-after-a-turn")

            # A plan waiting for a yes: a sentence with its time, and its buttons.
            created = daemon.http(
                "POST", "/api/tasks", {"requirement": "in 10 minutes turn off the bedroom light"}
            )
            task = created.json()["id"]
            plan = f'.plan[data-task="{task}"]'

            def plan_text() -> str:
                return str(driver.find_element(By.CSS_SELECTOR, plan).text)

            until(lambda: "Waiting for your OK" in plan_text(), 10, "the plan is not shown waiting", output)
            assert "Turn off the bedroom light 10 minutes after you confirm." in plan_text()
            shot("4-plan-waiting")
            driver.find_element(By.CSS_SELECTOR, f'{plan} button[aria-label^="Confirm"]').click()
            until(lambda: "Running: 0 of 1 done" in plan_text(), 10, "the plan did not start", output)
            assert re.search(r"Turn off the bedroom light at \d{1,2}:\d\d.*\(in 10 minutes\)\.", plan_text())
            driver.find_element(By.CSS_SELECTOR, f'{plan} button[aria-label^="Cancel"]').click()
            until(lambda: "Cancelled." in plan_text(), 10, "the plan was not cancelled", output)

            # A scene being set, step by step, in words.
            assert daemon.http("POST", "/api/vibe", {"request": "make it cozy"}).status_code == 202
            scene = driver.find_element(By.ID, "scene")
            until(
                lambda: "Being set up" in scene.text and "Living room light: on, 55 %, orange" in scene.text,
                10,
                "scene",
                output,
            )
            shot("5-scene-running")
            until(lambda: "Set." in scene.text, 30, "the scene did not finish", output)

            # A phone's width: one column, nothing wider than the screen.
            driver.set_window_size(*PHONE)
            width = "return document.documentElement.scrollWidth"
            until(lambda: driver.execute_script(width) <= PHONE[0], 5, "wider than a phone", output)
            shot("6-phone")
            driver.set_window_size(*DESKTOP)

            # The broker lost: said plainly, and a control says why it cannot work.
            broker.stop()
            banner = driver.find_element(By.ID, "broker")
            until(lambda: banner.is_displayed(), 15, "the lost broker is not shown", output)
            card(driver, "bedroom_light").find_element(By.CSS_SELECTOR, ".toggle").click()
            outcome("bedroom_light", "✗", "a control did not fail plainly")
            assert "broker" in card_text(driver, "bedroom_light", ".outcome").lower()
            shot("7-broker-lost")
        except AssertionError:
            shot("failed")
            raise
        finally:
            driver.quit()
            daemon.stop()
