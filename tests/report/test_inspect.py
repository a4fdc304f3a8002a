"""``acp-toolcalls inspect`` without a browser: the report's data and the command's edges.

- The history's state after each line equals what ``replay --json`` computes for the log cut
  at that line, for every line of the bundled demo and of the buggy example.
- A terminal's text rebuilt from the deltas equals ``terminal_text.sanitize`` of its bytes,
  whatever the chunking.
- Permission requests pair with their answers; ``validate``'s findings are on their lines.
- Bad input (not JSON, a line over the limit, unknown methods, not JSON Lines, no file) is one
  line on stderr naming where it is, never a traceback; the report is still written when the
  input could be read.
- The page is one file with no address of anything outside it.
"""

from __future__ import annotations

import base64
import gzip
import io
import json
import os
import random
import re
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from acp_toolcalls.bridge import sanitize
from acp_toolcalls.cli import main as cli_main
from acp_toolcalls.cli.lines import read_lines
from acp_toolcalls.report.model import ReportBuilder
from acp_toolcalls.report.page import page_chunks, render_page
from acp_toolcalls.report.terminal_output import TerminalText
from acp_toolcalls.store import KIND_LABELS

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "src" / "acp_toolcalls" / "data" / "demo-session.jsonl"
BUGGY = ROOT / "examples" / "buggy-v2.jsonl"


def build(path: Path, **options: Any) -> dict[str, Any]:
    return plain(finished(path, **options))


def finished(path: Path, **options: Any) -> dict[str, Any]:
    """``ReportBuilder.finish()`` of the log at ``path``, as the page takes it."""
    builder = ReportBuilder(**options)
    with path.open("rb") as stream:
        for number, data in read_lines(stream, builder.max_line_bytes):
            builder.feed(number, data)
    return builder.finish()


def plain(report: dict[str, Any]) -> Any:
    """The report's data as the page reads it (the details are taken from their history)."""
    return msgspec.json.decode(msgspec.json.encode(report, enc_hook=_details))


def _details(history: Any) -> Any:
    return history.take_details()


def replayed(lines: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Any:
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    capsys.readouterr()
    assert cli_main(["replay", "--json", str(cut)]) == 0
    return json.loads(capsys.readouterr().out)


def shown(call: dict[str, Any]) -> tuple[str, str, str]:
    """Title, kind and status of a ``replay --json`` call, as a client displays them."""
    kind = call.get("kind")
    kind = kind if isinstance(kind, str) else "other"
    title = next(
        (t for t in (call.get("title"), call.get("name")) if isinstance(t, str) and t),
        KIND_LABELS.get(kind, "Tool call"),
    )
    status = call.get("status")
    status = status if isinstance(status, str) else "pending"
    return title, kind, status


def state_after(call: dict[str, Any], line: int) -> dict[str, Any] | None:
    """The call's state after ``line``: its entries' changes merged, as the page merges them."""
    state: dict[str, Any] | None = None
    for entry in call["details"]["entries"]:
        if entry["l"] > line:
            break
        before = state or {"f": {}}
        state = {**before, **entry["s"], "f": {**before["f"], **entry["s"].get("f", {})}}
    return state


@pytest.mark.parametrize("log", [DEMO, BUGGY], ids=["demo", "buggy"])
def test_the_state_after_each_line_is_what_replay_computes_for_the_cut_log(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = build(log)
    (calls,) = report["calls"]
    lines = log.read_text(encoding="utf-8").splitlines()
    for cut in range(1, len(lines) + 1):
        document = replayed(lines[:cut], tmp_path, capsys)
        expected = {
            (session, call["toolCallId"]): call
            for session, held in document["sessions"].items()
            for call in held["toolCalls"]
        }
        seen = {}
        for call in calls:
            state = state_after(call, cut)
            if state is not None:
                seen[(call["session"], call["id"])] = (call, state)
        assert list(seen) == list(expected), cut
        for key, (call, state) in seen.items():
            replay_call = expected[key]
            assert (state["title"], state["kind"], state["status"]) == shown(replay_call), cut
            details = call["details"]
            values = {name: details["values"][index] for name, index in state["f"].items()}
            content = state.get("c", "absent")
            if content == "absent":
                assert "content" not in replay_call
            elif content is None:
                assert replay_call["content"] is None
            else:
                assert details["items"][content[0] : content[1]] == replay_call["content"]
            for name, value in values.items():
                assert replay_call.get(name, "absent") == value, (cut, name)
            others = set(replay_call) - {"toolCallId", "content"} - set(values)
            assert not others, (cut, others)


def test_every_change_is_told_as_what_it_did() -> None:
    report = build(BUGGY)
    (calls,) = report["calls"]
    call_1 = next(c for c in calls if c["id"] == "call_1")
    entries = {e["l"]: e["c"] for e in call_1["details"]["entries"]}
    values = call_1["details"]["values"]
    assert entries[8][0] == ["created"]
    kind = next(c for c in entries[9] if c[1] == "kind")
    assert kind[0] == "set" and values[kind[2]] == "read" and values[kind[3]] == "lookup"
    assert ["reopened", "completed", "in_progress"] in entries[10]
    content = next(c for c in entries[9] if c[1] == "content")
    assert content[0] == "replace" and content[2] == -1  # never set before
    # The demo: a chunk appends; a `null` clears; a repeated value is "same".
    (demo_calls,) = build(DEMO)["calls"]
    grep = next(c for c in demo_calls if c["id"] == "toolu_02_grep")
    kinds = [change[0] for e in grep["details"]["entries"] for change in e["c"]]
    assert kinds.count("append") == 3 and "replace" in kinds
    suite = next(c for c in demo_calls if c["id"] == "toolu_06_suite")
    cleared = [c for e in suite["details"]["entries"] for c in e["c"] if c[0] == "clear"]
    assert [c[1] for c in cleared] == ["capabilities"]
    assert suite["details"]["values"][cleared[0][3]] is None


def test_permission_requests_pair_with_their_answers_on_their_call() -> None:
    report = build(DEMO)
    (side,) = report["sides"]
    (ask,) = side["asks"]
    assert ask["title"] == "Allow this edit?"
    assert ask["description"] == "The agent wants to change src/tidy_dates/parse.py."
    assert ask["call"] == "toolu_03_edit" and ask["l"] == 21
    assert [o[1] for o in ask["options"]] == ["Allow once", "Always allow edits", "Deny"]
    assert ask["answer"]["outcome"] == "selected" and ask["answer"]["name"] == "Allow once"
    assert ask["answer"]["l"] == 22 and ask["answer"]["by"] == "the client"
    edit = next(c for c in report["calls"][0] if c["id"] == "toolu_03_edit")
    assert edit["asks"] == [0]


def test_validate_findings_are_on_their_lines(capsys: pytest.CaptureFixture[str]) -> None:
    report = build(BUGGY)
    assert cli_main(["validate", "--json", str(BUGGY)]) == 1
    expected = json.loads(capsys.readouterr().out)["findings"]
    assert sorted((f[0], f[2], f[3], f[5]) for f in report["findings"]) == sorted(
        (f["line"], f["path"], f["code"], f["message"]) for f in expected
    )
    (side,) = report["sides"]
    assert side["summary"]["open"] == [1]  # call_2 never finished
    assert side["summary"]["byStatus"] == {"completed": 1, "in_progress": 1}


@pytest.mark.parametrize("seed", range(20))
def test_terminal_text_deltas_rebuild_the_sanitized_output(seed: int) -> None:
    rng = random.Random(seed)
    pieces = [b"abc", b"\n", b"\r", b"\r\n", b"\x1b[32m", b"\x1b[0m", b"\x08", "é".encode(), b"x"]
    tracker = TerminalText()
    output = bytearray()
    text = ""
    for _ in range(60):
        if rng.random() < 0.1:
            output = bytearray(b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 5))))
            delta = tracker.update(output, appended=False)
        else:
            output += b"".join(rng.choice(pieces) for _ in range(rng.randint(1, 4)))
            delta = tracker.update(output, appended=True)
        if delta is not None:
            text = text[: delta[0]] + delta[1]
        assert text == sanitize(bytes(output)) == tracker.text
    assert tracker.update(None, appended=False) in (None, (0, ""))


def test_the_page_is_one_file_that_reaches_nothing_outside(tmp_path: Path) -> None:
    page = render_page(finished(DEMO))
    assert "<script src" not in page and "<link" not in page
    assert not re.search(r"https?://", page.split('<script type="application/x-acp-report"')[0])
    assert "default-src 'none'" in page  # the browser refuses any fetch the page might try
    main = re.search(r'<script type="application/x-acp-report" id="main">([^<]*)<', page)
    assert main is not None
    data = json.loads(gzip.decompress(base64.b64decode(main.group(1))))
    assert data["lineCount"] == 47 and len(data["cards"]) == 6
    assert render_page(finished(DEMO)) == page  # reproducible


def test_the_page_is_made_as_it_is_written() -> None:
    # The parts are made when the writer takes them, so a big report is never held whole in
    # pieces: the first chunk is made before any call's details are taken.
    report = finished(DEMO)
    chunks = page_chunks(report)
    assert next(chunks).startswith("<!doctype html>")
    assert all("details" in call for calls in report["calls"] for call in calls)
    rest = "".join(chunks)
    assert not any("details" in call for calls in report["calls"] for call in calls)
    assert rest.rstrip().endswith("</html>")
    assert rest.rindex('id="main"') > rest.rindex('id="p')  # main, which names them, last


# --------------------------------------------------------------------------------------------
# The command


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    status = cli_main(["inspect", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_the_command_writes_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "demo.html"
    status, _, err = run(["--demo", "-o", str(target)], capsys)
    assert status == 0
    assert target.read_text(encoding="utf-8").startswith("<!doctype html>")
    assert err.startswith(f"acp-toolcalls inspect: wrote {target} (6 tool calls, 0 findings")
    status, out, _ = run(["-o", "-", str(BUGGY)], capsys)
    assert status == 0 and out.startswith("<!doctype html>")


def test_bad_lines_are_one_line_each_and_the_report_is_still_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "bad.jsonl"
    good = DEMO.read_text(encoding="utf-8").splitlines()
    log.write_text(
        "\n".join(
            [
                *good[:10],
                "this is not JSON",
                '{"jsonrpc":"2.0","method":"_vendor/unknown","params":{"x":1}}',
                '{"jsonrpc":"2.0","method":"session/update","params":' + "x" * 5000 + "}",
                *good[10:],
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    target = tmp_path / "bad.html"
    status, _, err = run(["--max-line-bytes", "4096", "-o", str(target), str(log)], capsys)
    assert status == 0, err
    assert "Traceback" not in err
    notes = err.splitlines()
    assert notes[0].startswith("line 11: $: not valid JSON")
    assert notes[1].startswith("line 13: $: line of more than 4096 bytes")
    assert notes[-1].startswith("acp-toolcalls inspect: wrote")
    assert len(notes) == 3  # the unknown method is no error
    assert target.exists()


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "cannot read 'missing.jsonl': No such file or directory"),
        (b"\x00\x01\x02\n" * 6, "is not JSON Lines"),
        (b'{\n "jsonrpc": "2.0",\n "id": 1,\n "result": {}\n}\n', "is not JSON Lines"),
    ],
    ids=["missing", "binary", "pretty-printed"],
)
def test_unreadable_input_is_one_line_and_exit_2(
    content: bytes | None,
    expected: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    name = "missing.jsonl"
    if content is not None:
        name = "input.jsonl"
        (tmp_path / name).write_bytes(content)
    status, out, err = run([name], capsys)
    assert status == 2 and not out
    assert len(err.splitlines()) == 1 and expected in err and "Traceback" not in err
    assert not list(tmp_path.glob("*.html"))  # nothing half written


def test_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(["--demo", str(DEMO)], capsys)
    assert status == 2 and "--demo inspects the bundled example" in err
    status, _, err = run(["--side", "editor", str(DEMO)], capsys)
    assert status == 2 and "invalid choice" in err


def test_stdin_is_read_without_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(BUGGY.read_bytes())))
    status, _, err = run([], capsys)
    assert status == 0 and "wrote report.html (2 tool calls, 12 findings" in err
    assert (tmp_path / "report.html").is_file()


def test_the_default_output_is_named_after_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    status, _, _ = run([str(BUGGY)], capsys)
    assert status == 0 and (tmp_path / "buggy-v2.html").is_file()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX limits")
def test_a_failure_while_writing_leaves_no_report(tmp_path: Path) -> None:
    # The page is written as it is made: a write that fails (here a file-size limit) removes
    # the file, so no half page is left that looks like a report.
    import resource
    import signal
    import subprocess

    target = tmp_path / "report.html"

    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG rather than a signal
        resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))

    done = subprocess.run(
        [sys.executable, "-m", "acp_toolcalls", "inspect", "--demo", "-o", str(target)],
        capture_output=True,
        text=True,
        preexec_fn=limited,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "cannot write" in done.stderr and "Traceback" not in done.stderr
    assert not target.exists()
    # A device named as the output is never removed.
    done = subprocess.run(
        [sys.executable, "-m", "acp_toolcalls", "inspect", "--demo", "-o", "/dev/full"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and os.path.exists("/dev/full")


def test_a_terminals_unknown_key_shows_its_value_in_the_history(tmp_path: Path) -> None:
    """The store keeps a terminal's unknown keys (D19 amended); the history showed them as
    ``null``, reading only the terminal's known fields."""
    update = {"sessionUpdate": "terminal_update", "terminalId": "t", "futureKey": {"a": 1}}
    message = {"jsonrpc": "2.0", "method": "session/update",
               "params": {"sessionId": "s", "update": update}}  # fmt: skip
    log = tmp_path / "terminal.jsonl"
    log.write_text(json.dumps(message) + "\n", encoding="utf-8")
    (side,) = build(log)["sides"]
    (terminal,) = side["terminals"]
    details = terminal["details"]
    (entry,) = details["entries"]
    assert details["values"][entry["f"]["futureKey"]] == {"a": 1}
