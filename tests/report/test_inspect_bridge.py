"""``acp-toolcalls inspect`` is honest about a bridge (issue 29), on the recorded real sessions.

- A v1 side (the editor of a v2 agent, or a v1 agent) lists, for every line, the values and
  content items that line sent: what crossed that side, not the store's v2 view of it.
- Every finding says who sent its line (the agent, the editor or the proxy), from the record's
  direction; a plain log's findings name no sender.
- A permission request keeps the ``toolCall.content`` it showed the user.
- Conversion losses alike (side, session, path, reason) are one group; each line keeps its own.
- The v1 ``_meta`` terminal extension is a terminal with its whole output and its exit.
- The page (headless Chromium) shows the sender, the groups once, the request's content and
  the terminal.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_toolcalls.report.losses import MAX_WAITING, Losses
from acp_toolcalls.report.model import ReportBuilder
from tests.report.test_inspect import build
from tests.report.test_inspect_browser import new_browser, open_report, wait_for

DATA = Path(__file__).resolve().parents[1] / "data"
REAL = DATA / "real-agents"
V1_EDITOR = [
    *(
        REAL / f"{name}-v2-bridge.jsonl"
        for name in ("claude-bash", "claude-edit", "codex-exec", "codex-patch")
    ),
    DATA / "v1-client-v2-agent.jsonl",
    DATA / "v1-client-v2-agent-cancel.jsonl",
]
V1_AGENT = [REAL / "claude-bash-v1-bridge.jsonl", REAL / "codex-exec-v1-bridge.jsonl"]
DIRECT = [
    REAL / f"{name}-direct.jsonl"
    for name in ("claude-bash-v1-terminal-output", "codex-exec-v1-terminal-output", "codex-exec-v1")
]
BRIDGE_LOGS = [*V1_EDITOR, *V1_AGENT]
SENDER = {
    "agent->proxy": "agent",
    "proxy->agent": "proxy",
    "client->proxy": "editor",
    "proxy->client": "proxy",
}


def records(path: Path) -> dict[int, dict[str, Any]]:
    """The log's records by line number."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return {number: json.loads(text) for number, text in enumerate(lines, 1) if text.strip()}


def sent_fields(message: dict[str, Any], session: str, call: str) -> dict[str, Any] | None:
    """The tool-call fields ``message`` sent for ``call``: a v1 update or permission toolCall."""
    params = message.get("params") or {}
    if params.get("sessionId") != session:
        return None
    fields = (
        params.get("update")
        if message.get("method") == "session/update"
        else params.get("toolCall")
    )
    if isinstance(fields, dict) and fields.get("toolCallId") == call:
        return fields
    return None


def v1_sides(path: Path, **options: Any) -> list[tuple[int, dict[str, Any]]]:
    report = build(path, **options)
    positions = [i for i, side in enumerate(report["sides"]) if side["protocol"] == "v1"]
    assert positions, f"{path.name}: no v1 side"
    return [(i, report) for i in positions]


@pytest.mark.parametrize(
    ("path", "side"),
    [(p, None) for p in BRIDGE_LOGS] + [(p, "agent") for p in DIRECT],
    ids=lambda value: value.name if isinstance(value, Path) else str(value),
)
def test_a_v1_side_lists_the_values_and_items_its_lines_sent(path: Path, side: str | None) -> None:
    by_line = records(path)
    checked = 0
    for position, report in v1_sides(path, side=side):
        for call in report["calls"][position]:
            details = call["details"]
            for entry in details["entries"]:
                fields = sent_fields(by_line[entry["l"]]["message"], call["session"], call["id"])
                for change in entry["c"]:
                    kind, name = change[0], change[1] if len(change) > 1 else None
                    if (
                        fields is None
                        or name in (None, "_meta")
                        or kind not in ("set", "replace", "same")
                    ):
                        continue
                    if name == "content":
                        start, end = change[3]
                        assert details["items"][start:end] == fields["content"], (
                            path.name,
                            entry["l"],
                        )
                    else:
                        new = change[2] if kind == "same" else change[3]
                        assert details["values"][new] == fields[name], (path.name, entry["l"], name)
                    checked += 1
    assert checked


def test_the_editor_of_a_v2_agent_sees_the_v1_diff_it_got() -> None:
    """codex-acp's v2 diff is a `git_patch`; the v1 editor got `path`/`oldText`/`newText`."""
    report = build(REAL / "codex-patch-v2-bridge.jsonl")
    client = [s["name"] for s in report["sides"]].index("client")
    (call,) = report["calls"][client]
    items = call["details"]["items"]
    assert items and all(
        set(item) == {"type", "path", "oldText", "newText", "_meta"} for item in items
    )
    assert items[0]["oldText"] == "one\ntwo\nthree\n" and items[0]["newText"] == "one\nTWO\nthree\n"
    agent = [s["name"] for s in report["sides"]].index("agent")
    assert "patch" in report["calls"][agent][0]["details"]["items"][0]  # the agent's own v2 shape


@pytest.mark.parametrize("path", V1_EDITOR, ids=lambda p: p.name)
def test_each_finding_says_who_sent_its_line(path: Path) -> None:
    by_line = records(path)
    report = build(path)
    assert report["findings"], path.name
    for finding in report["findings"]:
        assert finding[6] == SENDER[by_line[finding[0]]["direction"]], finding


def test_each_direction_names_its_sender() -> None:
    """A bad line from each of the four directions: its finding names who sent it."""
    builder = ReportBuilder()
    bad = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": 7, "update": 3}}
    directions = ["client->proxy", "proxy->agent", "agent->proxy", "proxy->client"]
    for number, direction in enumerate(directions, 1):
        builder.feed(number, record(direction, 2, bad))
    findings = builder.finish()["findings"]
    senders = {f[0]: f[6] for f in findings}
    assert senders == {1: "editor", 2: "proxy", 3: "agent", 4: "proxy"}


def test_every_direction_of_a_bridge_log_has_a_sender() -> None:
    from acp_toolcalls.records import DIRECTIONS
    from acp_toolcalls.report.model import SENDERS

    assert {direction: SENDERS[direction] for direction in DIRECTIONS} == SENDER


def test_a_plain_log_names_no_sender(tmp_path: Path) -> None:
    plain = tmp_path / "plain.jsonl"
    lines = [
        json.dumps(r["message"]) for r in records(REAL / "codex-exec-v1-direct.jsonl").values()
    ]
    plain.write_text("\n".join(lines) + "\n{not json\n", encoding="utf-8")
    report = build(plain)
    assert report["findings"] and all(f[6] is None for f in report["findings"])


@pytest.mark.parametrize("path", [*V1_EDITOR, *V1_AGENT, *DIRECT], ids=lambda p: p.name)
def test_a_permission_request_keeps_the_content_it_showed(path: Path) -> None:
    by_line = records(path)
    report = build(path, side="agent" if path in DIRECT else None)
    asks = [ask for side in report["sides"] for ask in side["asks"]]
    assert asks
    for ask in asks:
        params = by_line[ask["l"]]["message"]["params"]
        subject = params.get("subject") or {}
        shown = (
            (subject.get("toolCall") or {})
            if subject.get("type") == "tool_call"
            else params.get("toolCall") or {}
        )
        assert ask["content"] == shown.get("content"), (path.name, ask["l"])


def test_the_editor_side_request_shows_the_command_it_was_asked_about() -> None:
    report = build(REAL / "claude-bash-v2-bridge.jsonl")
    client = [s["name"] for s in report["sides"]].index("client")
    (ask,) = report["sides"][client]["asks"]
    (item,) = ask["content"]
    assert "$ touch made.txt && echo hello" in item["content"]["text"]


def test_losses_alike_are_one_group_with_their_lines() -> None:
    report = build(REAL / "claude-edit-v2-bridge.jsonl")
    findings, groups = report["findings"], report["findingGroups"]
    lines = [[findings[i][0] for i in group] for group in groups]
    assert [16, 27, 32, 40] in lines  # `state_update` has no v1 form, 4 times
    for group in groups:
        alike = {(findings[i][1], findings[i][2], findings[i][3], findings[i][5]) for i in group}
        assert len(alike) == 1 and group == sorted(group)
    assert len(findings) == 5  # every line keeps its finding
    # Lines 25 and 28 (an edit's diff, then the permission request about it) are no loss: the
    # editor got them as v1 diffs (lines 26, 29), which the bridge rebuilt from the file.
    assert not {25, 28} & {finding[0] for finding in findings}


def record(direction: str, protocol: int, message: Any) -> bytes:
    return json.dumps(
        {"time": 1.0, "direction": direction, "protocol": protocol, "message": message}
    ).encode()


def state_update(session: str) -> dict[str, Any]:
    update = {"sessionUpdate": "state_update", "state": "running", "background": []}
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session, "update": update},
    }


def test_losses_of_other_sessions_are_other_groups() -> None:
    builder = ReportBuilder()
    hello = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
    lines = [
        record("client->proxy", 1, hello),
        record("proxy->agent", 2, {**hello, "params": {"protocolVersion": 2}}),
        *(record("agent->proxy", 2, state_update(s)) for s in ("a", "b", "a", "b", "c")),
    ]
    for number, data in enumerate(lines, 1):
        builder.feed(number, data)
    report = builder.finish()
    lines_of = [[report["findings"][i][0] for i in group] for group in report["findingGroups"]]
    assert sorted(lines_of) == [[3, 5], [4, 6]]  # session c's single loss is no group


def diff_edit(session: str, path: str) -> dict[str, Any]:
    patch = f"diff --git a{path} b{path}\n--- a{path}\n+++ b{path}\n@@ -1 +1 @@\n-a\n+b\n"
    diff = {
        "type": "diff",
        "changes": [{"operation": "modify", "path": path}],
        "patch": {"format": "git_patch", "text": patch},
    }
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "e", "content": [diff]}
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session,
            "update": update}}  # fmt: skip


def editor_got(session: str, item: dict[str, Any]) -> dict[str, Any]:
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "e", "content": [item]}
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session,
            "update": update}}  # fmt: skip


def text(value: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": value}}


def test_a_diff_the_bridge_may_have_read_from_disk_is_a_loss_only_if_the_editor_got_text() -> None:
    """The report reads no file: its own bridge sends every such diff as text. A loss saying
    "reading files from disk is off" was reported on every edit of a bridge log, also where the
    bridge had rebuilt the diff from the file (a false alarm). What the editor got settles it."""
    hello = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
    rebuilt = {"type": "diff", "path": "/w/a.py", "oldText": "a\n", "newText": "b\n"}
    patch = diff_edit("s2", "/w/b.py")["params"]["update"]["content"][0]["patch"]["text"]
    as_text = text(f"Modified /w/b.py\n\n```diff\n{patch}```")
    lines = [
        record("client->proxy", 1, hello),
        record("proxy->agent", 2, {**hello, "params": {"protocolVersion": 2}}),
        record("agent->proxy", 2, diff_edit("s1", "/w/a.py")),  # 3: rebuilt
        # An earlier state of the call, which the bridge held to coalesce and sent on reading
        # line 3 (a live session's order): not what the editor got for the diff.
        record("proxy->client", 1, editor_got("s1", text("the call's arguments"))),
        record("proxy->client", 1, editor_got("s1", rebuilt)),
        record("agent->proxy", 2, diff_edit("s2", "/w/b.py")),  # 6: sent as text
        record("proxy->client", 1, editor_got("s1", as_text)),  # another session's
        record("proxy->client", 1, editor_got("s2", as_text)),
        record("agent->proxy", 2, [state_update("s4"), diff_edit("s4", "/w/a.py")]),  # 9
        record("proxy->client", 1, editor_got("s4", rebuilt)),  # the batch's diff: rebuilt
        record("agent->proxy", 2, diff_edit("s3", "/w/c.py")),  # 11: the log ends first
    ]
    builder = ReportBuilder()
    for number, data in enumerate(lines, 1):
        builder.feed(number, data)
    findings = builder.finish()["findings"]
    said = {finding[0]: finding[5] for finding in findings if finding[3] == "conversion-loss"}
    assert sorted(said) == [6, 9, 11]  # 9: the batch's `state_update`
    assert "the editor got /w/b.py as text" in said[6]
    assert "`state_update` has no v1 form" in said[9]
    assert "the log does not show what the editor got" in said[11]
    assert not any("reading files from disk is off" in text for text in said.values())


def test_diff_losses_waiting_for_the_editor_are_bounded() -> None:
    losses = Losses()
    for number in range(MAX_WAITING + 3):
        message = diff_edit("s", "/w/a.py")
        message["params"]["update"]["toolCallId"] = f"e{number}"
        losses.feed(number, json.dumps(message).encode(), 2, 1)
    unsettled = [finding[0] for finding in losses.findings]
    assert unsettled == [0, 1, 2]  # the oldest, kept as unsettled
    assert all("the log does not show" in finding[4] for finding in losses.findings)
    losses.settle()
    assert len(losses.findings) == MAX_WAITING + 3


TERMINALS = [
    (REAL / "claude-bash-v1-terminal-output-direct.jsonl", "agent", "hello"),
    (REAL / "codex-exec-v1-terminal-output-direct.jsonl", "agent", "hello\n"),
    (REAL / "codex-exec-v1-direct.jsonl", "agent", "hello\n"),
    (REAL / "codex-exec-v1-bridge.jsonl", None, "hello\n"),
]


def terminal_text(terminal: dict[str, Any]) -> str:
    text = ""
    for entry in terminal["details"]["entries"]:
        if "o" in entry:
            text = text[: entry["o"][0]] + entry["o"][1]
    return text


@pytest.mark.parametrize(
    ("path", "side", "output"), TERMINALS, ids=lambda v: getattr(v, "name", None)
)
def test_the_v1_terminal_extension_is_a_terminal_with_its_whole_output_and_exit(
    path: Path, side: str | None, output: str
) -> None:
    report = build(path, side=side)
    agent = [s["name"] for s in report["sides"]].index("agent")
    shown = report["sides"][agent]
    (terminal,) = shown["terminals"]
    assert shown["summary"]["terminals"] == 1
    assert terminal_text(terminal) == output
    last = terminal["details"]["entries"][-1]
    assert terminal["details"]["values"][last["f"]["exitStatus"]] == {"exitCode": 0}
    (call,) = report["calls"][agent]
    items = call["details"]["items"]
    assert {"type": "terminal", "terminalId": terminal["id"]} in items


@pytest.mark.parametrize(
    ("path", "side", "output"), TERMINALS[:3], ids=lambda v: getattr(v, "name", None)
)
def test_a_v1_capture_without_its_initialize_still_shows_the_terminal(
    path: Path, side: str | None, output: str, tmp_path: Path
) -> None:
    """A plain log that starts after ``initialize`` (a capture begun mid-session): the report
    names it v1 (``validate``'s detection) and reads it so, not as v2 with 0 terminals."""
    messages = [r["message"] for r in records(path).values()]
    start = next(i for i, m in enumerate(messages) if m.get("method") == "session/new")
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(json.dumps(m) + "\n" for m in messages[start:]), encoding="utf-8")
    report = build(cut)
    (shown,) = report["sides"]
    assert shown["protocol"] == "v1"
    (terminal,) = shown["terminals"]
    assert terminal_text(terminal) == output
    (call,) = report["calls"][0]
    assert call["kind"][-1][1] == "execute" and call["status"][-1][1] == "completed"


# --------------------------------------------------------------------------------------------
# The command and the page


def page_data(page: Path) -> dict[str, Any]:
    import gzip

    main = re.search(
        r'<script type="application/x-acp-report" id="main">([^<]*)<', page.read_text()
    )
    assert main is not None
    data: dict[str, Any] = json.loads(gzip.decompress(base64.b64decode(main.group(1))))
    return data


def test_the_command_writes_the_groups_senders_and_shown_content(tmp_path: Path) -> None:
    target = tmp_path / "edit.html"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "acp_toolcalls",
            "inspect",
            str(REAL / "claude-edit-v2-bridge.jsonl"),
            "-o",
            str(target),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    data = page_data(target)
    assert len(data["findingGroups"]) == 1  # the four `state_update`s (the edit is no loss)
    assert {f[6] for f in data["findings"]} == {"agent"}
    client = [s["name"] for s in data["sides"]].index("client")
    assert data["sides"][client]["asks"][0]["content"]


@pytest.fixture(scope="module")
def browser() -> Any:
    driver = new_browser()
    try:
        yield driver
    finally:
        driver.quit()


def opened(driver: Any, log: Path, tmp_path: Path, *args: str) -> None:
    target = tmp_path / (log.stem + ".html")
    done = subprocess.run(
        [sys.executable, "-m", "acp_toolcalls", "inspect", str(log), *args, "-o", str(target)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    open_report(driver, target)
    wait_for(driver, "return document.body.dataset.shown", "the list")


def test_the_page_lists_losses_alike_once_with_who_sent_them(browser: Any, tmp_path: Path) -> None:
    opened(browser, REAL / "claude-edit-v2-bridge.jsonl", tmp_path)
    listed = browser.execute_script(
        "return [...document.querySelectorAll('#findings .finding')].map(f => "
        "[f.dataset.line, f.dataset.sender, f.dataset.count || null, f.textContent])"
    )
    assert [row[:3] for row in listed] == [
        ["14", "agent", None],
        ["16", "agent", "4"],
    ]  # the edit (lines 25 and 28) is no loss: the editor got it as v1 diffs
    assert (
        "sent by the agent" in listed[1][3]
        and "the same on 4 lines: 16, 27, 32, 40" in listed[1][3]
    )


def test_the_editor_side_request_shows_what_the_user_saw(browser: Any, tmp_path: Path) -> None:
    opened(browser, REAL / "claude-bash-v2-bridge.jsonl", tmp_path)
    script = (
        "const box = document.querySelector('.side[data-side=\"client\"] .ask .ask-content');"
        "return box && box.querySelector('pre') ? box.textContent : null"
    )
    shown = wait_for(browser, script, "the request's content")
    assert "$ touch made.txt && echo hello" in shown


def test_the_page_shows_the_extension_as_a_terminal(browser: Any, tmp_path: Path) -> None:
    opened(
        browser, REAL / "codex-exec-v1-terminal-output-direct.jsonl", tmp_path, "--side", "agent"
    )
    script = "const t = document.querySelector('.terminal-box'); return t && t.textContent"
    text = wait_for(browser, script, "the terminal")
    assert (
        "exited 0" in text
        and "hello" in text
        and "from the tool call's _meta (terminal extension)" in text
    )
    summary = browser.execute_script("return document.getElementById('summary').textContent")
    assert "1 terminal" in summary


def test_the_editor_column_draws_the_v1_diff_it_got(browser: Any, tmp_path: Path) -> None:
    """codex-acp's v2 `git_patch` reached the v1 editor as `oldText`/`newText`: the editor's
    column and its permission request draw that v1 diff, not the agent's v2 item."""
    opened(browser, REAL / "codex-patch-v2-bridge.jsonl", tmp_path)
    script = (
        "const col = document.querySelector('.side[data-side=\"client\"]');"
        "const rows = (sel) => [...col.querySelectorAll(sel)].map((r) => r.textContent);"
        "return col && [rows('.content .diff .del'), rows('.content .diff .add'),"
        " rows('.ask-content .diff .add')]"
    )
    removed, added, asked = wait_for(browser, script, "the editor's diff")
    assert removed == ["-two"] and added == ["+TWO"] and asked == ["+TWO"]


def test_a_wrapped_capture_names_who_sent_each_finding(tmp_path: Path) -> None:
    """acp-devtools' capture (no proxy): a bad line from each peer, named as its sender."""
    capture = tmp_path / "capture.jsonl"
    bad = json.dumps(
        {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": 7, "update": 3}}
    )
    lines = (DATA / "captures" / "devtools-v1.jsonl").read_text(encoding="utf-8").splitlines()
    for direction in ("editor-to-agent", "agent-to-editor"):
        lines.append(
            json.dumps(
                {"seq": len(lines) + 1, "direction": direction, "kind": "notification", "raw": bad}
            )
        )
    capture.write_text("\n".join(lines) + "\n", encoding="utf-8")
    target = tmp_path / "capture.html"
    done = subprocess.run(
        [sys.executable, "-m", "acp_toolcalls", "inspect", str(capture), "-o", str(target)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    senders = {f[0]: f[6] for f in page_data(target)["findings"]}
    assert senders[len(lines) - 1] == "editor" and senders[len(lines)] == "agent"
