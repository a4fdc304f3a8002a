"""Text that hides, and ``inspect``'s report file (issue 27, items 8 and 9), over real
subprocesses.

Human output (``replay``'s tables, ``validate``/``convert``/``inspect``'s lines, every stderr
note of ``bridge``) shows bidirectional controls and marks as escapes (``\\u202e``), and in
``replay``'s tables a carriage return in a value as ``\\x0d``, so no text can hide or reorder
what precedes it; JSON output and forwarded messages keep them as they are. ``inspect``
creates its report with the log's permissions and never through a symbolic link.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.builds import child_env
from tests.interop.sessions import bounded
from tests.proxy.test_permission_integrity import SID, Session, update

ROOT = Path(__file__).resolve().parents[2]
ENV = child_env(COLUMNS="220")
CLI = [sys.executable, "-m", "acp_toolcalls.cli"]
HIDING = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
"""Every character that reorders or marks text without being seen."""


def _cli(*argv: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [*CLI, *argv],
        input=None if stdin is None else stdin.decode(),
        capture_output=True,
        env=ENV,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done


def _hidden(text: str) -> list[str]:
    return [char for char in text if char in HIDING or char == "\r"]


def _call(title: str, call_id: str = "call\u202e1", **fields: Any) -> str:
    body = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": call_id,
        "title": title,
        "kind": "execute",
        "status": "completed",
        **fields,
    }
    return json.dumps(update(body), ensure_ascii=False)


def test_replay_shows_a_carriage_return_and_bidirectional_controls_in_its_table(
    tmp_path: Path,
) -> None:
    log = tmp_path / "hiding.jsonl"
    text = {"type": "content", "content": {"type": "text", "text": "ok\u2066 then\rhidden"}}
    location = {"path": "/w/a\u202eb.py", "line": 3}
    lines = [
        _call("rm -rf ~/ #\rRead README.md", content=[text], locations=[location]),
        _call("every " + " ".join(HIDING), call_id="call2"),
    ]
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = _cli("replay", "--all", str(log))
    assert done.returncode == 0, done.stderr
    assert _hidden(done.stdout) == []
    assert "rm -rf ~/ #\\x0dRead README.md" in done.stdout
    assert "call\\u202e1" in done.stdout and "a\\u202eb.py" in done.stdout
    assert "ok\\u2066 then\\x0dhidden" in done.stdout
    for char in HIDING:
        assert f"\\u{ord(char):04x}" in done.stdout, char
    # JSON output keeps every character as it was.
    document = json.loads(_cli("replay", "--json", str(log)).stdout)
    calls = {call["toolCallId"]: call for call in document["sessions"][SID]["toolCalls"]}
    assert calls["call\u202e1"]["title"] == "rm -rf ~/ #\rRead README.md"
    assert calls["call2"]["title"] == "every " + " ".join(HIDING)


DUPLICATE_KEY = (
    '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"' + SID + '","update":'
    '{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"t","status":"completed",'
    '"rawInput":{"a\u202eb":1,"a\u202eb":2}}}}'
)
"""A line whose finding's path holds a key with a right-to-left override in it."""


@pytest.mark.parametrize(
    "argv",
    [["validate", "--protocol", "v2"], ["convert", "--to", "v1"], ["inspect", "-o", "-"]],
    ids=["validate", "convert", "inspect"],
)
def test_the_commands_lines_show_bidirectional_controls_as_escapes(
    tmp_path: Path, argv: list[str]
) -> None:
    log = tmp_path / "dup.jsonl"
    log.write_text(DUPLICATE_KEY + "\n", encoding="utf-8")
    done = _cli(*argv, str(log))
    human = done.stderr + (done.stdout if argv[0] == "validate" else "")
    assert '["a\\u202eb"]' in human, human
    assert _hidden(human) == []


def test_validate_json_keeps_the_key_as_it_was(tmp_path: Path) -> None:
    log = tmp_path / "dup.jsonl"
    log.write_text(DUPLICATE_KEY + "\n", encoding="utf-8")
    document = json.loads(_cli("validate", "--json", "--protocol", "v2", str(log)).stdout)
    paths = [finding["path"] for finding in document["findings"]]
    assert '$.params.update.rawInput["a\u202eb"]' in paths


# --------------------------------------------------------------------------------------------
# inspect's report file


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def _inspect(*argv: str, stdin: bytes | None = None, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [*CLI, "inspect", *argv],
        input=stdin,
        capture_output=True,
        env=ENV,
        cwd=cwd,
        timeout=120,
        check=False,
        preexec_fn=lambda: os.umask(0o022),
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


def test_a_private_log_makes_a_private_report(tmp_path: Path) -> None:
    log = tmp_path / "private.jsonl"
    log.write_bytes((ROOT / "examples" / "session-v2.jsonl").read_bytes())
    log.chmod(0o600)
    assert _inspect(str(log), "-o", "report.html", cwd=tmp_path).returncode == 0
    assert _mode(tmp_path / "report.html") == 0o600
    # An existing report, readable by all, is narrowed to the log's permissions.
    shared = tmp_path / "shared.html"
    shared.write_text("old")
    shared.chmod(0o644)
    assert _inspect(str(log), "-o", str(shared), cwd=tmp_path).returncode == 0
    assert _mode(shared) == 0o600 and shared.read_text().startswith("<!")
    # From a pipe, whose data it is is not known: private.
    piped = _inspect("-o", "piped.html", stdin=log.read_bytes(), cwd=tmp_path)
    assert piped.returncode == 0 and _mode(tmp_path / "piped.html") == 0o600
    # A log readable by all makes a report readable by all (less the umask).
    log.chmod(0o644)
    assert _inspect(str(log), "-o", "open.html", cwd=tmp_path).returncode == 0
    assert _mode(tmp_path / "open.html") == 0o644


@pytest.mark.parametrize("dangling", [True, False], ids=["dangling", "to-a-file"])
def test_a_symbolic_link_at_the_report_is_refused(tmp_path: Path, dangling: bool) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes((ROOT / "examples" / "session-v2.jsonl").read_bytes())
    target = tmp_path / "elsewhere.txt"
    if not dangling:
        target.write_text("keep me")
    link = tmp_path / "report.html"
    link.symlink_to(target)
    done = _inspect(str(log), "-o", str(link), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        f"acp-toolcalls inspect: error: {link} is a symbolic link: refused (name the file itself)"
    )
    assert "Traceback" not in done.stderr
    assert link.is_symlink()
    if dangling:
        assert not target.exists()
    else:
        assert target.read_text() == "keep me"


# --------------------------------------------------------------------------------------------
# bridge's stderr notes


def test_a_bridge_note_never_shows_an_agents_tool_call_id_raw(tmp_path: Path) -> None:
    """A v1 editor's line limit leaves content items out of a v2 agent's call: the note (with
    ``--verbose``) names the call by its id, escaped; the editor gets the id as it was."""
    call_id = "c\u202e1\r\u2066x"
    chunks = [
        {
            "send": update(
                {
                    "sessionUpdate": "tool_call_content_chunk",
                    "toolCallId": call_id,
                    "content": {"type": "content", "content": {"type": "text", "text": "y" * 200}},
                }
            )
        }
        for _ in range(300)
    ]
    first = {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "title": "T"}
    steps = [{"send": update({**first, "status": "pending", "kind": "read"})}, *chunks]
    session = Session(tmp_path, 1, 2, steps)

    async def scenario() -> tuple[int, str, list[dict[str, Any]]]:
        client = await session.start("--verbose", "--max-line-bytes", "20000")
        await client.until(lambda m: m.get("method") == "session/update")
        code, err, _rest = await client.finish()
        return code, err, client.received

    _code, err, received = bounded(scenario())
    assert "left out so that the line stays under" in err, err
    assert "c\\u202e1\\x0d\\u2066x" in err
    assert _hidden(err) == [], err
    ids = {m["params"]["update"].get("toolCallId") for m in received if "params" in m}
    assert call_id in ids  # forwarded unchanged


def test_inspects_page_shows_bidirectional_controls_as_escapes(tmp_path: Path) -> None:
    """In the browser, a title, an id and a text with a right-to-left override show it as an
    escape; the report's data (what the page reads) keeps it."""
    from tests.report.test_inspect_browser import new_browser, open_report

    log = tmp_path / "hiding.jsonl"
    text = {"type": "content", "content": {"type": "text", "text": "ok\u2066 done"}}
    log.write_text(_call("evil\u202etxt.exe", content=[text]) + "\n", encoding="utf-8")
    page = tmp_path / "report.html"
    assert _inspect(str(log), "-o", str(page), cwd=tmp_path).returncode == 0
    browser = new_browser()
    try:
        open_report(browser, page)
        shown = browser.execute_script("return document.body.innerText")
    finally:
        browser.quit()
    assert "evil\\u202etxt.exe" in shown and "call\\u202e1" in shown
    assert "ok\\u2066 done" in shown
    assert _hidden(shown) == []
