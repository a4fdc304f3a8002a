"""Make docs/inspect-live.png, the README's picture of ``acp-toolcalls bridge --inspect``.

``python docs/live_screenshot.py`` runs a real session, as the tests do
(``tests/proxy/test_bridge_inspect.py``): the official SDK's v1 client drives
``examples/agent.py`` at v2 through ``acp-toolcalls bridge --inspect``. Headless Chromium (the
browser the tests use) opens the URL the bridge printed before the client says anything; while
the client holds its answer to the permission request, the page is saved with the edit call's
card in view: the request waits for the user, on both sides of the bridge.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # `tests.*`: the session and browser helpers

from tests.interop.sessions import prepared  # noqa: E402
from tests.proxy.test_bridge_inspect import open_live, run, wait_for, watched_session  # noqa: E402
from tests.report.test_inspect_browser import new_browser  # noqa: E402

OUTPUT = ROOT / "docs" / "inspect-live.png"


def main() -> None:
    driver = new_browser()
    try:
        driver.set_window_size(1280, 1200)

        async def opened(url: str) -> None:
            await asyncio.to_thread(open_live, driver, url)

        async def hold() -> None:
            def shoot() -> None:
                waiting = "return document.querySelectorAll('.ask.waiting').length === 2"
                wait_for(driver, waiting, "the request waiting on both sides")
                driver.execute_script(
                    "const card = document.querySelector('.card[data-id=\"edit\"]');"
                    "window.scrollTo(0, card.offsetTop - "
                    "document.getElementById('top').offsetHeight - 8);"
                )
                driver.save_screenshot(str(OUTPUT))

            await asyncio.to_thread(shoot)

        with tempfile.TemporaryDirectory() as work:
            cwd = prepared(Path(work) / "project")
            watched = run(
                watched_session(cwd, "--inspect", "--agent-version", "2", opened=opened, hold=hold)
            )
        if watched.returncode != 0:
            raise SystemExit(f"the bridge exited {watched.returncode}: {watched.stderr}")
    finally:
        driver.quit()
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()
