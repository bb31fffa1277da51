"""
Debian's chromium, headless, driven by selenium through Debian's chromedriver: a results
page opened as a reader opens it, from `file://`. `scripts/install-tools.sh` installs both
(apt-get, as root); `missing()` says why a test cannot run without them.

Also a command: `python tests/browser.py PAGE.html OUT.png [SECTION]` writes the 1400x900
screenshot the README shows (scrolled to SECTION's id when given).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # selenium (and trio beneath it) is imported by the tests that open a page, not at collection
    from selenium import webdriver

CHROMIUM = ("chromium", "chromium-browser")
CHROMEDRIVER = "chromedriver"
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
)  # fmt: skip
WIDTH, HEIGHT = 1400, 900
CHARTS_DRAWN_S = 60
"""How long plotly may take to draw every chart on a loaded 2-core machine."""


def _chromium() -> str | None:
    return next((found for name in CHROMIUM if (found := shutil.which(name))), None)


def missing() -> str | None:
    """Why a browser test cannot run here (chromium or chromedriver not installed), or None."""
    if _chromium() is None:
        return "chromium is not installed (scripts/install-tools.sh installs it with apt-get when run as root)"
    if shutil.which(CHROMEDRIVER) is None:
        return "chromedriver is not installed (Debian's chromium-driver; scripts/install-tools.sh installs it as root)"
    return None


@contextmanager
def chromium() -> Iterator[webdriver.Chrome]:
    """A headless chromium with a fresh profile, its viewport 1400x900 and its console recorded; quit after."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    with tempfile.TemporaryDirectory(prefix="balgen-chromium-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = _chromium() or CHROMIUM[0]
        for flag in (*FLAGS, f"--window-size={WIDTH},{HEIGHT}", f"--user-data-dir={profile}"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(service=Service(shutil.which(CHROMEDRIVER)), options=options)
        try:
            # The viewport itself, not the window: a screenshot is exactly 1400x900.
            driver.execute_cdp_cmd(
                "Emulation.setDeviceMetricsOverride", {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False}
            )
            yield driver
        finally:
            driver.quit()


DRAWN = """
return Array.from(document.querySelectorAll('[data-chart], .picker-target.chart')).every(
  (div) => div.querySelectorAll('svg.main-svg .point').length > 0);
"""
"""Whether every chart holds drawn marks: plotly draws each bar and box point as an SVG `.point`."""


def open_page(driver: webdriver.Chrome, page: Path) -> None:
    """Open `page` from `file://` and wait until every chart is drawn."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(page.resolve().as_uri())
    WebDriverWait(driver, CHARTS_DRAWN_S).until(lambda d: d.execute_script(DRAWN))


def screenshot(page: Path, output: Path, section: str | None = None) -> None:
    """A 1400x900 screenshot of `page`, from the top or from `section`."""
    with chromium() as driver:
        open_page(driver, page)
        if section:
            driver.execute_script("document.getElementById(arguments[0]).scrollIntoView()", section)
        time.sleep(0.5)  # plotly's hover layers settle after the last draw
        driver.save_screenshot(str(output))


if __name__ == "__main__":
    screenshot(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else None)
