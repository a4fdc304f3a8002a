"""``acp-toolcalls inspect`` reports opened in a real headless Chromium (Selenium).

- The bundled example's report shows every call with its final status.
- Moving the scrubber to line N shows, for every call, the state ``replay --json`` computes
  for the log cut at line N (title, kind, status, text content, terminal output), at several
  cut points.
- A permission request shows its prompt, its options and the answer, and who gave it.
- A finding of ``examples/buggy-v2.jsonl`` is shown on the history entry of its line.
- Clicking a history entry moves the scrubber there and shows the raw line.
- A ``bridge --log`` file (the example agent through the bridge, recorded live) shows both
  sides of each call next to each other, with the conversion losses on the agent's lines.
- Filters by status, kind and text; a big log has only the cards near the screen drawn.

One browser for the module. Chromium and ChromeDriver come from Debian's packages
(``chromium``, ``chromium-driver``; ``.ci/run`` installs them): without them these tests are
skipped, and with ``ACP_REQUIRE_BROWSER=1`` (set by ``.ci/run``) they fail instead.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from acp_toolcalls.bridge import sanitize
from acp_toolcalls.cli import main as cli_main
from benchmarks import messages
from tests.report.test_inspect import BUGGY, DEMO, replayed, shown

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60  # seconds a page gets to show what a test waits for (generous: CI is busy)

CHROMIUM = os.environ.get("ACP_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("ACP_CHROMEDRIVER", "/usr/bin/chromedriver")
CHROMIUM_FLAGS = (
    "--headless=new",
    "--no-sandbox",  # CI runs as root
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    # The machine's network is closed: no background connections to be refused.
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,1000",
)


def new_browser() -> Any:
    """Headless Chromium under Selenium, or a skip (a failure with ACP_REQUIRE_BROWSER=1)."""
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not shutil.which(p)]
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        missing.append("the selenium package")
    if missing:
        reason = f"headless browser tests need {', '.join(missing)} (.ci/run installs them)"
        if os.environ.get("ACP_REQUIRE_BROWSER"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    return webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    driver = new_browser()
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The reports of the demo and the buggy example, made by the command."""
    base = tmp_path_factory.mktemp("reports")
    made = {}
    for name, args in (("demo", ["--demo"]), ("buggy", [str(BUGGY)])):
        made[name] = base / f"{name}.html"
        assert cli_main(["inspect", *args, "-o", str(made[name])]) == 0
    return made


def wait_for(driver: Any, script: str, what: str) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, TIMEOUT).until(
        lambda d: d.execute_script(script), message=f"waiting for {what}"
    )


def open_report(driver: Any, path: Path) -> None:
    driver.get(path.resolve().as_uri())
    wait_for(driver, "return document.body.dataset.ready || document.body.dataset.error", "cards")
    assert driver.execute_script("return document.body.dataset.error") is None


def move_scrubber(driver: Any, line: int) -> None:
    """Set the range input as a user dragging it does, and wait for the list to be drawn."""
    driver.execute_script(
        "delete document.body.dataset.shown;"
        "const s = document.getElementById('scrub'); s.value = arguments[0];"
        "s.dispatchEvent(new Event('input', {bubbles: true}));",
        line,
    )
    wait_for(driver, f"return document.body.dataset.shown === '{line}'", f"line {line}")


CARDS = """
const text = (node, selector) => {
  const found = node.querySelector(selector);
  return found && found.textContent;
};
return [...document.querySelectorAll('#cards > .card')].map(card => {
  const side = card.querySelector('.side');
  return {
    id: card.dataset.id,
    title: text(card, '.card-head .title'),
    kind: text(card, '.card-head .kind'),
    status: text(card, '.card-head .status'),
    // A run of streamed chunks is one item (content.js): each chunk counts as one text.
    texts: [...side.querySelectorAll('.content > pre.text, .content > .run .chunk')].map(
      p => p.textContent),
    terminals: [...side.querySelectorAll('.terminal-box')].map(
      t => [t.dataset.terminal, text(t, 'pre')]),
  };
});
"""


def cards(driver: Any) -> list[dict[str, Any]]:
    return list(driver.execute_script(CARDS))


def test_the_demo_report_shows_every_call_with_its_final_status(
    browser: Any, reports: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    open_report(browser, reports["demo"])
    capsys.readouterr()
    assert cli_main(["replay", "--json", "--demo"]) == 0
    ((_, session),) = json.loads(capsys.readouterr().out)["sessions"].items()
    expected = [(c["toolCallId"], c["status"]) for c in session["toolCalls"]]
    assert [(c["id"], c["status"]) for c in cards(browser)] == expected
    assert len(expected) == 6
    heading = browser.find_element("id", "heading").text
    assert heading == "acp-toolcalls inspect: demo-session.jsonl"


@pytest.mark.parametrize("line", [9, 12, 16, 21, 27, 33, 41, 44, 47])
def test_the_scrubber_shows_the_state_replay_computes_for_the_cut_log(
    browser: Any,
    reports: dict[str, Path],
    line: int,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = DEMO.read_text(encoding="utf-8").splitlines()
    document = replayed(lines[:line], tmp_path, capsys)
    ((_, session),) = document["sessions"].items()
    terminals = {t["terminalId"]: t for t in session["terminals"]}
    open_report(browser, reports["demo"])
    move_scrubber(browser, line)
    seen = cards(browser)
    assert [c["id"] for c in seen] == [c["toolCallId"] for c in session["toolCalls"]]
    for card, call in zip(seen, session["toolCalls"], strict=True):
        assert (card["title"], card["kind"], card["status"]) == shown(call), (line, card)
        texts = [
            item["content"]["text"]
            for item in call.get("content") or []
            if item["type"] == "content" and item["content"]["type"] == "text"
        ]
        assert card["texts"] == texts, (line, card["id"])
        referenced = [i["terminalId"] for i in call.get("content") or [] if i["type"] == "terminal"]
        for terminal_id, text in card["terminals"]:
            assert terminal_id in referenced
            output = terminals.get(terminal_id, {}).get("output")
            held = base64.b64decode(output["data"]) if output else b""
            assert text == sanitize(held), (line, terminal_id)


def test_a_permission_request_shows_its_prompt_and_answer(
    browser: Any, reports: dict[str, Path]
) -> None:
    open_report(browser, reports["demo"])
    ask = browser.find_element("css selector", '.card[data-id="toolu_03_edit"] .ask')
    assert ask.find_element("css selector", ".ask-title").text == "Allow this edit?"
    description = ask.find_element("css selector", ".ask-description").text
    assert description == "The agent wants to change src/tidy_dates/parse.py."
    options = [li.text for li in ask.find_elements("css selector", ".options li")]
    assert [o.split(" ")[0] for o in options] == ["Allow", "Always", "Deny"]
    chosen = ask.find_element("css selector", ".options li.chosen").text
    assert chosen.startswith("Allow once")
    answer = ask.find_element("css selector", ".ask-answer").text
    assert "selected “Allow once” (allow_once) by the client on line 22" in answer
    # Between the request and its answer, the scrubber shows it waiting.
    move_scrubber(browser, 21)
    answer = browser.find_element("css selector", '.card[data-id="toolu_03_edit"] .ask-answer')
    assert "waiting at line 21 (answered on line 22)" in answer.text


def open_history(driver: Any, call_id: str) -> Any:
    card = driver.find_element("css selector", f'.card[data-id="{call_id}"]')
    card.find_element("css selector", "details.history > summary").click()
    # The entries are drawn on the details' toggle event, which comes after the click.
    wait_for(
        driver, f"return document.querySelector('.card[data-id=\"{call_id}\"] .entry')", "entries"
    )
    return card


def test_a_finding_is_shown_on_its_line(browser: Any, reports: dict[str, Path]) -> None:
    open_report(browser, reports["buggy"])
    card = open_history(browser, "call_1")
    entry = card.find_element("css selector", '.entry[data-line="9"]')
    found = entry.find_elements("css selector", '.finding[data-code="custom-value-prefix"]')
    assert [f.text for f in found if "unknown tool kind 'lookup'" in f.text]
    kind_change = entry.find_element("css selector", '.chg-set[data-field="kind"]').text
    assert kind_change == 'set kind: "read" → "lookup"'
    # The summary at the top counts it, and lists it with its line.
    counts = browser.find_element("css selector", ".finding-counts").text
    assert "custom-value-prefix 3" in counts
    listed = browser.find_elements("css selector", '#findings .finding[data-line="9"]')
    assert len(listed) == 2


def test_clicking_a_history_entry_jumps_there_and_shows_the_raw_line(
    browser: Any, reports: dict[str, Path]
) -> None:
    open_report(browser, reports["demo"])
    card = open_history(browser, "toolu_02_grep")
    browser.execute_script("delete document.body.dataset.jumped")
    card.find_element("css selector", '.entry[data-line="15"] .line-link').click()
    wait_for(browser, "return document.body.dataset.jumped === '15'", "the jump")
    assert browser.find_element("id", "scrub").get_attribute("value") == "15"
    raw = browser.find_element("id", "raw")
    assert raw.is_displayed() and raw.find_element("id", "raw-title").text == "Line 15"
    text = json.loads(raw.find_element("id", "raw-text").text)
    assert text == json.loads(DEMO.read_text(encoding="utf-8").splitlines()[14])
    # The card now shows its state after line 15: two of its three chunks, still running.
    grep = next(c for c in cards(browser) if c["id"] == "toolu_02_grep")
    assert grep["status"] == "in_progress" and len(grep["texts"]) == 2
    entry = browser.find_element("css selector", '.card[data-id="toolu_02_grep"] .entry.current')
    assert entry.get_attribute("data-line") == "15"
    assert "chosen" in entry.get_attribute("class")


def test_filters_by_status_kind_and_text(browser: Any, reports: dict[str, Path]) -> None:
    from selenium.webdriver.support.ui import Select

    open_report(browser, reports["demo"])

    def filtered(action: Any) -> list[str]:
        browser.execute_script("delete document.body.dataset.shown")
        action()
        wait_for(browser, "return document.body.dataset.shown === '47'", "the filter")
        return [c["id"] for c in cards(browser)]

    status = Select(browser.find_element("id", "f-status"))
    assert filtered(lambda: status.select_by_value("failed")) == ["toolu_05_fetch"]
    status.select_by_value("")
    kind = Select(browser.find_element("id", "f-kind"))
    assert filtered(lambda: kind.select_by_value("execute")) == ["toolu_04_test", "toolu_06_suite"]
    kind.select_by_value("")
    search = browser.find_element("id", "f-text")
    # A title, then text that is only in content: the grep call's summary, which replaced
    # its streamed results (text of content no longer held is not found).
    assert filtered(lambda: search.send_keys("ISO 8601")) == ["toolu_05_fetch"]
    search.clear()
    assert filtered(lambda: search.send_keys("3 matches in")) == ["toolu_02_grep"]
    search.clear()
    assert filtered(lambda: search.send_keys("format.py:31")) == []


# --------------------------------------------------------------------------------------------
# A bridge --log file


@pytest.fixture(scope="module")
def bridge_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A v1 editor (the official SDK) and the example v2 agent through the bridge, logged."""
    from tests.interop.raw import bridged
    from tests.interop.sessions import bounded, prepared, sdk_v1_session

    base = tmp_path_factory.mktemp("bridge")
    log = base / "traffic.jsonl"
    agent = bridged("--agent-version", "2", "--log", str(log))
    run = bounded(sdk_v1_session(prepared(base / "work"), "approve", agent=agent))
    assert run.stop_reason == "end_turn"
    report = base / "traffic.html"
    assert cli_main(["inspect", str(log), "-o", str(report)]) == 0
    return report


def test_a_bridge_log_shows_both_sides_of_each_call(browser: Any, bridge_report: Path) -> None:
    open_report(browser, bridge_report)
    heads = browser.find_elements("css selector", "#summary .side-summary h2")
    assert [h.text for h in heads] == [
        "agent: what the agent sent (v2)",
        "client: what the editor received (v1)",
    ]
    for card in browser.find_elements("css selector", "#cards > .card"):
        sides = card.find_elements("css selector", ".side")
        assert [s.get_attribute("data-side") for s in sides] == ["agent", "client"]
        statuses = [s.find_element("css selector", ".state .status").text for s in sides]
        assert statuses[0] == statuses[1]
    edit = browser.find_element("css selector", '.card[data-id="edit"]')
    agent, client = edit.find_elements("css selector", ".side")
    # The v2 agent sent a diff; the v1 editor got a v1 diff of the whole file, its texts
    # rebuilt from disk and the patch (D27 amended), which the report shows as a diff too.
    assert agent.find_elements("css selector", ".diff .patch .add")
    assert client.find_elements("css selector", ".diff .patch .add")
    # Each side's permission request, and who answered the agent's.
    assert "by the editor, through the proxy" in agent.find_element("css selector", ".ask").text
    assert "by the editor on line" in client.find_element("css selector", ".ask").text
    # A conversion loss is on the agent's history entry of its line.
    agent.find_element("css selector", "details.history > summary").click()
    wait_for(browser, "return document.querySelector('.card[data-id=\"edit\"] .entry')", "entries")
    losses = agent.find_elements("css selector", '.entry .finding[data-code="conversion-loss"]')
    assert losses, "no conversion loss shown on the agent's side"


# --------------------------------------------------------------------------------------------
# A big log


def test_a_big_log_renders_only_the_cards_near_the_screen(browser: Any, tmp_path: Path) -> None:
    log = tmp_path / "big.jsonl"
    log.write_bytes(b"".join(line + b"\n" for line in messages.generate(3000, seed=3)))
    report = tmp_path / "big.html"
    assert cli_main(["inspect", str(log), "-o", str(report)]) == 0
    open_report(browser, report)
    total = browser.execute_script("return R.cards.length")
    first = len(browser.find_elements("css selector", "#cards > .card"))
    assert total > 200 and 0 < first <= 40
    # At the end of the page, the last cards are drawn, and still no more than that.
    browser.execute_script("window.scrollTo(0, document.body.scrollHeight)")
    wait_for(
        browser,
        f"return document.querySelector('#cards > .card[data-card=\"{total - 1}\"]')",
        "the last card",
    )
    assert len(browser.find_elements("css selector", "#cards > .card")) <= 40
