"""The live page's findings, as a finished report's: conversion losses alike (side, session,
path, reason) are listed once, and a finding's line leads to the card of the call that line
touched, for the findings that came in events too.

Before, the live page listed every loss on its own (a session's ``state_update`` losses, one
per turn, filled the list) and a finding that came in an event led to no card. Over
``inspect --serve --follow`` and headless Chromium (``test_inspect_serve``'s helpers).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp_toolcalls.report.model import ReportBuilder
from tests.report.test_inspect_bridge import record, state_update
from tests.report.test_inspect_serve import append, browser, open_live, serving, wait_for

__all__ = ["browser"]  # the fixture, used by name

HELLO = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}


def call_update(session: str, call: str, **fields: Any) -> dict[str, Any]:
    update = {"sessionUpdate": "tool_call_update", "toolCallId": call, **fields}
    return {"jsonrpc": "2.0", "method": "session/update",
            "params": {"sessionId": session, "update": update}}  # fmt: skip


FIRST = [
    record("client->proxy", 1, HELLO),
    record("proxy->agent", 2, {**HELLO, "params": {"protocolVersion": 2}}),
    record("agent->proxy", 2, state_update("a")),  # 3
]
LATER = [
    record("agent->proxy", 2, state_update("b")),  # 4
    record("agent->proxy", 2, call_update("a", "read-1", title="Read", kind="read")),  # 5
    record("agent->proxy", 2, call_update("a", "run-1", title="Run", kind="execute")),  # 6
    record("agent->proxy", 2, state_update("a")),  # 7
    # A v1 update cannot clear a field: a loss on a line that touched run-1.
    record("agent->proxy", 2, call_update("a", "run-1", rawInput=None)),  # 8
    record("agent->proxy", 2, state_update("b")),  # 9
]

LISTED = (
    "[...document.querySelectorAll('#findings .finding')].map((f) => "
    "[Number(f.dataset.line), f.dataset.count ? Number(f.dataset.count) : null])"
)


def test_the_finished_report_of_the_log_groups_and_links_the_same() -> None:
    """What the page must show, as ``inspect`` computes it for the whole log."""
    builder = ReportBuilder()
    for number, data in enumerate(FIRST + LATER, 1):
        builder.feed(number, data)
    report = builder.finish()
    lines = [[report["findings"][i][0] for i in group] for group in report["findingGroups"]]
    assert sorted(lines) == [[3, 7], [4, 9]]
    rawinput = next(f for f in report["findings"] if f[2] == "$.params.update.rawInput")
    card = report["findingCards"][f"{rawinput[1]}:8"]
    assert report["cards"][card]["id"] == "run-1"


def test_live_losses_alike_are_listed_once_and_a_finding_leads_to_its_card(
    browser: Any, tmp_path: Path
) -> None:
    log = tmp_path / "bridge.jsonl"
    log.write_bytes(b"".join(line + b"\n" for line in FIRST))
    with serving(log) as served:
        open_live(browser, served.url)
        append(log, *LATER)  # every finding below comes in an event
        wait_for(browser, "return R.lineCount === 9 && document.body.dataset.drawn == R.seq", "9")
        listed = browser.execute_script(f"return {LISTED}")
        # Line 2: the v2 `initialize` here has no `info` (a schema finding, on its own).
        assert listed == [[2, None], [3, 2], [4, 2], [8, None]], listed
        link = browser.find_element("css selector", '#findings .finding[data-line="8"] .line-link')
        link.click()
        focused = wait_for(
            browser,
            "const card = document.activeElement && document.activeElement.closest('.card');"
            "return card && card.dataset.id;",
            "a card focused",
        )
        assert focused == "run-1"
