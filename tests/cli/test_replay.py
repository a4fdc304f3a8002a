"""``acp-toolcalls replay``: the JSON contract of issue 3, diagnostics, exit codes, the human
tables, ``--follow`` and the bundled demo session."""

from __future__ import annotations

import base64
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from acp_toolcalls.check import validate_message
from acp_toolcalls.cli import main
from acp_toolcalls.cli import replay as replay_module
from acp_toolcalls.cli._follow import FollowReader
from acp_toolcalls.cli.render import last_output_lines, patch_counts, render_store, sanitize
from acp_toolcalls.models import VersionName
from acp_toolcalls.store import Limits, TerminalState, ToolCallStore
from tests.builds import child_env

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "src" / "acp_toolcalls" / "data" / "demo-session.jsonl"
S = "sess_1"


# --- helpers --------------------------------------------------------------------------------


def update(body: dict[str, Any], session: str = S) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session, "update": body},
    }


def tcu(call_id: str = "call_1", session: str = S, **fields: Any) -> dict[str, Any]:
    return update({"sessionUpdate": "tool_call_update", "toolCallId": call_id, **fields}, session)


def chunk(call_id: str, text: str, session: str = S) -> dict[str, Any]:
    item = {"type": "content", "content": {"type": "text", "text": text}}
    return update(
        {"sessionUpdate": "tool_call_content_chunk", "toolCallId": call_id, "content": item},
        session,
    )


def text_item(text: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": text}}


def terminal(terminal_id: str = "term_1", session: str = S, **fields: Any) -> dict[str, Any]:
    return update(
        {"sessionUpdate": "terminal_update", "terminalId": terminal_id, **fields}, session
    )


def output_chunk(terminal_id: str, data: bytes | str) -> dict[str, Any]:
    encoded = base64.b64encode(data).decode() if isinstance(data, bytes) else data
    return update(
        {"sessionUpdate": "terminal_output_chunk", "terminalId": terminal_id, "data": encoded}
    )


def permission(tool_call: dict[str, Any], request_id: int = 7, **params: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "session/request_permission",
        "params": {
            "sessionId": S,
            "title": "Allow?",
            "subject": {"type": "tool_call", "toolCall": tool_call},
            "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}],
            **params,
        },
    }


def init_request(version: int, request_id: int = 0) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {"protocolVersion": version},
    }


def init_response(version: int, request_id: int = 0) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": {"protocolVersion": version}}


def v1_tool_call(call_id: str = "call_1", **fields: Any) -> dict[str, Any]:
    return update({"sessionUpdate": "tool_call", "toolCallId": call_id, **fields})


def write_log(tmp_path: Path, lines: list[Any], name: str = "log.jsonl") -> Path:
    path = tmp_path / name
    with path.open("wb") as f:
        for line in lines:
            f.write(line if isinstance(line, bytes) else json.dumps(line).encode())
            f.write(b"\n")
    return path


def replay(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, lines: list[Any], *args: str
) -> tuple[int, str, str]:
    code = main(["replay", *args, str(write_log(tmp_path, lines))])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def document(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, lines: list[Any], *args: str
) -> dict[str, Any]:
    code, out, err = replay(capsys, tmp_path, lines, "--json", *args)
    assert code == 0, err
    assert out.endswith("}\n") and out.count("\n") == 1  # ONE document, newline-terminated
    result: dict[str, Any] = json.loads(out)
    return result


def calls(doc: dict[str, Any], session: str = S) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = doc["sessions"][session]["toolCalls"]
    return result


def terminals(doc: dict[str, Any], session: str = S) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = doc["sessions"][session]["terminals"]
    return result


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


# --- the document ---------------------------------------------------------------------------


def test_sessions_that_saw_a_call_or_a_terminal_have_both_keys(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    lines = [
        update(
            {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "m",
                "content": {"type": "text", "text": "hi"},
            },
            "quiet",
        ),
        tcu("a", "s_calls", title="A"),
        terminal("t", "s_terms"),
    ]
    doc = document(capsys, tmp_path, lines)
    assert doc == {
        "sessions": {
            "s_calls": {"toolCalls": [{"toolCallId": "a", "title": "A"}], "terminals": []},
            "s_terms": {"toolCalls": [], "terminals": [{"terminalId": "t"}]},
        }
    }


def test_empty_log_is_an_empty_document(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert document(capsys, tmp_path, [b"", b"   "]) == {"sessions": {}}


def test_tool_calls_in_order_of_first_sight(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    lines = [
        chunk("b", "first seen through a chunk"),
        tcu("a", title="A"),
        permission({"toolCallId": "c", "title": "C"}),
        tcu("b", title="B"),
        tcu("a", status="completed"),
    ]
    doc = document(capsys, tmp_path, lines)
    assert [tc["toolCallId"] for tc in calls(doc)] == ["b", "a", "c"]


def test_null_is_shown_and_never_set_is_absent(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    lines = [
        tcu(title="T", kind="read", status="in_progress", rawInput={"q": 1}),
        tcu(title=None, status=None, rawInput=None, locations=None, content=[]),
    ]
    (tc,) = calls(document(capsys, tmp_path, lines))
    assert tc == {
        "toolCallId": "call_1",
        "title": None,
        "kind": "read",
        "status": None,
        "content": [],
        "locations": None,
        "rawInput": None,
    }


def test_update_before_create_creates(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tc,) = calls(document(capsys, tmp_path, [tcu(status="completed")]))
    assert tc == {"toolCallId": "call_1", "status": "completed"}  # no invented failure


def test_chunks_append_and_a_replacement_replaces(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    lines = [
        chunk("absent", "x"),  # content never set: becomes [item]
        tcu("null", content=None),
        chunk("null", "y"),  # content null: becomes [item]
        tcu("replaced", content=[text_item("old")]),
        chunk("replaced", "1"),
        tcu("replaced", content=[text_item("new")]),
        chunk("replaced", "2"),
    ]
    got = {tc["toolCallId"]: tc["content"] for tc in calls(document(capsys, tmp_path, lines))}
    assert got == {
        "absent": [text_item("x")],
        "null": [text_item("y")],
        "replaced": [text_item("new"), text_item("2")],
    }


def test_meta_and_unknown_fields_patch_by_key(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    lines = [
        tcu("a", _meta={"x": 1, "y": 2}, vendorField={"v": 1}),
        tcu("a", _meta={"y": None, "z": 3}),
        tcu("b", _meta={"x": 1}),
        tcu("b", _meta=None),
        update(
            {
                "sessionUpdate": "tool_call_content_chunk",
                "toolCallId": "a",
                "content": text_item("c"),
                "_meta": {"chunk": True},
            }
        ),
    ]
    a, b = calls(document(capsys, tmp_path, lines))
    assert a["_meta"] == {"x": 1, "z": 3}  # chunk `_meta` is chunk-scoped
    assert a["vendorField"] == {"v": 1}
    assert b["_meta"] is None


def test_terminal_output_absent_null_and_data(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    lines = [
        terminal("never", command="ls"),
        terminal("cleared", output={"data": b64(b"gone")}),
        terminal("cleared", output=None),
        terminal("snap", output={"data": b64(b"old")}),
        terminal("snap", output={"data": b64(b"head\r\n")}),  # a snapshot replaces
        output_chunk("snap", b"\xe2\x82"),  # chunks are decoded on their own, then appended
        output_chunk("snap", b"\xac tail"),
        output_chunk("unseen", b"created by a chunk"),
        terminal("null_then_chunk", output=None),
        output_chunk("null_then_chunk", b"more"),
        terminal("snap", exitStatus={"exitCode": 0}, cwd=None),
    ]
    got = {t["terminalId"]: t for t in terminals(document(capsys, tmp_path, lines))}
    assert got["never"] == {"terminalId": "never", "command": "ls"}
    assert got["cleared"] == {"terminalId": "cleared", "output": None}
    assert got["snap"] == {
        "terminalId": "snap",
        "output": {"data": b64("head\r\n€ tail".encode())},
        "exitStatus": {"exitCode": 0},
        "cwd": None,
    }
    assert got["unseen"] == {"terminalId": "unseen", "output": {"data": b64(b"created by a chunk")}}
    assert got["null_then_chunk"]["output"] == {"data": b64(b"more")}


def test_permission_subject_is_an_update_and_prompt_text_stays_out(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    lines = [
        permission(
            {"toolCallId": "c", "status": "pending"}, title="Run rm -rf?", description="Really?"
        ),
        tcu("c", title="Clean build dir", kind="delete"),
        permission({"toolCallId": "c", "status": "in_progress", "title": None}, request_id=8),
        {
            "jsonrpc": "2.0",
            "id": 9,
            "method": "session/request_permission",
            "params": {
                "sessionId": S,
                "title": "Run it?",
                "subject": {"type": "command", "command": "make", "cwd": "/p", "toolCallId": "c"},
                "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}],
            },
        },
    ]
    (tc,) = calls(document(capsys, tmp_path, lines))
    assert tc == {"toolCallId": "c", "status": "in_progress", "title": None, "kind": "delete"}


def test_batches_apply_in_array_order(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    lines = [
        [tcu("a", status="in_progress"), chunk("a", "1"), tcu("a", status="completed")],
        [tcu("b", content=[text_item("whole")]), chunk("b", "then a chunk")],
        [chunk("c", "a chunk"), tcu("c", content=[text_item("then whole")])],
    ]
    a, b, c = calls(document(capsys, tmp_path, lines))
    assert a == {"toolCallId": "a", "status": "completed", "content": [text_item("1")]}
    assert b["content"] == [text_item("whole"), text_item("then a chunk")]
    assert c["content"] == [text_item("then whole")]


# --- v1 input -------------------------------------------------------------------------------


def test_v1_creates_merge_and_null_means_unchanged(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    lines = [
        v1_tool_call(
            title="Read",
            kind="read",
            status="in_progress",
            content=[{"type": "content", "content": {"type": "text", "text": "x"}}],
        ),
        # A repeated create with defaults (D9) and nulls (D8) changes only its title.
        v1_tool_call(title="Read config", kind="other", status="pending", content=[], locations=[]),
        update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "call_1",
                "title": None,
                "status": None,
                "rawOutput": {"ok": True},
            }
        ),
        update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "call_1",
                "status": "completed",
                "locations": [],
            }
        ),
    ]
    (tc,) = calls(document(capsys, tmp_path, lines, "--protocol", "v1"))
    assert tc == {
        "toolCallId": "call_1",
        "title": "Read config",
        "kind": "read",
        "status": "completed",
        "content": [text_item("x")],
        "locations": [],
        "rawOutput": {"ok": True},
    }


def test_v1_diff_becomes_a_v2_diff(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    lines = [
        v1_tool_call(
            "new",
            title="Create",
            content=[{"type": "diff", "path": "/p/new.txt", "newText": "a\n"}],
        ),
        v1_tool_call(
            "mod",
            title="Edit",
            content=[{"type": "diff", "path": "/p/f.txt", "oldText": "a\n", "newText": "b\n"}],
        ),
    ]
    new, mod = calls(document(capsys, tmp_path, lines, "--protocol", "v1"))
    (new_diff,) = new["content"]
    assert new_diff["type"] == "diff"
    assert new_diff["changes"] == [{"operation": "add", "path": "/p/new.txt", "fileType": "text"}]
    assert new_diff["patch"]["format"] == "git_patch"
    assert "--- /dev/null\n+++ /p/new.txt\n" in new_diff["patch"]["text"]
    (mod_diff,) = mod["content"]
    assert mod_diff["changes"] == [{"operation": "modify", "path": "/p/f.txt", "fileType": "text"}]
    assert "-a\n+b\n" in mod_diff["patch"]["text"]


def test_v1_permission_tool_call_is_a_v1_update(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    ask = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "session/request_permission",
        "params": {
            "sessionId": S,
            "toolCall": {"toolCallId": "call_1", "status": "pending", "title": None},
            "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}],
        },
    }
    lines = [v1_tool_call(title="Write", kind="edit", status="in_progress"), ask]
    (tc,) = calls(document(capsys, tmp_path, lines, "--protocol", "v1"))
    assert tc == {"toolCallId": "call_1", "title": "Write", "kind": "edit", "status": "pending"}


# --- protocol detection ---------------------------------------------------------------------


V1_CREATE = v1_tool_call("v1_call", title="from v1")
V2_UPDATE = tcu("v2_call", title="from v2")
V2_CHUNK = chunk("v2_call", "out")  # a v2-only update


@pytest.mark.parametrize(
    ("lines", "seen"),
    [
        ([init_request(1), init_response(2), V1_CREATE, V2_UPDATE], ["v2_call"]),  # response wins
        ([init_request(2), init_response(1), V1_CREATE, V2_UPDATE], ["v1_call", "v2_call"]),
        ([init_request(1), V1_CREATE], ["v1_call"]),  # a request alone decides
        ([init_request(2), V2_UPDATE], ["v2_call"]),
        # No initialize: the first message of one version decides, as `validate` decides
        # (D45; v2 when none tells).
        ([V1_CREATE, V2_UPDATE], ["v1_call", "v2_call"]),
        ([V2_CHUNK, V1_CREATE, V2_UPDATE], ["v2_call"]),
        ([V2_UPDATE], ["v2_call"]),
    ],
    ids=[
        "response-v2-wins",
        "response-v1-wins",
        "request-v1-alone",
        "request-v2-alone",
        "none-v1-first",
        "none-v2-first",
        "none-tells",
    ],
)
def test_auto_protocol(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, lines: list[Any], seen: list[str]
) -> None:
    doc = document(capsys, tmp_path, lines)
    assert [tc["toolCallId"] for tc in calls(doc)] == seen


def test_protocol_flag_overrides_initialize(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    lines = [init_request(2), init_response(2), V1_CREATE]
    doc = document(capsys, tmp_path, lines, "--protocol", "v1")
    assert [tc["toolCallId"] for tc in calls(doc)] == ["v1_call"]


def test_v1_tool_call_on_a_v2_stream_is_ignored_with_a_note(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = replay(capsys, tmp_path, [init_request(2), V1_CREATE], "--json", "--strict")
    assert code == 0  # ignored by the contract, so not an invalid line
    assert json.loads(out) == {"sessions": {}}
    assert err.startswith("line 2: $.params.update.sessionUpdate: ")


# --- invalid input --------------------------------------------------------------------------


def test_diagnostics_name_their_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    lines = [
        tcu(title="Kept", kind="read"),
        b"",  # blank lines are skipped but still counted
        tcu(title=42, locations=[{"path": "/ok"}, {"line": 3}]),  # wrong type; a bad item
        b'{"jsonrpc": "2.0", "method": "session/upd',  # not JSON
        update(
            {
                "sessionUpdate": "tool_call_content_chunk",
                "toolCallId": "call_1",
                "content": {"type": "content"},
            }
        ),
        b'{"jsonrpc":"2.0","method":"_x","params":{"a":"\xff"}}',
        [tcu("b", title="in a batch"), 5],
        output_chunk("term_1", "not base64!"),
        tcu(status="completed"),
    ]
    code, out, err = replay(capsys, tmp_path, lines, "--json")
    assert code == 0
    assert [line.split(": ")[:2] for line in err.splitlines()] == [
        ["line 3", "$.params.update.title"],
        ["line 3", "$.params.update.locations[1]"],
        ["line 4", "$"],
        ["line 5", "$.params.update.content"],
        ["line 6", "$"],
        ["line 7", "$[1]"],
        ["line 8", "$.params.update.data"],
    ]
    assert "not valid UTF-8 at byte 46" in err
    a, b = calls(json.loads(out))
    # 42 read as omitted, the bad location dropped, the bad chunk dropped whole.
    assert a == {
        "toolCallId": "call_1",
        "title": "Kept",
        "kind": "read",
        "locations": [{"path": "/ok"}],
        "status": "completed",
    }
    assert b == {"toolCallId": "b", "title": "in a batch"}
    (term,) = terminals(json.loads(out))
    assert term == {"terminalId": "term_1"}  # created, the bad chunk dropped


def test_overlong_line_is_reported_and_skipped(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(replay_module, "MAX_LINE_BYTES", 300)
    lines = [tcu(title="x" * 400), tcu("short", title="ok")]
    code, out, err = replay(capsys, tmp_path, lines, "--json")
    assert code == 0
    assert err.startswith("line 1: $: line of ") and "over the limit of 300" in err
    assert [tc["toolCallId"] for tc in calls(json.loads(out))] == ["short"]


@pytest.mark.parametrize(
    ("bad", "line"),
    [
        (b"{not json", 2),
        (tcu(title=42), 2),
        (update({"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c", "content": 1}), 2),
        ([tcu("b"), "not a message"], 2),
        (output_chunk("t", "%%%"), 2),
        (terminal("t", output={"data": "%%%"}), 2),
    ],
    ids=["not-json", "wrong-type", "bad-chunk", "bad-batch-element", "bad-base64", "bad-snapshot"],
)
def test_strict_stops_at_the_first_invalid_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, bad: Any, line: int
) -> None:
    lines = [tcu(title="fine"), bad, b"{also bad"]
    code, out, err = replay(capsys, tmp_path, lines, "--strict", "--json")
    assert code == 2
    assert out == ""
    assert err.splitlines()[0].startswith(f"line {line}: ")
    assert (
        err.splitlines()[-1] == f"acp-toolcalls replay: line {line} is invalid (--strict): stopped"
    )
    assert "line 3" not in err


def test_strict_clean_log_exits_0(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _out, err = replay(capsys, tmp_path, DEMO.read_bytes().splitlines(), "--strict")
    assert (code, err) == (0, "")


def test_without_strict_invalid_lines_still_exit_0(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = replay(capsys, tmp_path, [b"{", tcu(title="after")])
    assert code == 0
    assert "after" in out
    assert err.startswith("line 1: $: not valid JSON")


@pytest.mark.parametrize("target", ["missing.jsonl", "."], ids=["missing", "directory"])
def test_unreadable_file_exits_2_with_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, target: str
) -> None:
    code = main(["replay", "--json", str(tmp_path / target)])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert captured.err.startswith("acp-toolcalls replay: cannot read ")
    assert len(captured.err.splitlines()) == 1


def test_io_error_while_reading_exits_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    class Failing(io.BytesIO):
        def readline(self, size: int | None = -1) -> bytes:
            if self.tell() > 0:
                raise OSError(5, "Input/output error")
            return super().readline(size)

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(Failing(b"\n" * 10)))
    assert main(["replay", "--json", "-"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "acp-toolcalls replay: cannot read standard input: Input/output error\n"


def test_library_bug_is_a_diagnostic_not_a_traceback(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: ToolCallStore, message: Any, *, now: float | None = None) -> Any:
        raise TypeError("boom")

    monkeypatch.setattr(ToolCallStore, "apply", broken)
    code, _out, err = replay(capsys, tmp_path, [tcu()], "--json")
    assert code == 0
    assert err == "line 1: $: the decoder or store failed (TypeError: boom); this is a bug\n"


def test_reused_id_is_reported_not_invalid(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    lines = [tcu(status="completed"), tcu(status="in_progress")]
    code, _out, err = replay(capsys, tmp_path, lines, "--json", "--strict")
    assert code == 0
    assert err == (
        "line 2: $: tool call 'call_1' reopened: 'in_progress' after 'completed' "
        "(an id reused after it finished?)\n"
    )


def test_replay_keeps_everything(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    count = Limits().max_content_items or 0
    lines = [chunk("c", str(i)) for i in range(count + 5)]
    (tc,) = calls(document(capsys, tmp_path, lines))
    assert len(tc["content"]) == count + 5
    assert tc["content"][-1] == text_item(str(count + 4))


def test_follow_keeps_the_caps_and_reports_them(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(replay_module, "Limits", lambda: Limits(max_content_items=2))
    data = "".join(json.dumps(chunk("c", str(i))) + "\n" for i in range(4)).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert main(["replay", "--follow", "-"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("line 3: $: max_content_items: c: dropped ")


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", "--protocol", "v3"]) == 2
    assert main(["replay", "--follow", "--json", "x"]) == 2
    assert "--follow" in capsys.readouterr().err


# --- stdin and the demo ---------------------------------------------------------------------


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_reads_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    data = (json.dumps(tcu(title="piped")) + "\n").encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert main(["replay", "--json"]) == 0
    assert calls(json.loads(capsys.readouterr().out))[0]["title"] == "piped"


def test_reads_a_text_only_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(tcu(title="text")) + "\n"))
    assert main(["replay", "--json", "-"]) == 0
    assert calls(json.loads(capsys.readouterr().out))[0]["title"] == "text"


def test_no_file_and_a_terminal_replays_the_demo(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", _Terminal())
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["replay"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    for text in ["Fix week-date slicing in parse.py", "cancelled", "failed", "killed by SIGINT"]:
        assert text in captured.out
    # `-` reads the terminal itself, never the demo.
    monkeypatch.setattr(sys, "stdin", _Terminal(json.dumps(tcu(title="typed")) + "\n"))
    assert main(["replay", "--json", "-"]) == 0
    assert calls(json.loads(capsys.readouterr().out))[0]["title"] == "typed"


def test_demo_session_lines_are_schema_valid() -> None:
    pending: dict[Any, str] = {}
    for number, line in enumerate(DEMO.read_bytes().splitlines(), 1):
        message = json.loads(line)
        method = message.get("method")
        if method is not None and "id" in message:
            pending[message["id"]] = method
        answered = pending.pop(message["id"]) if method is None else None
        violations = validate_message(message, "v2", response_method=answered)
        assert violations == [], f"line {number}: {violations}"


def test_demo_session_shows_every_feature() -> None:
    store = ToolCallStore(version="auto")
    for line in DEMO.read_bytes().splitlines():
        assert not [e for e in store.apply(line) if type(e).__name__ == "DiagnosticReported"]
    assert store.raw_version == "v2"
    (session,) = store.sessions.values()
    statuses = {tc.tool_call_id: tc.status for tc in session.tool_calls.values()}
    assert set(statuses.values()) == {"completed", "failed", "cancelled"}
    raw = [json.loads(line) for line in DEMO.read_bytes().splitlines()]
    tags = {
        m["params"]["update"]["sessionUpdate"] for m in raw if m.get("method") == "session/update"
    }
    assert {"tool_call_content_chunk", "terminal_update", "terminal_output_chunk"} <= tags
    assert any(
        m.get("method") == "session/request_permission"
        and m["params"]["subject"]["type"] == "tool_call"
        for m in raw
    )
    contents = [item for tc in session.tool_calls.values() for item in tc.content]
    assert {type(item).__name__ for item in contents} == {"Content", "Diff", "Terminal"}
    diff: Any = next(item for item in contents if type(item).__name__ == "Diff")
    assert diff.changes and diff.patch.format == "git_patch"


def test_demo_is_a_package_resource() -> None:
    assert replay_module.demo_path().is_file()
    assert replay_module.demo_path().read_bytes() == DEMO.read_bytes()


def test_readme_example_is_what_replay_prints(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Replay a log", 1)[1]
    log = section.split("```jsonl\n", 1)[1].split("```", 1)[0]
    printed = section.split("```json\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "log.jsonl"
    path.write_text(log, encoding="utf-8")
    assert main(["replay", "--json", str(path)]) == 0
    assert capsys.readouterr().out == printed
    assert main(["replay", "--json", str(write_log(tmp_path, [tcu(title=42)]))]) == 0
    (diagnostic,) = capsys.readouterr().err.splitlines()
    assert f"`{diagnostic.replace('line 1:', 'line 3:')}`" in readme  # the README's example


# --- the human tables -----------------------------------------------------------------------


def rendered(store: ToolCallStore, width: int = 200) -> str:
    console = Console(width=width, record=True, file=io.StringIO(), color_system="truecolor")
    console.print(render_store(store))
    return console.export_text()


def store_of(*lines: Any, protocol: VersionName = "v2") -> ToolCallStore:
    store = ToolCallStore(version=protocol)
    for line in lines:
        store.apply(json.dumps(line))
    return store


def test_human_output_has_a_table_per_session(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    lines = [
        tcu("a", title="Read the config", kind="read", status="completed"),
        tcu("b", "other_session", kind="execute", status="_waiting"),
    ]
    code, out, _err = replay(capsys, tmp_path, lines)
    assert code == 0
    for text in ["session sess_1", "session other_session", "Read the config", "completed",
                 "Execute", "_waiting", "1 tool call: 1 completed"]:  # fmt: skip
        assert text in out


def test_status_colours() -> None:
    statuses = ["pending", "in_progress", "completed", "failed", "cancelled", "_custom"]
    store = store_of(*[tcu(status, title=f"t {status}", status=status) for status in statuses])
    console = Console(width=200, record=True, file=io.StringIO(), color_system="standard")
    console.print(render_store(store))
    styled = console.export_text(styles=True)
    assert "\x1b[2mpending" in styled
    assert "\x1b[33min_progress" in styled
    assert "\x1b[32mcompleted" in styled
    assert "\x1b[31mfailed" in styled
    assert "\x1b[35mcancelled" in styled
    assert re.search(r"│ _custom +│", styled)  # plain: no escape before it


def test_content_summary_and_locations() -> None:
    diff = {
        "type": "diff",
        "changes": [
            {"operation": "modify", "path": "/p/src/a.py"},
            {"operation": "move", "oldPath": "/p/src/old.py", "path": "/p/src/new.py"},
            {"operation": "_vendor_op", "path": "/p/x"},
        ],
        "patch": {
            "format": "git_patch",
            "text": "diff --git /p/src/a.py /p/src/a.py\n--- /p/src/a.py\n+++ /p/src/a.py\n"
            "@@ -1 +1,2 @@\n--x\n+y\n+z\n",
        },
    }
    store = store_of(
        tcu(
            "edit",
            title="Edit",
            content=[diff],
            locations=[{"path": "/p/src/a.py", "line": 3}, {"path": "/p/README"}],
        ),
        tcu(
            "text", content=[text_item("first line\nsecond"), text_item("more"), {"type": "_chart"}]
        ),
        tcu(
            "term",
            title="Run",
            content=[
                {"type": "terminal", "terminalId": "t1"},
                {"type": "terminal", "terminalId": "nowhere"},
            ],
        ),
        terminal(
            "t1",
            command="make\x1b[2J test",
            output={"data": b64(b"\x1b[31mred\x1b[0m\r\n10%\r50%\r100%\r\nlast\n")},
        ),
        terminal("t1", exitStatus={"exitCode": 2}),
        terminal("orphan", command="tail -f log"),
    )
    text = rendered(store)
    assert "session sess_1  (paths relative to /p)" in text
    assert "diff: modify src/a.py" in text
    assert "diff: move src/old.py -> src/new.py" in text
    assert "_vendor_op (unknown operation)" in text
    assert "(+2 -1)" in text  # `--x` is a removed line, not a header
    assert "src/a.py:3" in text and "README" in text
    assert "first line …" in text and "(+1 more content item(s))" in text
    assert "[_chart item]" in text
    assert "$ make test  exit 2" in text
    assert "red" in text and "100%" in text and "10%" not in text and "last" in text
    assert "terminal nowhere (no output yet)" in text
    assert "terminals that no tool call shows" in text and "$ tail -f log  running" in text
    assert "Tool call" in text  # the D10 fallback title of "text" (no title, no kind)


def test_log_text_is_never_markup_or_escapes() -> None:
    store = store_of(tcu(title="[bold red]x[/bold red] \x1b]0;pwned\x07done", kind="[i]k"))
    console = Console(width=200, record=True, file=io.StringIO(), color_system="standard")
    console.print(render_store(store))
    styled = console.export_text(styles=True)
    assert "[bold red]x[/bold red] done" in styled
    assert "pwned" not in styled and "\x07" not in styled
    assert "[i]k" in styled


def test_sanitize() -> None:
    assert sanitize("\x1b[1;32mok\x1b[0m") == "ok"
    assert sanitize("a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\b") == "alinkb"
    assert sanitize("10%\r20%\r\ndone") == "20%\ndone"
    assert sanitize("tab\there\x00\x07\x9b2Jx") == "tab    herex"


def test_last_output_lines_reads_only_the_tail() -> None:
    term = TerminalState("t")
    term.output = bytearray(b"x" * 100_000 + b"\n" + b"line1\n\nline2\nline3\n")
    assert last_output_lines(term) == ["line1", "line2", "line3"]
    term.output = bytearray(b"partial " * 10_000)  # one line longer than the tail
    assert last_output_lines(term) == []


def test_patch_counts_ignore_headers() -> None:
    text = "diff --git /a /a\n--- /a\n+++ /a\n@@ -1,2 +1,2 @@\n---x\n+++y\n ctx\n"
    assert patch_counts(text) == (1, 1)


def test_max_rows_keeps_the_latest_calls() -> None:
    store = store_of(*[tcu(f"call_{i}", title=f"title {i}") for i in range(10)])
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(render_store(store, max_rows=3))
    text = console.export_text()
    assert "… 7 earlier tool call(s)" in text
    assert "title 9" in text and "title 6" not in text
    assert "10 tool calls" in text


def test_empty_store_renders_a_note() -> None:
    assert "no tool calls" in rendered(ToolCallStore())


# --- --follow -------------------------------------------------------------------------------


def test_follow_reader_waits_for_complete_lines() -> None:
    stream = io.BytesIO()
    reader = FollowReader(stream, max_bytes=10)
    stream.write(b'{"a":1}\n{"b"')
    stream.seek(0)
    assert reader.poll() == [(1, b'{"a":1}')]
    assert reader.poll() == [] and reader.eof
    position = stream.tell()
    stream.write(b":2}\n" + b"x" * 25 + b"\n\nlast")
    stream.seek(position)
    assert reader.poll() == [(2, b'{"b":2}'), (3, 25), (4, b"")]
    assert reader.finish() == [(5, b"last")]


def test_follow_on_a_pipe_ends_at_its_end(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data = (json.dumps(tcu(title="from a pipe")) + "\n{\n" + json.dumps(tcu("b"))).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["replay", "--follow"]) == 0
    captured = capsys.readouterr()
    assert "from a pipe" in captured.out and "2 tool calls" in captured.out
    assert captured.err.startswith("line 2: $: not valid JSON")


def test_follow_strict_stops(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    log = write_log(tmp_path, [tcu(title="ok"), b"{"])
    assert main(["replay", "--follow", "--strict", str(log)]) == 2
    assert (
        capsys.readouterr().err.splitlines()[-1].endswith("line 2 is invalid (--strict): stopped")
    )


def _wait_for(path: Path, text: str, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while text not in path.read_text():
        assert time.monotonic() < deadline, f"no {text!r} in {path.read_text()!r}"
        time.sleep(0.02)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process")
def test_follow_a_growing_file_until_ctrl_c(tmp_path: Path) -> None:
    log = write_log(tmp_path, [tcu("a", title="first call"), b"{"])
    errors = tmp_path / "stderr.txt"
    env = child_env(COLUMNS="200")
    with errors.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "acp_toolcalls.cli", "replay", "--follow", str(log)],
            stdout=subprocess.PIPE,
            stderr=err,
            env=env,
        )
    try:
        _wait_for(errors, "line 2:")  # the invalid line says it has read that far
        with log.open("ab") as f:
            line = json.dumps(tcu("b", title="second call", status="failed")).encode()
            f.write(line[:30])  # half a line: must wait for the rest
            f.flush()
            time.sleep(2 * replay_module.POLL_SECONDS)
            f.write(line[30:] + b"\n{\n")
        _wait_for(errors, "line 4:")
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)  # (a bound on a hang, not a speed)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    text = out.decode()
    assert "first call" in text and "second call" in text and "failed" in text
    assert [line.split(":")[0] for line in errors.read_text().splitlines()] == ["line 2", "line 4"]


# --- the console script ---------------------------------------------------------------------


def test_console_script_in_a_subprocess(tmp_path: Path) -> None:
    env = child_env()
    args = [sys.executable, "-m", "acp_toolcalls.cli", "replay"]
    done = subprocess.run(
        [*args, "--json", "-"], input=DEMO.read_bytes(), capture_output=True, env=env
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert len(calls(doc, "sess_7f3a9c21")) == 6
    missing = subprocess.run([*args, str(tmp_path / "nope")], capture_output=True, env=env)
    assert missing.returncode == 2
    assert missing.stderr.count(b"\n") == 1 and b"Traceback" not in missing.stderr


def test_closed_stdout_is_quiet(tmp_path: Path) -> None:
    env = child_env()
    big = write_log(tmp_path, [tcu(f"call_{i}", title="t" * 200) for i in range(3000)])
    proc = subprocess.Popen(
        [sys.executable, "-m", "acp_toolcalls.cli", "replay", "--json", str(big)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(10)
    proc.stdout.close()
    stderr = proc.stderr.read()
    proc.wait(timeout=10)
    assert b"Traceback" not in stderr


def test_what_the_client_concluded_is_shown_beside_the_agents_status(tmp_path: Path) -> None:
    # session/cancel: the open call is shown as the client concluded, never exported (D46
    # (client store), D15).
    cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": S}}
    log = write_log(
        tmp_path,
        [
            init_request(2),
            init_response(2),
            tcu("call_1", title="Run tests", kind="execute", status="in_progress"),
            tcu("call_2", title="Read", kind="read", status="completed"),
            cancel,
        ],
    )
    env = {**os.environ, "COLUMNS": "120", "NO_COLOR": "1"}
    cmd = [sys.executable, "-m", "acp_toolcalls", "replay"]
    shown = subprocess.run([*cmd, str(log)], capture_output=True, text=True, env=env)
    assert shown.returncode == 0, shown.stderr
    assert "in_progress" in shown.stdout and "client: cancelled" in shown.stdout
    assert shown.stdout.count("client:") == 1  # not the finished call
    document = subprocess.run([*cmd, "--json", str(log)], capture_output=True, env=env)
    (call,) = [c for c in calls(json.loads(document.stdout), S) if c["toolCallId"] == "call_1"]
    assert call["status"] == "in_progress" and "cancelled" not in json.dumps(call)
