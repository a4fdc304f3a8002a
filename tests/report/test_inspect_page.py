"""The ``inspect`` page is fast and usable at any size (issue 29), in headless Chromium.

- A big log: only the cards near the screen are in the document; "go to this call" on the
  last call and a click on a finding near the end draw that card, put it below the sticky
  bar, give it the focus, and it stays there through later draws.
- A streamed call's chunks are one item with a count, shown apart on demand; a card folds
  (a button, so the keyboard folds it too).
- The search covers terminal output, permission text, ``rawInput`` and locations.
- At 800x600 the sticky bar is small and a jump lands below it; Esc closes the raw line;
  axe-core finds no violation (the slider's name, the contrast of later history entries).

The helpers and the browser fixture are those of test_inspect_browser.py.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from acp_toolcalls.cli import main as cli_main
from benchmarks import messages
from tests.report.test_inspect_browser import (  # noqa: F401 (fixtures)
    ROOT,
    browser,
    cards,
    move_scrubber,
    open_history,
    open_report,
    reports,
    wait_for,
)

MAX_CARDS = 60  # cards in the document at most, whatever the log's size (list.js draws 40)
AXE = ROOT / "tests" / "interop" / "node" / "node_modules" / "axe-core" / "axe.min.js"

# Wait for two frames and the list's queued draws: whatever a jump left to do is done.
SETTLE = """
const done = arguments[arguments.length - 1];
requestAnimationFrame(() => requestAnimationFrame(() => queue.then(() => done(true))));
"""

# Where a card is on the screen, the bar's bottom, and whether it has the focus.
PLACE = """
const card = document.querySelector(`#cards > .card[data-card="${arguments[0]}"]`);
if (!card) return null;
const r = card.getBoundingClientRect();
const end = scrollY >= document.documentElement.scrollHeight - innerHeight - 1;
return {top: r.top, bar: document.getElementById('bar').getBoundingClientRect().bottom,
        height: innerHeight, end: end, focused: document.activeElement === card,
        cards: document.querySelectorAll('#cards > .card').length};
"""


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated log of 8,000 lines (1,759 calls) whose last line touches the last call
    with an unknown kind: a finding on the last card, which stays open (the summary lists it)."""
    lines = messages.generate(8000, seed=5)
    last = json.loads(lines[-1])["params"]
    update = {"sessionUpdate": "tool_call_update", "toolCallId": last["update"]["toolCallId"]}
    extra = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": last["sessionId"], "update": {**update, "kind": "lookup"}},
    }
    base = tmp_path_factory.mktemp("big")
    log = base / "big.jsonl"
    log.write_bytes(b"".join(line + b"\n" for line in lines) + json.dumps(extra).encode() + b"\n")
    report = base / "big.html"
    assert cli_main(["inspect", str(log), "-o", str(report)]) == 0
    return report


@pytest.fixture
def small_screen(browser: Any) -> Iterator[None]:  # noqa: F811
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": 800, "height": 600, "deviceScaleFactor": 1, "mobile": False},
    )
    try:
        yield
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def settle(driver: Any) -> None:
    driver.execute_async_script(SETTLE)


def landed(driver: Any, card: int) -> dict[str, Any]:
    """The card's place after a jump and a settle: drawn, just below the bar (or lower if
    the page ends), focused."""
    settle(driver)
    place = driver.execute_script(PLACE, card)
    assert place is not None, f"card {card} is not in the document"
    assert place["bar"] - 1 <= place["top"] < place["height"] / 2, place
    assert place["top"] <= place["bar"] + 20 or place["end"], place
    assert place["focused"], place
    assert place["cards"] <= MAX_CARDS, place
    return dict(place)


def test_go_to_the_last_call_draws_only_the_cards_near_it(browser: Any, big: Path) -> None:  # noqa: F811
    open_report(browser, big)
    total = browser.execute_script("return R.cards.length")
    assert total > 1500
    assert len(browser.find_elements("css selector", "#cards > .card")) <= MAX_CARDS
    browser.find_element("css selector", ".open-calls .line-link").click()
    wait_for(browser, f"return document.body.dataset.jumped === 'call {total - 1}'", "the jump")
    place = landed(browser, total - 1)
    # A later draw (a scroll, a resize) leaves it where it is.
    browser.execute_script("request(); window.dispatchEvent(new Event('resize'))")
    assert landed(browser, total - 1)["top"] == pytest.approx(place["top"], abs=1)


def test_clicking_a_finding_shows_its_call_and_keeps_it_in_view(browser: Any, big: Path) -> None:  # noqa: F811
    open_report(browser, big)
    total = browser.execute_script("return R.cards.length")
    browser.execute_script("delete document.body.dataset.jumped")
    finding = browser.find_element(
        "css selector", '#findings .finding[data-code="custom-value-prefix"]'
    )
    finding.find_element("css selector", ".line-link").click()
    wait_for(browser, "return document.body.dataset.jumped === '8001'", "the jump")
    place = landed(browser, total - 1)
    # Folding the history of the card open (its height changes) keeps it in place.
    summary = browser.find_element(
        "css selector", f'#cards > .card[data-card="{total - 1}"] details.history > summary'
    )
    summary.click()
    settle(browser)
    top = browser.execute_script(PLACE, total - 1)["top"]
    assert top == pytest.approx(place["top"], abs=1)


def test_a_streamed_call_shows_its_chunks_as_one_item(
    browser: Any,  # noqa: F811
    reports: dict[str, Path],  # noqa: F811
) -> None:
    open_report(browser, reports["demo"])
    move_scrubber(browser, 16)  # the grep call has streamed three chunks
    grep = browser.find_element("css selector", '.card[data-id="toolu_02_grep"]')
    (run,) = grep.find_elements("css selector", ".content > .run")
    assert run.get_attribute("data-chunks") == "3"
    assert "3 chunks appended" in run.find_element("css selector", ".run-head").text
    assert len(grep.find_elements("css selector", ".content pre")) == 1  # one box, not three
    chunks = run.find_elements("css selector", "pre.joined > .chunk")
    assert chunks[0].text.startswith("src/tidy_dates/parse.py:14:")
    toggle = run.find_element("css selector", ".run-toggle")
    assert toggle.get_attribute("aria-expanded") == "false"
    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "true"
    assert "apart" in run.get_attribute("class").split()
    assert chunks[1].value_of_css_property("display") == "block"


def test_a_card_folds_with_a_button_and_stays_folded(
    browser: Any,  # noqa: F811
    reports: dict[str, Path],  # noqa: F811
) -> None:
    from selenium.webdriver.common.keys import Keys

    open_report(browser, reports["demo"])
    selector = '.card[data-id="toolu_04_test"]'
    fold = browser.find_element("css selector", f"{selector} .fold")
    assert fold.get_attribute("aria-expanded") == "true"
    fold.send_keys(Keys.ENTER)  # the keyboard, as a button takes it
    card = browser.find_element("css selector", selector)
    assert not card.find_element("css selector", ".sides").is_displayed()
    assert fold.get_attribute("aria-expanded") == "false"
    move_scrubber(browser, 40)  # the card is drawn again, still folded
    card = browser.find_element("css selector", selector)
    assert not card.find_element("css selector", ".sides").is_displayed()
    card.find_element("css selector", ".fold").click()
    assert card.find_element("css selector", ".sides").is_displayed()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("KeyboardInterrupt", ["toolu_06_suite"]),  # terminal output
        ("collected 18 items", ["toolu_04_test"]),
        ("wants to change", ["toolu_03_edit"]),  # a permission request's description
        ("always allow", ["toolu_03_edit"]),  # one of its options
        ("en.wikipedia.org", ["toolu_05_fetch"]),  # rawInput
        ('tidy_dates/parse.py"', ["toolu_01_read", "toolu_02_grep", "toolu_03_edit"]),  # locations
    ],
)
def test_search_covers_terminals_permissions_raw_input_and_locations(
    browser: Any,  # noqa: F811
    reports: dict[str, Path],  # noqa: F811
    text: str,
    expected: list[str],
) -> None:
    open_report(browser, reports["demo"])
    browser.execute_script("delete document.body.dataset.shown")
    browser.find_element("id", "f-text").send_keys(text)
    wait_for(browser, "return document.body.dataset.shown === '47'", "the search")
    assert [c["id"] for c in cards(browser)] == expected


def test_at_800x600_the_bar_is_small_and_a_jump_lands_below_it(
    browser: Any,  # noqa: F811
    big: Path,
    small_screen: None,
) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    open_report(browser, big)
    assert browser.execute_script("return innerHeight") == 600
    total = browser.execute_script("return R.cards.length")
    summary = browser.find_element("css selector", "#summary-box > summary")
    assert browser.find_element("id", "summary-box").get_attribute("open") is None  # folded
    summary.click()
    browser.find_element("css selector", ".open-calls .line-link").click()
    wait_for(browser, f"return document.body.dataset.jumped === 'call {total - 1}'", "the jump")
    place = landed(browser, total - 1)
    assert place["bar"] <= 0.15 * 600, place  # the part of the screen that stays covered
    # A history entry: the jump keeps it where it was and gives it the focus.
    card = open_history(
        browser, browser.execute_script("return R.cards[arguments[0]].id", total - 1)
    )
    entry = card.find_elements("css selector", ".entry")[0]
    line = entry.get_attribute("data-line")
    browser.execute_script("delete document.body.dataset.jumped")
    entry.find_element("css selector", ".line-link").click()
    wait_for(browser, f"return document.body.dataset.jumped === '{line}'", "the jump")
    settle(browser)
    focused = browser.switch_to.active_element
    assert focused.get_attribute("data-line") == line and "entry" in focused.get_attribute("class")
    # The raw line panel is open; Esc closes it.
    assert browser.find_element("id", "raw").is_displayed()
    ActionChains(browser).send_keys(Keys.ESCAPE).perform()
    assert not browser.find_element("id", "raw").is_displayed()


def test_axe_finds_no_violation(browser: Any, reports: dict[str, Path]) -> None:  # noqa: F811
    if not AXE.exists():
        reason = "axe-core is not installed (npm ci --prefix tests/interop/node)"
        if os.environ.get("ACP_REQUIRE_BROWSER"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    open_report(browser, reports["demo"])
    move_scrubber(browser, 16)  # later history entries are marked as such
    open_history(browser, "toolu_02_grep")
    browser.execute_script("delete document.body.dataset.jumped")
    browser.find_element(
        "css selector", '.card[data-id="toolu_02_grep"] .entry[data-line="15"] .line-link'
    ).click()
    wait_for(browser, "return document.body.dataset.jumped === '15'", "the jump")
    browser.execute_script(AXE.read_text(encoding="utf-8"))
    violations = browser.execute_async_script(
        """
        const done = arguments[arguments.length - 1];
        axe.run(document).then((r) => done(r.violations.map((v) =>
          [v.id, v.nodes.map((n) => n.target.join(' ')).slice(0, 5)])));
        """
    )
    assert violations == []
    assert browser.find_element("id", "scrub").accessible_name == "State after line (slider)"
    # The entries after the line are there, and axe measured their contrast.
    assert browser.find_elements("css selector", ".entry.future")
