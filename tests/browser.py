"""Debian's headless Chromium driven by Selenium through Debian's chromedriver (never downloaded)."""

from __future__ import annotations

import shutil
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def headless_chromium() -> webdriver.Chrome:
    for path in (CHROMIUM, CHROMEDRIVER):
        if not Path(path).exists() and shutil.which(Path(path).name) is None:
            raise RuntimeError(f"{path} missing: scripts/setup.sh installs chromium and chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    options.add_argument("--window-size=1280,1000")
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(20)
    return driver
