"""Make docs/inspect-demo.png, the README's picture of an ``acp-toolcalls inspect`` report.

``python docs/inspect_screenshot.py`` writes the bundled demo session's report, opens it in
headless Chromium (the browser the tests use: Debian's ``chromium`` and ``chromium-driver``
through Selenium), unfolds the edit call's history, clicks its line 21 (the permission
request: the scrubber jumps there and the raw line opens) and saves the window.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # `tests.*`: the browser helpers

from acp_toolcalls.cli import main as cli_main  # noqa: E402
from tests.report.test_inspect_browser import new_browser, open_report, wait_for  # noqa: E402

OUTPUT = ROOT / "docs" / "inspect-demo.png"


def main() -> None:
    with tempfile.TemporaryDirectory() as work:
        report = Path(work) / "demo-session.html"
        if cli_main(["inspect", "--demo", "-o", str(report)]) != 0:
            raise SystemExit("inspect failed")
        driver = new_browser()
        try:
            driver.set_window_size(1280, 1450)
            open_report(driver, report)
            card = driver.find_element("css selector", '.card[data-id="toolu_03_edit"]')
            card.find_element("css selector", "details.history > summary").click()
            wait_for(driver, "return document.querySelector('.entry[data-line=\"21\"]')", "entries")
            driver.execute_script("delete document.body.dataset.jumped")
            card.find_element("css selector", '.entry[data-line="21"] .line-link').click()
            wait_for(driver, "return document.body.dataset.jumped === '21'", "the jump")
            driver.execute_script(
                "const card = document.querySelector('.card[data-id=\"toolu_03_edit\"]');"
                "window.scrollTo(0, card.offsetTop - document.getElementById('top').offsetHeight"
                " - 8);"
            )
            driver.save_screenshot(str(OUTPUT))
        finally:
            driver.quit()
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()
