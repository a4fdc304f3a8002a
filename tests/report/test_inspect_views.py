"""The latency and permission audit views of ``inspect`` (issue 31), finished and live.

- Latency: on a crafted ``bridge --log`` file with known times, each method's count,
  answers, p50/p99/max (nearest rank) per side; an id used again after its response; a
  request never answered, one replaced on a waiting id, a response to nothing; both
  directions waiting on the same id; a plain log counts without times (and a log whose times
  never move says so); a log-bucket histogram past the exact durations; memory bounded
  whatever the requests.
- Audit: reject vs cancelled vs allowed, who answered (the editor, the proxy for it, the
  client of a plain log), an edit with and without its diff (kind from the request or from
  the call's history); every permission request of the real agents' logs is in the audit.
- The page, in headless Chromium: the finished report's two views, and the live page's
  (``inspect --serve --follow``) updating as lines are appended.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acp_toolcalls.records import log_line
from acp_toolcalls.report import latency as latency_module
from acp_toolcalls.report.latency import (
    BUCKET_RATIO,
    EXACT_DURATIONS,
    MAX_METHODS,
    MAX_PENDING,
    Durations,
    Latency,
    nearest_rank,
)
from tests.report.test_inspect import plain
from tests.report.test_inspect_browser import browser  # noqa: F401 (the module's browser)

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "tests" / "data" / "real-agents"
BASE = 1000.0  # times are BASE + multiples of 1/16 s: exact in binary, so the ms are exact


def message(**fields: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **fields}).encode()


def record(direction: str, when: float | None, **fields: Any) -> bytes:
    line = log_line(direction, 2, message(**fields), when if when is not None else 0.0)  # type: ignore[arg-type]
    if when is None:
        value = json.loads(line)
        del value["time"]
        return json.dumps(value).encode()
    return line[:-1]


def report_of(lines: list[bytes]) -> dict[str, Any]:
    from acp_toolcalls.report.model import ReportBuilder

    builder = ReportBuilder()
    for number, data in enumerate(lines, 1):
        builder.feed(number, data)
    return dict(plain(builder.finish()))


def side_of(report: dict[str, Any], name: str) -> dict[str, Any]:
    return next(side for side in report["sides"] if side["name"] == name)


def rows(side: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(row["sender"], row["method"]): row for row in side["latency"]["rows"]}


# ---------------------------------------------------------------------------------------------
# Latency


def crafted_bridge_log() -> list[bytes]:
    """The client side: 100 reads the proxy asks of the editor on one id used again each time,
    taking 1/16 s .. 100/16 s in a shuffled order; the editor's prompt, never answered; the
    editor's cancel request, answered with an error. The agent side: the proxy's prompt and
    the agent's permission request waiting on the same id."""
    lines = [record("client->proxy", BASE, id=1, method="session/prompt", params={})]
    now = BASE
    for step in [(i * 37) % 100 + 1 for i in range(100)]:  # 1..100, each once, shuffled
        lines.append(record("proxy->client", now, id=7, method="fs/read_text_file", params={}))
        now += step / 16
        lines.append(record("client->proxy", now, id=7, result={"content": "x"}))
        now += 1
    lines.append(record("client->proxy", now, id=2, method="session/cancel_turn", params={}))
    lines.append(record("proxy->client", now + 0.5, id=2, error={"code": -32601, "message": "no"}))
    lines.append(record("proxy->agent", now, id=3, method="session/prompt", params={}))
    asked = {"sessionId": "s", "options": []}
    lines.append(
        record("agent->proxy", now + 1, id=3, method="session/request_permission", params=asked)
    )
    lines.append(
        record("proxy->agent", now + 3, id=3, result={"outcome": {"outcome": "cancelled"}})
    )
    lines.append(record("agent->proxy", now + 4, id=3, result={"stopReason": "cancelled"}))
    return lines


def test_latency_per_method_and_side_on_a_bridge_log_with_known_times() -> None:
    report = report_of(crafted_bridge_log())
    client, agent = side_of(report, "client"), side_of(report, "agent")
    assert client["latency"]["times"] == "measured"
    reads = rows(client)[("proxy", "fs/read_text_file")]
    # Durations 62.5 ms x 1..100: nearest rank 50 and 99 of 100.
    assert reads == {
        "sender": "proxy",
        "method": "fs/read_text_file",
        "count": 100,
        "answered": 100,
        "errors": 0,
        "unanswered": 0,
        "timed": 100,
        "p50": 50 * 62.5,
        "p99": 99 * 62.5,
        "max": 100 * 62.5,
        "exact": True,
    }
    prompt = rows(client)[("editor", "session/prompt")]
    assert (prompt["count"], prompt["answered"], prompt["unanswered"]) == (1, 0, 1)
    assert prompt["p50"] is None and prompt["max"] is None  # no answer: no time
    cancel = rows(client)[("editor", "session/cancel_turn")]
    assert (cancel["answered"], cancel["errors"], cancel["max"]) == (1, 1, 500.0)
    # The agent side: the permission request (id 3) is answered before the prompt (id 3).
    agent_rows = rows(agent)
    assert agent_rows[("agent", "session/request_permission")]["max"] == 2000.0
    assert agent_rows[("proxy", "session/prompt")]["max"] == 4000.0
    assert client["latency"]["waiting"] == 1 and agent["latency"]["waiting"] == 0
    assert client["latency"]["stray"] == agent["latency"]["stray"] == 0
    assert client["latency"]["byMethod"] is agent["latency"]["byMethod"] is False


def test_replaced_stray_and_unanswered_requests() -> None:
    latency = Latency()
    feed: list[tuple[str, float, dict[str, Any]]] = [
        ("client->proxy", 1.0, {"id": "a", "method": "session/new"}),
        ("client->proxy", 2.0, {"id": "a", "method": "session/new"}),  # replaces the first
        ("proxy->client", 2.5, {"id": "a", "result": None}),  # a null result is a result
        ("proxy->client", 3.0, {"id": "a", "result": {}}),  # nothing waits on "a": stray
        ("proxy->client", 3.0, {"id": 9, "method": "terminal/create"}),  # never answered
        ("proxy->client", 3.0, {"method": "session/update"}),  # a notification: not counted
        ("client->proxy", 3.5, {"id": "b", "method": "initialize"}),
    ]
    for number, (direction, when, fields) in enumerate(feed, 1):
        latency.feed(number, message(**fields), when, direction)
    batch = [{"jsonrpc": "2.0", "id": "b", "result": {}}, {"jsonrpc": "2.0", "method": "x"}]
    latency.feed(len(feed) + 1, json.dumps(batch).encode(), 4.0, "proxy->client")
    view = latency.view()
    by = {(row["sender"], row["method"]): row for row in view["rows"]}
    new = by[("editor", "session/new")]
    assert (new["count"], new["answered"], new["unanswered"], new["max"]) == (2, 1, 1, 500.0)
    assert by[("proxy", "terminal/create")]["unanswered"] == 1
    assert by[("editor", "initialize")]["max"] == 500.0  # answered in a batch
    assert ("proxy", "session/update") not in by
    assert view["stray"] == 1 and view["waiting"] == 1


def test_a_plain_log_is_counted_never_timed() -> None:
    lines = [
        message(id=0, method="initialize", params={}),
        message(id=0, result={}),
        message(id=2, method="session/prompt", params={}),
        message(id=2, method="session/request_permission", params={}),
        message(id=2, result={"outcome": {"outcome": "cancelled"}}),  # the latest waiting
    ]
    log = report_of(lines)["sides"][0]
    assert log["name"] == "log" and log["latency"]["times"] == "none"
    assert log["latency"]["byMethod"] is True
    by = rows(log)
    assert by[("editor", "initialize")]["answered"] == 1
    assert by[("agent", "session/request_permission")]["answered"] == 1
    assert by[("editor", "session/prompt")]["unanswered"] == 1
    assert all(row[f] is None for row in by.values() for f in ("p50", "p99", "max"))
    assert all(row["timed"] == 0 for row in by.values())


def test_a_log_whose_times_never_move_has_no_figures() -> None:
    lines = [
        record("proxy->agent", 0.0, id=1, method="initialize", params={}),
        record("agent->proxy", 0.0, id=1, result={}),
    ]
    agent = side_of(report_of(lines), "agent")
    assert agent["latency"]["times"] == "constant"
    row = rows(agent)[("proxy", "initialize")]
    assert row["answered"] == 1 and row["p50"] is None and row["timed"] == 0


def test_nearest_rank() -> None:
    assert [nearest_rank(4, p) for p in (1, 25, 50, 51, 99, 100)] == [1, 1, 2, 3, 4, 4]
    assert nearest_rank(1, 99) == 1
    durations = Durations()
    for value in (40.0, 10.0, 30.0, 20.0):
        durations.add(value)
    assert (durations.percentile(50), durations.percentile(99)) == (20.0, 40.0)
    assert Durations().percentile(50) is None


def test_past_the_exact_durations_a_histogram_within_its_ratio() -> None:
    durations = Durations()
    values = [float((i * 7919) % 10007 + 1) for i in range(EXACT_DURATIONS * 3)]
    for value in values:
        durations.add(value)
    assert durations.exact is None and durations.count == len(values)
    ranked = sorted(values)
    for percent in (50, 99):
        exact = ranked[nearest_rank(len(ranked), percent) - 1]
        found = durations.percentile(percent)
        assert found is not None and exact <= found <= exact * BUCKET_RATIO
    assert durations.largest == max(values)
    assert len(durations.buckets) < 250  # log-spaced: 1 .. 10^4 ms in 5% steps


def test_memory_is_bounded_whatever_the_requests() -> None:
    latency = Latency()
    for number in range(EXACT_DURATIONS * 4):  # answered: one method's durations
        data = message(id="r", method="session/prompt", params={})
        latency.feed(number, data, 1.0, "proxy->agent")
        latency.feed(number, message(id="r", result={}), 1.0 + number % 100, "agent->proxy")
    for number in range(MAX_PENDING * 5):  # never answered, each a new method
        data = message(id=number, method=f"_x/{number}" + "m" * 500, params={})
        latency.feed(number, data, float(number), "client->proxy")
    assert len(latency._pending) == MAX_PENDING  # the oldest dropped
    view = latency.view()
    assert len(view["rows"]) == MAX_METHODS + 1  # the last: the editor's other methods together
    assert view["rows"][-1]["method"] == latency_module.OTHER_METHODS
    assert max(len(row["method"]) for row in view["rows"]) <= latency_module.METHOD_CHARS
    assert view["rows"][-1]["count"] == MAX_PENDING * 5 - (MAX_METHODS - 1)
    prompt = view["rows"][0]
    assert prompt["count"] == prompt["answered"] == EXACT_DURATIONS * 4
    assert prompt["exact"] is False and prompt["max"] == 99_000.0
    row = latency._rows[("proxy", "session/prompt")]
    assert row.durations.exact is None and len(row.durations.buckets) <= 100


def test_changes_name_only_the_rows_changed() -> None:
    latency = Latency()
    latency.feed(1, message(id=1, method="initialize"), 1.0, "client->proxy")
    latency.feed(2, message(id=2, method="session/new"), 1.25, "client->proxy")
    assert [row["method"] for row in latency.view()["rows"]] == ["initialize", "session/new"]
    first = latency.changes()
    assert first is not None and len(first["rows"]) == 2
    assert latency.changes() is None
    latency.feed(3, message(id=2, result={}), 1.5, "proxy->client")
    changed = latency.changes()
    assert changed is not None and [row["method"] for row in changed["rows"]] == ["session/new"]
    assert changed["rows"][0]["max"] == 250.0 and latency.changes() is None


# ---------------------------------------------------------------------------------------------
# Permission audit

OPTIONS = [
    {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
]
DIFF = {"type": "diff", "path": "/a.txt", "oldText": "a", "newText": "b"}


def ask(number: int, call: str, **tool_call: Any) -> dict[str, Any]:
    return {
        "id": number,
        "method": "session/request_permission",
        "params": {
            "sessionId": "s",
            "toolCall": {"toolCallId": call, **tool_call},
            "options": OPTIONS,
        },
    }


def chosen(number: int, option: str | None) -> dict[str, Any]:
    outcome = {"outcome": "selected", "optionId": option} if option else {"outcome": "cancelled"}
    return {"id": number, "result": {"outcome": outcome}}


def audit_log() -> list[bytes]:
    """Four requests: allowed by the editor (an edit with its diff), rejected by it (an edit
    without), cancelled by the proxy (an edit by its call's kind), never answered."""
    created = {
        "method": "session/update",
        "params": {
            "sessionId": "s",
            "update": {
                "sessionUpdate": "tool_call",
                "toolCallId": "e3",
                "title": "E",
                "kind": "edit",
            },
        },
    }
    return [
        # The editor answers: allowed, an edit shown with its diff.
        record("agent->proxy", BASE, **ask(1, "e1", kind="edit", content=[DIFF])),
        record("proxy->client", BASE, **ask(1, "e1", kind="edit", content=[DIFF])),
        record("client->proxy", BASE + 2, **chosen(1, "yes")),
        record("proxy->agent", BASE + 2, **chosen(1, "yes")),
        # The editor rejects an edit asked without its diff.
        record("agent->proxy", BASE + 3, **ask(2, "e2", kind="edit")),
        record("proxy->client", BASE + 3, **ask(2, "e2", kind="edit")),
        record("client->proxy", BASE + 4, **chosen(2, "no")),
        record("proxy->agent", BASE + 4, **chosen(2, "no")),
        # The proxy cancels on the editor's behalf: the call's kind (edit) is its history's.
        record("agent->proxy", BASE + 5, **created),
        record("agent->proxy", BASE + 5, **ask(3, "e3")),
        record("proxy->agent", BASE + 6, **chosen(3, None)),
        # Never answered, not an edit.
        record("agent->proxy", BASE + 7, **ask(4, "r4", kind="read")),
    ]


def test_the_audit_of_crafted_requests() -> None:
    report = report_of(audit_log())
    agent, client = side_of(report, "agent"), side_of(report, "client")
    audited = [
        (
            a["call"],
            a["edit"],
            a["diff"],
            a["answer"] and (a["answer"]["verdict"], a["answer"]["by"]),
        )
        for a in agent["asks"]
    ]
    assert audited == [
        ("e1", True, True, ("allowed", "the editor, through the proxy")),
        ("e2", True, False, ("rejected", "the editor, through the proxy")),
        ("e3", True, False, ("cancelled", "the proxy, for the editor")),
        ("r4", False, False, None),
    ]
    assert agent["summary"]["audit"] == {
        "allowed": 1,
        "rejected": 1,
        "cancelled": 1,
        "error": 0,
        "other": 0,
        "unanswered": 1,
        "edits": 3,
        "editsWithoutDiff": 2,
    }
    assert [a["answer"]["by"] for a in client["asks"]] == ["the editor", "the editor"]
    assert agent["asks"][0]["answer"]["t"] - agent["asks"][0]["t"] == 2.0  # the wait


V2_DIFF = {
    "type": "diff",
    "changes": [{"operation": "modify", "path": "/a.txt"}],
    "patch": {"format": "git_patch", "text": "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n"},
}


def v2_update(call: str, **fields: Any) -> bytes:
    update = {"sessionUpdate": "tool_call_update", "toolCallId": call, **fields}
    return message(method="session/update", params={"sessionId": "s", "update": update})


def v2_ask(number: int, call: str, **tool_call: Any) -> bytes:
    subject = {"type": "tool_call", "toolCall": {"toolCallId": call, **tool_call}}
    params = {"sessionId": "s", "title": "Edit?", "subject": subject, "options": OPTIONS}
    return message(id=number, method="session/request_permission", params=params)


def test_an_edit_asked_about_shows_the_diff_its_call_already_holds() -> None:
    """A v2 subject (or a v1 ``toolCall``) is an update: without ``content`` the user is shown
    the call as it is, so the diff sent before the request counts as shown with it."""
    report = report_of(
        [
            v2_update("held", title="Edit a.txt", kind="edit", content=[V2_DIFF]),
            v2_ask(1, "held"),  # carries no content: the call's diff is what the user sees
            v2_update("cleared", title="Edit a.txt", kind="edit", content=[V2_DIFF]),
            v2_ask(2, "cleared", content=[]),  # shows nothing: no diff
            v2_update("none", title="Edit a.txt", kind="edit"),
            v2_ask(3, "none"),  # the call has no diff to show
            v2_ask(4, "new", kind="edit", content=[V2_DIFF]),  # carries its own
        ]
    )
    [side] = report["sides"]
    assert [(a["call"], a["edit"], a["diff"]) for a in side["asks"]] == [
        ("held", True, True),
        ("cleared", True, False),
        ("none", True, False),
        ("new", True, True),
    ]
    assert side["summary"]["audit"]["editsWithoutDiff"] == 2


def test_a_plain_log_is_answered_by_the_client_and_an_unknown_option_is_other() -> None:
    lines = [
        json.dumps({"jsonrpc": "2.0", **ask(1, "c")}).encode(),
        json.dumps({"jsonrpc": "2.0", **chosen(1, "maybe")}).encode(),
        json.dumps({"jsonrpc": "2.0", **ask(2, "c")}).encode(),
        json.dumps({"jsonrpc": "2.0", "id": 2, "error": {"code": 1, "message": "gone"}}).encode(),
    ]
    log = report_of(lines)["sides"][0]
    verdicts = [(a["answer"]["verdict"], a["answer"]["by"]) for a in log["asks"]]
    assert verdicts == [("other", "the client"), ("error", "the client")]
    assert log["summary"]["audit"]["other"] == log["summary"]["audit"]["error"] == 1


@pytest.mark.parametrize("log", sorted(REAL.glob("*.jsonl")), ids=lambda p: p.name)
def test_every_permission_of_the_real_agents_logs_is_in_the_audit(log: Path) -> None:
    asked: set[tuple[str, int]] = set()
    for number, line in enumerate(log.read_bytes().splitlines(), 1):
        value = json.loads(line)
        if value["message"].get("method") == "session/request_permission":
            side = "client" if value["direction"] in ("client->proxy", "proxy->client") else "agent"
            asked.add((side, number))
    report = report_of(log.read_bytes().splitlines())
    audited = {(side["name"], a["l"]) for side in report["sides"] for a in side["asks"]}
    assert asked and audited == asked
    for side in report["sides"]:
        totals = side["summary"]["audit"]
        verdicts = sum(totals[k] for k in ("allowed", "rejected", "cancelled", "error", "other"))
        assert verdicts + totals["unanswered"] == len(side["asks"])
        assert all(a["answer"] is not None for a in side["asks"])
        permission = [
            r for r in side["latency"]["rows"] if r["method"] == "session/request_permission"
        ]
        assert sum(r["answered"] for r in permission) == len(side["asks"])


def test_when_the_times_start_to_move_every_row_is_sent_again() -> None:
    latency = Latency()
    latency.feed(1, message(id=1, method="initialize"), 1.0, "client->proxy")
    latency.feed(2, message(id=1, result={}), 1.0, "proxy->client")
    first = latency.changes()
    assert first is not None and first["times"] == "constant" and first["rows"][0]["max"] is None
    latency.feed(3, message(id=2, method="session/new"), 2.0, "client->proxy")
    changed = latency.changes()
    assert changed is not None and changed["times"] == "measured"
    assert [(row["method"], row["max"]) for row in changed["rows"]] == [
        ("initialize", 0.0),
        ("session/new", None),
    ]


def test_the_live_events_carry_the_rows_that_changed_and_add_up_to_the_snapshot() -> None:
    from acp_toolcalls.report.live import LiveModel

    model = LiveModel()
    merged: dict[tuple[int, str, str], dict[str, Any]] = {}
    sent = 0
    for data in crafted_bridge_log():
        model.feed(data)
        seq = model.publish()
        for _, event in model.since(seq - 1) or []:
            for position, changes in json.loads(event)["latency"]:
                sent += len(changes["rows"])
                for row in changes["rows"]:
                    merged[(position, row["sender"], row["method"])] = row
    snapshot = json.loads(model.snapshot())
    whole = {
        (position, row["sender"], row["method"]): row
        for position, side in enumerate(snapshot["sides"])
        for row in side["latency"]["rows"]
    }
    assert merged == whole
    assert sent < 2 * len(crafted_bridge_log())  # the rows changed, not every row each time
    audit = [side["summary"]["audit"] for side in snapshot["sides"]]
    assert sum(totals["cancelled"] for totals in audit) == 1


# ---------------------------------------------------------------------------------------------
# The page, in headless Chromium

MARKUP = '<img src=x onerror="document.body.dataset.pwned=1">'

# Each side's latency figures and the audit's rows as the page shows them.
SHOWN = """
const views = document.getElementById('views');
const latency = [...views.querySelectorAll('#latency-view .view-side')].map((side) =>
  [side.dataset.side, [...side.querySelectorAll('tbody tr[data-method]')].map((tr) =>
    [tr.dataset.sender, tr.dataset.method, +tr.children[2].textContent, +tr.children[3].textContent,
     ...['p50', 'p99', 'max'].map((f) => {
       const ms = tr.querySelector(`[data-figure=${f}]`).dataset.ms;
       return ms === undefined ? null : +ms; })])]);
const audit = [...views.querySelectorAll('#audit-view tbody tr[data-line]')].map((tr) =>
  [tr.dataset.side, +tr.dataset.line, tr.dataset.verdict, tr.dataset.edit || null,
   tr.children[6].textContent]);
return {latency, audit, summary: document.querySelector('#audit-view summary').textContent,
        seq: document.body.dataset.views};
"""
OPEN_VIEWS = "for (const d of document.querySelectorAll('#views details')) d.open = true;"


def browser_log() -> list[bytes]:
    """The audit's requests (one titled with markup) and the crafted latency log."""
    lines = audit_log()
    lines[4] = record("agent->proxy", BASE + 3, **ask(2, "e2", kind="edit", title=MARKUP))
    return lines + crafted_bridge_log()


def expected(lines: list[bytes]) -> dict[str, Any]:
    """What the page must show of the report's data (the same shape as ``SHOWN``)."""
    report = report_of(lines)
    latency = [
        [
            side["name"],
            [
                [r["sender"], r["method"], r["count"], r["answered"], r["p50"], r["p99"], r["max"]]
                for r in side["latency"]["rows"]
            ],
        ]
        for side in report["sides"]
    ]
    asks = sorted(
        (a["l"], position, side["name"], a)
        for position, side in enumerate(report["sides"])
        for a in side["asks"]
    )
    audit = [
        [
            name,
            line,
            a["answer"]["verdict"] if a["answer"] else "unanswered",
            ("with-diff" if a["diff"] else "without-diff") if a["edit"] else None,
            a["answer"]["by"] if a["answer"] else "—",
        ]
        for line, _, name, a in asks
    ]
    missing = sum(side["summary"]["audit"]["editsWithoutDiff"] for side in report["sides"])
    return {"latency": latency, "audit": audit, "missing": missing}


def test_the_finished_reports_views(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    from acp_toolcalls.cli import main as cli_main
    from tests.report.test_inspect_browser import open_report, wait_for
    from tests.report.test_inspect_page import AXE

    lines = browser_log()
    log, page = tmp_path / "views.jsonl", tmp_path / "views.html"
    log.write_bytes(b"".join(line + b"\n" for line in lines))
    assert cli_main(["inspect", str(log), "-o", str(page)]) == 0
    open_report(browser, page)
    wait_for(browser, "return document.body.dataset.views", "the views")
    browser.execute_script(OPEN_VIEWS)
    shown = browser.execute_script(SHOWN)
    want = expected(lines)
    assert shown["latency"] == want["latency"]
    assert shown["audit"] == want["audit"]
    assert want["missing"] == 3 and "3 edits asked without their diff" in shown["summary"]
    client = dict(shown["latency"])["client"]
    assert ["proxy", "fs/read_text_file", 100, 100, 3125.0, 6187.5, 6250.0] in client
    # The agent's text is text.
    asked = browser.execute_script(
        "return [...document.querySelectorAll('#audit-view tbody td:nth-child(3)')]"
        ".map((td) => td.textContent)"
    )
    assert any(MARKUP in text for text in asked)
    assert not browser.execute_script("return document.querySelector('#views img')")
    assert browser.execute_script("return document.body.dataset.pwned") is None
    if AXE.exists():  # the views' markup passes axe-core too
        browser.execute_script(AXE.read_text(encoding="utf-8"))
        violations = browser.execute_async_script(
            """
            const done = arguments[arguments.length - 1];
            axe.run(document.getElementById('views')).then((r) => done(r.violations.map((v) =>
              [v.id, v.nodes.map((n) => n.target.join(' ')).slice(0, 5)])));
            """
        )
        assert violations == []


def shows(shown: dict[str, Any], want: dict[str, Any]) -> bool:
    return bool(shown["latency"] == want["latency"] and shown["audit"] == want["audit"])


def test_the_live_pages_views_update_as_lines_come(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    from selenium.webdriver.support.ui import WebDriverWait

    from tests.report.test_inspect_serve import append, open_live, serving, wait_for

    lines = browser_log()
    log = tmp_path / "live.jsonl"
    log.write_bytes(b"".join(line + b"\n" for line in lines[:6]))  # the second ask, waiting
    with serving(log) as served:
        open_live(browser, served.url)
        browser.execute_script(OPEN_VIEWS)
        wait_for(browser, "return document.body.dataset.views", "the views")
        shown = browser.execute_script(SHOWN)
        assert shown["audit"] == expected(lines[:6])["audit"]
        assert [row[2] for row in shown["audit"]] == [
            "allowed",
            "allowed",
            "unanswered",
            "unanswered",
        ]
        for start, end in ((6, 9), (9, len(lines))):
            append(log, *lines[start:end])
            want = expected(lines[:end])
            WebDriverWait(browser, 60, poll_frequency=0.05).until(
                lambda driver: shows(driver.execute_script(SHOWN), want),  # noqa: B023 (waited for within the iteration)
                message=f"the views after line {end}",
            )
            shown = browser.execute_script(SHOWN)
        assert "3 edits asked without their diff" in shown["summary"]
