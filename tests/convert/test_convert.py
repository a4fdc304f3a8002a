"""``acp-toolcalls convert`` end to end, and the stateless converters (``acp_toolcalls.convert``).

Every output line of the command is checked against the target version's schema; the first
sight of every ``toolCallId`` in v1 output must be a v1 ``tool_call`` with a title.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from base64 import b64encode
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_toolcalls import encode, v1, v2
from acp_toolcalls.bridge import V1ToV2Bridge
from acp_toolcalls.check import validate_message
from acp_toolcalls.cli import convert as convert_module
from acp_toolcalls.cli import main
from acp_toolcalls.convert import ConversionError, Converted, StatelessV1ToV2, StatelessV2ToV1
from acp_toolcalls.models import Batch, JsonRpcMessage
from acp_toolcalls.store import Limits, ToolCallStore

S = "sess_1"
V1_MODES = [[], ["--coalesce"], ["--stateless"]]
V2_MODES = [[], ["--stateless"]]


# --- messages -------------------------------------------------------------------------------


def note(update: dict[str, Any], session: str = S) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session, "update": update},
    }


def tcu(call_id: str = "c1", session: str = S, **fields: Any) -> dict[str, Any]:
    return note({"sessionUpdate": "tool_call_update", "toolCallId": call_id, **fields}, session)


def v1_call(call_id: str = "c1", session: str = S, **fields: Any) -> dict[str, Any]:
    return note({"sessionUpdate": "tool_call", "toolCallId": call_id, **fields}, session)


def text(value: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": value}}


def chunk(call_id: str, value: str) -> dict[str, Any]:
    return note(
        {"sessionUpdate": "tool_call_content_chunk", "toolCallId": call_id, "content": text(value)}
    )


OPTIONS = [
    {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
]


def v2_permission(
    subject: dict[str, Any] | None, request_id: int = 7, title: str = "Allow?", **params: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {"sessionId": S, "title": title, "options": OPTIONS, **params}
    if subject is not None:
        body["subject"] = subject
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "session/request_permission",
        "params": body,
    }


def v1_permission(tool_call: dict[str, Any], request_id: int = 7, **params: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "session/request_permission",
        "params": {"sessionId": S, "toolCall": tool_call, "options": OPTIONS, **params},
    }


PASS_THROUGH: list[dict[str, Any]] = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "session/prompt",
        "params": {"sessionId": S, "prompt": [{"type": "text", "text": "hi"}]},
    },
    {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": S}},
    {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn", "_meta": {"k": [1, None]}}},
    {"jsonrpc": "2.0", "method": "_vendor/ping", "params": {"n": 1.5, "s": "é"}},
    {"jsonrpc": "2.0", "id": "x", "error": {"code": -32000, "message": "boom"}},
]


def v2_log() -> list[Any]:
    """A v2 agent's session touching every v2 -> v1 rule the command has."""
    return [
        PASS_THROUGH[0],
        chunk("c1", "first sight through a chunk"),
        tcu("c1", title="Run tests", kind="execute", status="in_progress"),
        tcu("c1", content=[{"type": "terminal", "terminalId": "t1"}]),
        note({"sessionUpdate": "terminal_update", "terminalId": "t1", "command": "pytest"}),
        note(
            {
                "sessionUpdate": "terminal_output_chunk",
                "terminalId": "t1",
                "data": b64encode(b"\x1b[32m12 passed\x1b[0m\r\n").decode(),
            }
        ),
        tcu("c1", status="completed"),
        v2_permission({"type": "tool_call", "toolCall": {"toolCallId": "c2", "kind": "edit"}}),
        v2_permission({"type": "command", "command": "rm -rf build", "cwd": "/r"}, 8, "Run rm?"),
        tcu("c3", name="grep"),
        tcu("c4", kind="_custom", status="cancelled", title=None, capabilities={}),
        note({"sessionUpdate": "state_update", "state": "idle"}),
        note(
            {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "m1",
                "content": {"type": "text", "text": "hi"},
            }
        ),
        note({"sessionUpdate": "_vendor_thing", "x": 1}),
        [tcu("c5", kind="read", title=""), PASS_THROUGH[1]],
        tcu("c2", status="completed"),
        PASS_THROUGH[3],
    ]


def v1_log() -> list[Any]:
    return [
        PASS_THROUGH[0],
        v1_call("c1", title="Edit a.py", kind="edit", content=[text("before")]),
        v1_call("c1", title="Edit a.py (2)", kind="other", status="pending", content=[]),
        note(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "c1",
                "status": "completed",
                "title": None,
                "content": [{"type": "diff", "path": "/a.py", "oldText": "a\n", "newText": "b\n"}],
            }
        ),
        v1_permission({"toolCallId": "c2"}),
        [v1_call("c3", title="ls", kind="execute"), PASS_THROUGH[1]],
        PASS_THROUGH[2],
    ]


# --- running the command --------------------------------------------------------------------


@dataclass
class Result:
    code: int
    out: list[Any]
    raw: str
    err: str

    @property
    def messages(self) -> list[dict[str, Any]]:
        """Every output message, batches flattened."""
        flat: list[dict[str, Any]] = []
        for value in self.out:
            flat.extend(value if isinstance(value, list) else [value])
        return flat

    def err_lines(self) -> list[str]:
        return self.err.splitlines()


def as_bytes(lines: list[Any]) -> bytes:
    return b"".join(
        (line if isinstance(line, bytes) else json.dumps(line).encode()) + b"\n" for line in lines
    )


def run(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    lines: list[Any],
    *args: str,
) -> Result:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(as_bytes(lines))))
    code = main(["convert", *args])
    captured = capsys.readouterr()
    out = [json.loads(line) for line in captured.out.splitlines()]
    return Result(code, out, captured.out, captured.err)


def assert_valid(result: Result, protocol: Literal["v1", "v2"]) -> None:
    for message in result.messages:  # a batch line: each of its elements
        assert validate_message(message, protocol) == [], message


def assert_first_sight_is_a_tool_call(messages: list[dict[str, Any]]) -> set[str]:
    seen: set[str] = set()
    for message in messages:
        params = message.get("params", {})
        if message.get("method") == "session/update":
            update = params["update"]
            call_id = update.get("toolCallId")
            if call_id is None or call_id in seen:
                continue
            assert update["sessionUpdate"] == "tool_call", update
            assert isinstance(update["title"], str) and update["title"], update
            seen.add(call_id)
        elif message.get("method") == "session/request_permission":
            assert params["toolCall"]["toolCallId"] in seen, message
    return seen


def replay(messages: list[Any], protocol: Literal["v1", "v2"]) -> dict[str, Any]:
    store = ToolCallStore(
        version=protocol,
        limits=Limits(max_content_items=None, max_terminal_bytes=None, max_tool_calls=None),
    )
    for message in messages:
        store.apply(message if isinstance(message, bytes) else json.dumps(message).encode())
    return store.document()


# --- --to v1 --------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", V1_MODES)
def test_to_v1_output_is_valid_v1_and_every_call_starts_with_a_titled_tool_call(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, mode: list[str]
) -> None:
    result = run(capsys, monkeypatch, v2_log(), "--to", "v1", *mode)
    assert result.code == 0, result.err
    assert_valid(result, "v1")
    seen = assert_first_sight_is_a_tool_call(result.messages)
    assert {"c2", "c3", "c4", "c5"} <= seen
    assert "c1" in seen or mode == ["--stateless"]
    raw = json.dumps(result.out)
    for v2_only in ("tool_call_content_chunk", "terminal_update", "state_update", "_vendor_thing"):
        assert v2_only not in raw  # never forwarded raw
    titles = {
        m["params"]["update"]["toolCallId"]: m["params"]["update"]["title"]
        for m in result.messages
        if m.get("method") == "session/update" and m["params"]["update"].get("title")
    }
    assert titles["c3"] == "grep"  # D10: name when there is no title
    assert titles["c5"] == "Read"  # then the kind's label
    assert titles["c2"] == "Allow?"  # then the permission's title


def test_to_v1_bridge_renders_terminals_and_accumulates_chunks(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    result = run(capsys, monkeypatch, v2_log(), "--to", "v1")
    c1 = [
        m["params"]["update"]
        for m in result.messages
        if m.get("method") == "session/update" and m["params"]["update"].get("toolCallId") == "c1"
    ]
    assert c1[0]["content"] == [text("first sight through a chunk")]
    last_text = [u for u in c1 if "content" in u][-1]["content"][0]["content"]["text"]
    assert last_text == "```\n$ pytest\n12 passed\n```"


def test_to_v1_losses_go_to_stderr_with_line_numbers(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for mode in V1_MODES:
        result = run(capsys, monkeypatch, v2_log(), "--to", "v1", *mode)
        errors = result.err_lines()
        assert errors and all(re.match(r"line \d+: \$\S*: \S", e) for e in errors), errors
        # line 11: `cancelled` -> `failed`, unknown kind -> `other`, the title clear dropped
        assert any(re.match(r"line 11: \$\S*status: .*'cancelled'", e) for e in errors)
        assert any(re.match(r"line 11: \$\S*kind: .*'_custom'", e) for e in errors)
        assert any(re.match(r"line 12: \$\S*: .*`state_update`", e) for e in errors)
        assert any(re.match(r"line 14: \$\S*: .*_vendor_thing", e) for e in errors)
    stateless = run(capsys, monkeypatch, v2_log(), "--to", "v1", "--stateless").err_lines()
    assert any(
        e.startswith("line 2: $.params.update: `tool_call_content_chunk`") for e in stateless
    )
    assert any(e.startswith("line 5: $.params.update: `terminal_update`") for e in stateless)


OTHERS: list[dict[str, Any]] = [
    PASS_THROUGH[1],  # session/cancel: both versions
    PASS_THROUGH[3],  # an extension notification
    {"jsonrpc": "2.0", "id": "x", "method": "_vendor/ask", "params": {"q": 1}},
    PASS_THROUGH[4],  # its answer: an error
    {"jsonrpc": "2.0", "id": "y", "method": "_vendor/ask"},
    {"jsonrpc": "2.0", "id": "y", "result": {"a": [1, None]}},
]
"""Messages a whole-session conversion passes through unchanged (issue 16: the session's own
methods, prompts included, are converted; see tests/sessions/test_convert_sessions.py)."""


def test_other_messages_pass_through_unchanged(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    targets: list[tuple[Literal["v1", "v2"], list[list[str]]]] = [
        ("v1", V1_MODES),
        ("v2", V2_MODES),
    ]
    for to, modes in targets:
        for mode in modes:
            result = run(capsys, monkeypatch, OTHERS, "--to", to, *mode)
            assert result.code == 0 and result.err == ""
            assert result.out == OTHERS
            assert_valid(result, to)
            # An answer to no request of the log is passed through too, and reported.
            alone = run(capsys, monkeypatch, [PASS_THROUGH[4]], "--to", to, *mode)
            assert alone.out == [PASS_THROUGH[4]]
            assert alone.err_lines() == [
                "line 1: $.id: an answer to no request seen in the log: passed through unconverted"
            ]


def test_a_batch_stays_a_batch(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [[tcu("a", title="A"), PASS_THROUGH[1]], [PASS_THROUGH[1]], [tcu("a", status="failed")]]
    for mode in V1_MODES:
        result = run(capsys, monkeypatch, lines, "--to", "v1", *mode)
        assert all(isinstance(value, list) for value in result.out), result.out
        assert result.out[1] == [PASS_THROUGH[1]]
        assert_valid(result, "v1")
        assert_first_sight_is_a_tool_call(result.messages)
    result = run(capsys, monkeypatch, [[v1_call("a", title="A"), PASS_THROUGH[1]]], "--to", "v2")
    (batch,) = result.out
    assert batch[0]["params"]["update"]["sessionUpdate"] == "tool_call_update"
    assert batch[1] == PASS_THROUGH[1]


def test_bridge_answers_to_the_agent_are_notes_on_stderr(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    request = v2_permission({"type": "tool_call", "toolCall": {"toolCallId": "a", "title": "T"}})
    request["params"]["options"] = [{"optionId": "x", "name": "Maybe", "kind": "_maybe"}]
    for mode in V1_MODES:
        result = run(capsys, monkeypatch, [request], "--to", "v1", *mode)
        assert result.code == 0
        assert not any(m.get("method") == "session/request_permission" for m in result.messages)
        (note_line,) = [e for e in result.err_lines() if "answered the agent" in e]
        assert note_line.startswith("line 1: $: ")
        answer = json.loads(note_line.split("(not in the output): ", 1)[1])
        assert answer == {
            "jsonrpc": "2.0",
            "id": 7,
            "result": {"outcome": {"outcome": "cancelled"}},
        }


def test_unreadable_lines_are_reported_and_skipped(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(convert_module, "MAX_LINE_BYTES", 300)
    lines = [
        tcu("a", title="A"),
        b"not json",
        b"",
        b"\xff\xfe",
        b"42",
        json.dumps(tcu("a", title="x" * 400)).encode(),
        note({"sessionUpdate": "tool_call_update"}),  # no toolCallId: cannot be read
        tcu("a", status="completed"),
    ]
    for mode in V1_MODES:
        result = run(capsys, monkeypatch, lines, "--to", "v1", *mode)
        assert result.code == 0
        assert [e.split(":")[0] for e in result.err_lines()] == [
            "line 2",
            "line 4",
            "line 5",
            "line 6",
            "line 7",
        ]
        assert "UTF-8" in result.err_lines()[1]
        assert "over the limit of 300" in result.err_lines()[3]
        statuses = [m["params"]["update"].get("status") for m in result.messages]
        assert statuses[-1] == "completed"


@pytest.mark.parametrize("mode", V1_MODES)
def test_strict_stops_at_the_first_lossy_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, mode: list[str]
) -> None:
    lines = [PASS_THROUGH[1], tcu("a", title="A"), tcu("a", status="cancelled"), PASS_THROUGH[3]]
    result = run(capsys, monkeypatch, lines, "--to", "v1", "--strict", *mode)
    assert result.code == 2
    assert result.err_lines()[0].startswith("line 3: $")
    assert result.err_lines()[-1] == (
        "acp-toolcalls convert: line 3 cannot be converted without loss (--strict): stopped"
    )
    assert result.out[0] == PASS_THROUGH[1]
    assert PASS_THROUGH[3] not in result.out  # nothing after the stop
    assert not any("failed" in json.dumps(value) for value in result.out)
    clean = run(capsys, monkeypatch, lines[:2], "--to", "v1", "--strict", *mode)
    assert clean.code == 0 and clean.err == ""


def test_strict_stops_at_an_unreadable_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for to in ("v1", "v2"):
        result = run(
            capsys, monkeypatch, [PASS_THROUGH[1], b"{", PASS_THROUGH[1]], "--to", to, "--strict"
        )
        assert result.code == 2
        assert result.out == [PASS_THROUGH[1]]
        assert result.err_lines()[0].startswith("line 2: $: ")
        assert "line 2" in result.err_lines()[-1]


def test_strict_to_v2_stops_at_a_loss(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = v1_call("a", title="Run", content=[{"type": "terminal", "terminalId": "t"}])
    for mode in V2_MODES:
        result = run(
            capsys,
            monkeypatch,
            [v1_call("b", title="B"), terminal],
            "--to",
            "v2",
            "--strict",
            *mode,
        )
        assert result.code == 2
        assert len(result.out) == 1
        assert result.err_lines()[0].startswith("line 2: $")


def test_coalesce_shrinks_a_chunk_stream_and_replays_the_same(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [tcu("a", title="Stream", kind="execute", status="in_progress")]
    lines += [chunk("a", f"line {i}") for i in range(100)]
    lines.append(tcu("a", status="completed"))
    coalesced = run(capsys, monkeypatch, lines, "--to", "v1", "--coalesce")
    plain = run(capsys, monkeypatch, lines, "--to", "v1")
    assert coalesced.code == plain.code == 0
    assert len(coalesced.raw) * 20 < len(plain.raw)
    assert len(coalesced.out) < 5
    assert_valid(coalesced, "v1")
    v1_doc = replay(coalesced.out, "v1")
    assert v1_doc == replay(plain.out, "v1")
    (call,) = v1_doc["sessions"][S]["toolCalls"]
    assert len(call["content"]) == 100 and call["status"] == "completed"


# --- --to v2 --------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", V2_MODES)
def test_to_v2_output_is_valid_and_replays_like_the_input(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, mode: list[str]
) -> None:
    result = run(capsys, monkeypatch, v1_log(), "--to", "v2", *mode)
    assert result.code == 0, result.err
    assert_valid(result, "v2")
    assert replay(result.out, "v2") == replay(v1_log(), "v1")
    request = next(m for m in result.messages if m.get("method") == "session/request_permission")
    assert request["params"]["title"] == "Permission required"  # D37, reported
    assert any(e.startswith("line 5: ") and "title" in e for e in result.err_lines())


@pytest.mark.parametrize("mode", V2_MODES)
def test_to_v2_a_repeated_tool_call_merges(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, mode: list[str]
) -> None:
    result = run(capsys, monkeypatch, v1_log()[1:3], "--to", "v2", *mode)
    first, repeat = (m["params"]["update"] for m in result.messages)
    assert first == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "title": "Edit a.py",
        "kind": "edit",
        "content": [text("before")],
    }
    assert repeat == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "title": "Edit a.py (2)",
    }
    (call,) = replay(result.out, "v2")["sessions"][S]["toolCalls"]
    assert call["kind"] == "edit" and call["content"] == [text("before")]


# --- the command line -----------------------------------------------------------------------


def test_usage_errors(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    for args in (
        ["--to", "v1", "--stateless", "--coalesce"],
        ["--to", "v2", "--coalesce"],
        [],
        ["--to", "v3"],
    ):
        result = run(capsys, monkeypatch, [PASS_THROUGH[1]], *args)
        assert result.code == 2, args
        assert result.out == [] and "error" in result.err
    assert (
        "--stateless" in run(capsys, monkeypatch, [], "--to", "v1", "--stateless", "--coalesce").err
    )


def test_help_documents_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["convert", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--to {v1,v2} [--stateless] [--coalesce]" in " ".join(out.split())
    for code in ("0 ", "1 ", "2 ", "130 "):
        assert f"\n  {code}" in out
    assert "line N: PATH: reason" in out


def test_reads_a_file_and_reports_an_unreadable_one(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(as_bytes(v1_log()))
    assert main(["convert", "--to", "v2", str(log)]) == 0
    from_file = capsys.readouterr().out
    assert from_file == run(capsys, monkeypatch, v1_log(), "--to", "v2").raw  # as from stdin
    assert len(from_file.splitlines()) >= len(v1_log())
    assert main(["convert", "--to", "v2", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("acp-toolcalls convert: cannot read") and err.count("\n") == 1


def test_a_closed_stdout_ends_quietly(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    class Closed(io.BytesIO):
        def write(self, data: Any) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    class Stdout:
        buffer = Closed()

        def flush(self) -> None:
            pass

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(as_bytes(PASS_THROUGH))))
    monkeypatch.setattr(sys, "stdout", Stdout())
    assert main(["convert", "--to", "v1"]) == 1
    assert "Traceback" not in capsys.readouterr().err


def test_console_script_in_a_subprocess(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("acp-toolcalls")
    if not script.exists():
        pytest.skip("the console script is not installed next to this interpreter")
    done = subprocess.run(
        [str(script), "convert", "--to", "v1", "-"],
        input=as_bytes(v2_log()),
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    out = [json.loads(line) for line in done.stdout.splitlines()]
    messages = [m for value in out for m in (value if isinstance(value, list) else [value])]
    for message in messages:
        assert validate_message(message, "v1") == []
    assert_first_sight_is_a_tool_call(messages)
    assert done.stderr and all(re.match(rb"line \d+: ", e) for e in done.stderr.splitlines())
    big = tmp_path / "big.jsonl"
    big.write_bytes(as_bytes([tcu(f"c{i}", title="t" * 200) for i in range(3000)]))
    proc = subprocess.Popen(
        [str(script), "convert", "--to", "v1", "--stateless", str(big)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(10)
    proc.stdout.close()
    stderr = proc.stderr.read()
    assert proc.wait(timeout=30) == 1
    assert b"Traceback" not in stderr


# --- the stateless converters ---------------------------------------------------------------


def plain(converted: Converted) -> list[Any]:
    out: list[Any] = []
    for message in converted.messages:
        value = json.loads(encode(message))
        out.extend(value if isinstance(message, Batch) else [value])
    return out


def updates(converted: Converted) -> list[dict[str, Any]]:
    return [m["params"]["update"] for m in plain(converted) if m.get("method") == "session/update"]


def dumps(message: Any) -> bytes:
    return json.dumps(message).encode()


def test_stateless_v2_to_v1_first_sight_then_updates() -> None:
    converter = StatelessV2ToV1()
    (create,) = updates(converter.convert(dumps(tcu("a", kind="edit", status="in_progress"))))
    assert create == {
        "sessionUpdate": "tool_call",
        "toolCallId": "a",
        "title": "Edit",
        "kind": "edit",
        "status": "in_progress",
    }
    (update,) = updates(converter.convert(dumps(tcu("a", status="completed", content=None))))
    assert update == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "a",
        "status": "completed",
        "content": [],
    }
    nothing = converter.convert(dumps(tcu("a", capabilities={})))
    assert nothing.messages == ()
    assert [loss.path for loss in nothing.losses] == ["$.params.update.capabilities"]
    other_session = converter.convert(dumps(tcu("a", session="s2", title="T")))
    assert updates(other_session)[0]["sessionUpdate"] == "tool_call"
    assert converter.flush() == Converted()
    converter.close_session(S)
    assert updates(converter.convert(dumps(tcu("a"))))[0]["sessionUpdate"] == "tool_call"


def test_stateless_v2_to_v1_drops_what_needs_state() -> None:
    converter = StatelessV2ToV1()
    for message in (
        chunk("a", "x"),
        note({"sessionUpdate": "terminal_update", "terminalId": "t", "command": "ls"}),
        note({"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": "eA=="}),
        note({"sessionUpdate": "state_update", "state": "idle"}),
        note({"sessionUpdate": "_vendor", "x": 1}),
    ):
        converted = converter.convert(dumps(message))
        assert converted.messages == ()
        (loss,) = converted.losses
        assert loss.path == "$.params.update"
    assert converter.seen == {}  # a dropped chunk is no sight: the next update creates
    strict = StatelessV2ToV1(strict=True)
    with pytest.raises(ConversionError) as raised:
        strict.convert(dumps(chunk("a", "x")))
    assert raised.value.path == "$.params.update"
    with pytest.raises(ConversionError) as raised:
        strict.convert(dumps([PASS_THROUGH[1], tcu("a", title="A"), tcu("a", title=None)]))
    assert raised.value.path == "$[2].params.update.title"


def test_stateless_v2_to_v1_maps_other_updates() -> None:
    converter = StatelessV2ToV1()
    message = note(
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m",
            "content": {"type": "text", "text": "hi"},
        }
    )
    message["params"]["_meta"] = {"trace": 1}
    (out,) = plain(converter.convert(dumps(message)))
    assert out["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    assert out["params"]["_meta"] == {"trace": 1}
    assert validate_message(out, "v1") == []


def test_stateless_v2_to_v1_permissions() -> None:
    converter = StatelessV2ToV1()
    converted = converter.convert(
        dumps(v2_permission({"type": "tool_call", "toolCall": {"toolCallId": "p", "kind": "edit"}}))
    )
    create, request = plain(converted)
    assert create["params"]["update"] == {
        "sessionUpdate": "tool_call",
        "toolCallId": "p",
        "title": "Allow?",
        "kind": "edit",
    }
    assert request["params"]["toolCall"]["toolCallId"] == "p"
    assert [loss.path for loss in converted.losses] == ["$.params.title"]
    (again,) = plain(
        converter.convert(
            dumps(v2_permission({"type": "tool_call", "toolCall": {"toolCallId": "p"}}))
        )
    )
    assert again["method"] == "session/request_permission"
    command = v2_permission({"type": "command", "command": "ls", "cwd": "/"}, 11, "Run ls?")
    create, request = plain(converter.convert(dumps(command)))
    assert create["params"]["update"]["toolCallId"] == "_acp_permission_11"
    assert create["params"]["update"]["kind"] == "execute"
    assert request["params"]["toolCall"]["toolCallId"] == "_acp_permission_11"
    unanswerable = v2_permission({"type": "tool_call", "toolCall": {"toolCallId": "q"}}, 12)
    unanswerable["params"]["options"] = [{"optionId": "m", "name": "Maybe", "kind": "_maybe"}]
    converted = converter.convert(dumps(unanswerable))
    assert converted.messages == ()
    (reply,) = converted.replies
    assert json.loads(encode(reply))["result"] == {"outcome": {"outcome": "cancelled"}}
    assert "q" not in converter.seen[S]


def test_stateless_converters_take_batches_models_and_pass_others_through() -> None:
    converter = StatelessV2ToV1()
    converted = converter.convert(dumps([tcu("a", title=42), PASS_THROUGH[1], 5]))
    (batch,) = converted.messages
    assert isinstance(batch, Batch) and len(batch.items) == 2
    assert [loss.path for loss in converted.losses] == ["$[0].params.update.title", "$[2]"]
    single = converter.convert(dumps([PASS_THROUGH[1]]))
    assert [type(m) for m in single.messages] == [JsonRpcMessage]  # like the bridges
    typed = v2.SessionUpdateMessage(
        params=v2.UpdateSessionNotification(
            session_id=S, update=v2.SessionToolCallUpdate(tool_call_id="z", title="Z")
        )
    )
    (out,) = converter.convert(typed).messages
    assert isinstance(out, v1.SessionUpdateMessage) and isinstance(out.params.update, v1.ToolCall)
    message = JsonRpcMessage(json.loads(json.dumps(PASS_THROUGH[3])))
    assert converter.convert(message).messages == (message,)
    with pytest.raises(TypeError):
        converter.convert(object())


def test_stateless_v1_to_v2() -> None:
    converter = StatelessV1ToV2()
    (first,) = updates(converter.convert(dumps(v1_call("a", title="T", kind="read"))))
    assert first == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "a",
        "title": "T",
        "kind": "read",
    }
    (repeat,) = updates(converter.convert(dumps(v1_call("a", title="T", kind="other", content=[]))))
    assert repeat == {"sessionUpdate": "tool_call_update", "toolCallId": "a", "title": "T"}
    nulls = note({"sessionUpdate": "tool_call_update", "toolCallId": "a", "rawInput": None})
    assert updates(converter.convert(dumps(nulls))) == [
        {"sessionUpdate": "tool_call_update", "toolCallId": "a"}
    ]
    (request,) = plain(
        converter.convert(dumps(v1_permission({"toolCallId": "a", "title": "Read"})))
    )
    assert request["params"]["title"] == "Read"
    assert request["params"]["subject"] == {
        "type": "tool_call",
        "toolCall": {"toolCallId": "a", "title": "Read"},
    }
    empty = converter.convert(dumps(v1_permission({"toolCallId": "a"}, options=[])))
    assert empty.messages == () and len(empty.replies) == 1
    no_id = v1_permission({"toolCallId": "a", "title": "Read"})
    no_id["id"] = None
    converted = converter.convert(dumps(no_id))
    assert converted.messages == () and [loss.path for loss in converted.losses] == ["$.id"]
    with pytest.raises(ConversionError):
        StatelessV1ToV2(strict=True).convert(dumps(no_id))
    chunk_without_id = note(
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}
    )
    dropped = converter.convert(dumps(chunk_without_id))
    assert dropped.messages == () and dropped.losses
    terminal = v1_call("b", title="Run", content=[{"type": "terminal", "terminalId": "t"}])
    lossy = converter.convert(dumps(terminal))
    assert [loss.path for loss in lossy.losses] == ["$.params.update.content[0]"]
    with pytest.raises(ConversionError) as raised:
        StatelessV1ToV2(strict=True).convert(dumps(terminal))
    assert raised.value.path == "$.params.update.content[0]"
    assert converter.flush() == Converted() and converter.close_session(S) == Converted()


# --- property: v1 replay == v2 replay of the converted stream ------------------------------

IDS = st.sampled_from(["a", "b", "c"])
SESSIONS = st.sampled_from([S, "sess_2"])
ITEM = st.one_of(
    st.builds(text, st.text(alphabet="xy", max_size=2)),
    st.builds(
        lambda old, new: {"type": "diff", "path": "/f.txt", "oldText": old, "newText": new},
        st.one_of(st.none(), st.text(alphabet="a\n", max_size=3)),
        st.text(alphabet="b\n", max_size=3),
    ),
)
LOCATION = st.fixed_dictionaries({"path": st.just("/f")}, optional={"line": st.integers(0, 3)})
KIND = st.sampled_from(["read", "edit", "execute", "other"])
STATUS = st.sampled_from(["pending", "in_progress", "completed", "failed"])
FIELDS = {
    "name": st.text(alphabet="nm", min_size=1, max_size=2),
    "content": st.lists(ITEM, max_size=2),
    "locations": st.lists(LOCATION, max_size=2),
    "rawInput": st.dictionaries(st.sampled_from("pq"), st.integers(0, 9), max_size=1),
    "rawOutput": st.integers(0, 9),
    "_meta": st.dictionaries(st.sampled_from("uv"), st.integers(0, 9), max_size=1),
}


def _nullable(fields: dict[str, Any]) -> dict[str, Any]:
    return {key: st.one_of(st.none(), value) for key, value in fields.items()}


CREATE = st.fixed_dictionaries(
    {"title": st.text(alphabet="xyz", max_size=3)},
    optional={"kind": KIND, "status": STATUS, **FIELDS},
)
UPDATE = st.fixed_dictionaries(
    {},
    optional=_nullable(
        {"title": st.text(alphabet="xyz", max_size=3), "kind": KIND, "status": STATUS, **FIELDS}
    ),
)


@st.composite
def v1_stream(draw: st.DrawFn) -> list[bytes]:
    lines: list[bytes] = []
    for index in range(draw(st.integers(0, 12))):
        call_id, session = draw(IDS), draw(SESSIONS)
        kind = draw(st.sampled_from(["create", "update", "permission"]))
        if kind == "create":
            message = v1_call(call_id, session, **draw(CREATE))
        elif kind == "update":
            message = note(
                {"sessionUpdate": "tool_call_update", "toolCallId": call_id, **draw(UPDATE)},
                session,
            )
        else:
            message = v1_permission({"toolCallId": call_id, **draw(UPDATE)}, request_id=index)
            message["params"]["sessionId"] = session
        lines.append(dumps(message))
    return lines


@settings(max_examples=150)
@given(stream=v1_stream(), stateless=st.booleans())
def test_v1_replay_equals_v2_replay_of_the_converted_stream(
    stream: list[bytes], stateless: bool
) -> None:
    converter = StatelessV1ToV2() if stateless else V1ToV2Bridge()
    converted: list[bytes] = []
    for line in stream:
        for message in converter.convert(line).messages:
            data = encode(message)
            assert validate_message(json.loads(data), "v2") == []
            converted.append(data)
    assert replay(converted, "v2") == replay(list(stream), "v1")
