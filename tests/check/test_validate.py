"""``acp-toolcalls validate``: input handling, findings, protocol detection, output, exit codes."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from acp_toolcalls import decode_message
from acp_toolcalls.check import CODES
from acp_toolcalls.check import _validator as validator_module
from acp_toolcalls.cli import main
from acp_toolcalls.cli import validate as validate_module
from acp_toolcalls.cli.lines import ReadError, printable
from acp_toolcalls.cli.validate import LOOKAHEAD_LINES, read_lines
from acp_toolcalls.codec import DEFAULT_MAX_BYTES
from tests.builds import child_env

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SESSION = "sess_1"


# --- helpers --------------------------------------------------------------------------------


def update(body: dict[str, Any], session: str = SESSION) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session, "update": body},
    }


def tcu(call_id: str = "call_1", **fields: Any) -> dict[str, Any]:
    return update({"sessionUpdate": "tool_call_update", "toolCallId": call_id, **fields})


def initialize(version: int, request_id: int = 0) -> list[dict[str, Any]]:
    if version == 1:
        params: dict[str, Any] = {"protocolVersion": 1, "clientCapabilities": {}}
        result: dict[str, Any] = {"protocolVersion": 1, "agentCapabilities": {}}
    else:
        info = {"name": "test", "version": "1"}
        params = {"protocolVersion": version, "info": info}
        result = {"protocolVersion": version, "info": info}
    return [
        {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params},
        {"jsonrpc": "2.0", "id": request_id, "result": result},
    ]


def write_log(tmp_path: Path, lines: list[Any], name: str = "log.jsonl") -> Path:
    path = tmp_path / name
    with path.open("wb") as f:
        for line in lines:
            f.write(line if isinstance(line, bytes) else json.dumps(line).encode())
            f.write(b"\n")
    return path


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["validate", "--json", *args])
    out = capsys.readouterr().out
    return code, json.loads(out)


def found(document: dict[str, Any]) -> list[tuple[int, str, str]]:
    return [(f["line"], f["path"], f["code"]) for f in document["findings"]]


CLEAN_V2 = [
    *initialize(2),
    tcu(title="Read file", kind="read", status="pending"),
    tcu(status="completed"),
]


# --- exit codes and output ------------------------------------------------------------------


def test_clean_log_exits_0_with_a_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["validate", str(write_log(tmp_path, CLEAN_V2))])
    out = capsys.readouterr().out
    assert code == 0
    assert "4 lines read, 4 messages, no findings" in out
    assert "protocol v2 (initialize response on line 2 says protocolVersion 2)" in out


def test_findings_exit_1_one_line_each(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = write_log(tmp_path, [*initialize(2), tcu(status="pending"), b"{oops"])
    code = main(["validate", str(log)])
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    assert out[0].startswith("line 3: $.params.update: first report of tool call 'call_1'")
    assert out[0].endswith("[missing-title]")
    assert out[1].startswith("line 4: $: not valid JSON") and out[1].endswith("[invalid-json]")
    assert out[2].startswith("line 3: $.params.update: tool call 'call_1' never reached")
    assert out[3] == (
        "4 lines read, 3 messages, 3 findings (invalid-json: 1, missing-title: 1, never-final: 1)"
    )


def test_human_output_neutralises_control_characters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = write_log(tmp_path, [tcu("\x1b[31mred\nx", status="completed")])
    main(["validate", "--protocol", "v2", str(log)])
    out = capsys.readouterr().out
    assert "\x1b" not in out
    assert "'\\x1b[31mred\\nx'" in out  # shown escaped, on one line
    assert len(out.splitlines()) == 3
    # Whatever reaches the terminal is escaped, C1 controls (CSI) included.
    assert printable("a\x1b[2J\x9b\x7fb") == "a\\x1b[2J\\x9b\\x7fb"


@pytest.mark.parametrize("target", ["missing.jsonl", "."], ids=["missing", "directory"])
def test_unreadable_input_exits_2_with_one_line_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    code = main(["validate", str(tmp_path / target)])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert captured.err.startswith("acp-toolcalls validate: cannot read ")
    assert len(captured.err.splitlines()) == 1
    assert "Traceback" not in captured.err


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads any file")
def test_permission_denied_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = write_log(tmp_path, CLEAN_V2)
    log.chmod(0)
    try:
        assert main(["validate", str(log)]) == 2
    finally:
        log.chmod(0o644)
    assert "Permission denied" in capsys.readouterr().err


def test_permission_denied_on_open_exits_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Also covered for root, which the real chmod test above cannot be.
    def denied(name: str) -> Any:
        raise ReadError(PermissionError(13, "Permission denied", name))

    monkeypatch.setattr(validate_module, "open_input", denied)
    assert main(["validate", "secret.jsonl"]) == 2
    assert capsys.readouterr().err == (
        "acp-toolcalls validate: cannot read 'secret.jsonl': Permission denied\n"
    )


def test_io_error_while_reading_exits_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    class Failing(io.BytesIO):
        def readline(self, size: int | None = -1) -> bytes:
            if self.tell() > 0:
                raise OSError(5, "Input/output error")
            return super().readline(size)

    stream = Failing(b"\n" * 10)

    @contextlib.contextmanager
    def opened(name: str) -> Iterator[Failing]:
        with stream:
            yield stream

    monkeypatch.setattr(validate_module, "open_input", opened)
    assert main(["validate", "--json", "some.jsonl"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # no half-written JSON document
    assert captured.err == "acp-toolcalls validate: cannot read 'some.jsonl': Input/output error\n"
    assert stream.closed


def test_invalid_utf8_is_a_finding_not_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = write_log(tmp_path, [b'{"jsonrpc":"2.0","method":"_x","params":{"a":"\xff"}}', *CLEAN_V2])
    code, document = run_json(capsys, str(log))
    assert code == 1
    assert found(document) == [(1, "$", "invalid-utf8")]
    assert document["messages"] == 4


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert main(["validate", "--max-line-bytes", "0"]) == 2
    assert main(["validate", "--protocol", "v3"]) == 2
    assert main(["--help"]) == 0
    assert "validate" in capsys.readouterr().out


# --- --json ---------------------------------------------------------------------------------


def test_json_document_structure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = write_log(
        tmp_path,
        [*initialize(2), tcu(title="t", kind="lookup", status="completed"), b"", b"[1]"],
    )
    code, document = run_json(capsys, str(log))
    assert code == 1
    assert list(document) == [
        "protocol",
        "protocol_source",
        "lines",
        "messages",
        "findings",
        "summary",
        "schema",
    ]
    assert document["protocol"] == "v2"
    assert document["protocol_source"] == "initialize response on line 2 says protocolVersion 2"
    assert document["lines"] == 5
    assert document["messages"] == 4
    assert document["findings"] == [
        {
            "line": 3,
            "path": "$.params.update.kind",
            "code": "custom-value-prefix",
            "kind": "lint",
            "message": "unknown tool kind 'lookup': custom values must start with `_`; "
            "others are reserved for ACP",
        },
        {
            "line": 5,
            "path": "$[0]",
            "code": "schema-violation",
            "kind": "schema",
            "message": "1 is not of type 'object'",
        },
    ]
    assert document["summary"] == {"custom-value-prefix": 1, "schema-violation": 1}


def test_json_clean_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, document = run_json(capsys, str(write_log(tmp_path, CLEAN_V2)))
    assert code == 0
    assert document["findings"] == [] and document["summary"] == {}


def test_json_spools_many_findings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(validate_module, "_SPOOL_BYTES", 1024)  # force the spill to disk
    log = write_log(tmp_path, [*CLEAN_V2, *[b"nope"] * 500])  # JSON Lines, many bad ones
    code, document = run_json(capsys, str(log))
    assert code == 1
    assert len(document["findings"]) == 500
    assert document["summary"] == {"invalid-json": 500}


# --- what is reported -----------------------------------------------------------------------


def test_unreadable_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines: list[Any] = [b"{not json", b"[]", b"42", b'"text"', b"null", b"   ", b"[[[[" * 2000]
    _, document = run_json(capsys, "--protocol", "v2", str(write_log(tmp_path, lines)))
    assert found(document) == [
        (1, "$", "invalid-json"),
        (2, "$", "not-a-message"),
        (3, "$", "not-a-message"),
        (4, "$", "not-a-message"),
        (5, "$", "not-a-message"),
        (7, "$", "invalid-json"),
    ]
    assert document["messages"] == 0


def test_batch_paths_are_prefixed_with_the_element_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    batch = [
        tcu(title="t", status="completed"),
        tcu("call_2", title=5, status="completed"),
        {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": SESSION}},
    ]
    _, document = run_json(capsys, "--protocol", "v2", str(write_log(tmp_path, [batch])))
    assert found(document) == [
        (1, "$[1].params.update.title", "schema-violation"),
        (1, "$[2].params", "schema-violation"),
        (1, "$[1].params.update", "missing-title"),
    ]
    assert document["messages"] == 3


def test_lenient_salvage_reported_unless_a_schema_violation_covers_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [
        # The schema only annotates int64: the decoder's drop is the only report.
        update(
            {
                "sessionUpdate": "terminal_update",
                "terminalId": "t",
                "exitStatus": {"exitCode": 2**64 - 1},
            }
        ),
        # The schema reports line 0 at the same path: no second report from the decoder.
        tcu(title="t", status="completed", locations=[{"path": "/a", "line": 0}]),
        # The decoder names the item it skipped, the schema the field below it: one report.
        tcu("c2", title="t", status="completed", content=[{"type": "content"}]),
    ]
    _, document = run_json(capsys, "--protocol", "v2", str(write_log(tmp_path, lines)))
    assert found(document) == [
        (1, "$.params.update.exitStatus.exitCode", "lenient-salvage"),
        (2, "$.params.update.locations[0].line", "schema-violation"),
        (3, "$.params.update.content[0]", "schema-violation"),
    ]
    assert document["findings"][0]["kind"] == "decode"


def test_unreadable_message_reported_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chunk = update({"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c", "content": {}})
    _, document = run_json(capsys, "--protocol", "v2", str(write_log(tmp_path, [chunk])))
    # The schema violation says why; the decoder's "cannot be read" adds nothing.
    assert [f["code"] for f in document["findings"]] == ["schema-violation"]


def test_responses_are_checked_against_their_request_method(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompt = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "session/prompt",
        "params": {"sessionId": SESSION, "prompt": [{"type": "text", "text": "hi"}]},
    }
    lines = [
        *initialize(2),
        prompt,
        {"jsonrpc": "2.0", "id": 5, "result": {}},  # v2 PromptResponse requires messageId
        {"jsonrpc": "2.0", "id": 5, "result": {}},  # answered already: nothing to check against
        {"jsonrpc": "2.0", "id": 9, "result": {"anything": True}},  # unknown id
    ]
    _, document = run_json(capsys, str(write_log(tmp_path, lines)))
    assert found(document) == [(4, "$.result", "schema-violation")]


def test_ids_shared_by_both_directions_pick_the_matching_method(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompt = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "session/prompt",
        "params": {"sessionId": SESSION, "prompt": [{"type": "text", "text": "hi"}]},
    }
    ask = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "session/request_permission",
        "params": {
            "sessionId": SESSION,
            "title": "Allow?",
            "options": [{"optionId": "a", "name": "A", "kind": "allow_once"}],
        },
    }
    lines = [
        *initialize(2, request_id=99),
        prompt,
        ask,
        {"jsonrpc": "2.0", "id": 0, "result": {"messageId": "m1"}},  # the prompt's, not latest
        {"jsonrpc": "2.0", "id": 0, "result": {"outcome": {"outcome": "cancelled"}}},
    ]
    code, document = run_json(capsys, str(write_log(tmp_path, lines)))
    assert code == 0, document["findings"]


# --- --max-line-bytes -----------------------------------------------------------------------


def test_overlong_line_is_reported_and_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    long_line = tcu(title="x" * 500, status="completed")
    lines = [tcu("a", title="t", status="completed"), long_line, tcu("b", kind="lookup")]
    log = write_log(tmp_path, lines)
    _, document = run_json(capsys, "--protocol", "v2", "--max-line-bytes", "300", str(log))
    size = len(json.dumps(long_line))
    assert found(document)[:3] == [
        (2, "$", "line-too-long"),
        (3, "$.params.update", "missing-title"),
        (3, "$.params.update.kind", "custom-value-prefix"),
    ]
    assert document["findings"][0]["message"].startswith(f"line of {size} bytes is over")
    assert document["lines"] == 3 and document["messages"] == 2


def test_line_of_exactly_the_limit_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = json.dumps(tcu(title="t", status="completed")).encode()
    log = write_log(tmp_path, [line, line])
    code, _ = run_json(capsys, "--protocol", "v2", "--max-line-bytes", str(len(line)), str(log))
    assert code == 0


def test_read_lines_never_holds_an_overlong_line() -> None:
    limit = 64 * 1024
    data = b"x" * (8 * 1024 * 1024) + b"\nshort\nlast"
    stream = io.BytesIO(data)
    tracemalloc.start()
    try:
        got = list(read_lines(stream, limit))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got == [(1, 8 * 1024 * 1024), (2, b"short"), (3, b"last")]
    assert peak < 4 * limit


def test_default_limit_is_the_codec_default() -> None:
    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers()
    validate_module.register(subparsers)
    assert parser.parse_args(["validate"]).max_line_bytes == DEFAULT_MAX_BYTES


# --- stdin ----------------------------------------------------------------------------------


@pytest.mark.parametrize("argv", [["validate"], ["validate", "-"]], ids=["no-file", "dash"])
def test_reads_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    data = b"".join(json.dumps(m).encode() + b"\n" for m in [*CLEAN_V2, tcu("x")])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert main([*argv]) == 1
    assert "line 5: $.params.update: first report of tool call 'x'" in capsys.readouterr().out


def test_reads_a_text_only_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text = "".join(json.dumps(m) + "\n" for m in CLEAN_V2)
    monkeypatch.setattr(sys, "stdin", io.StringIO(text + "é" * 300 + "\n"))
    code, document = run_json(capsys, "--max-line-bytes", "400", "-")
    assert code == 1
    assert found(document) == [(5, "$", "line-too-long")]
    assert document["lines"] == 5


# --- protocol detection ---------------------------------------------------------------------


def test_initialize_decides(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = [*initialize(1), tcu(title="t", status="completed")]
    _, document = run_json(capsys, str(write_log(tmp_path, lines)))
    assert document["protocol"] == "v1"
    assert document["protocol_source"] == "initialize response on line 2 says protocolVersion 1"


def test_initialize_response_overrides_the_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    request = initialize(2)[0]
    response = initialize(1)[1]
    lines = [
        request,
        response,
        update(
            {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "t", "status": "completed"}
        ),
    ]
    code, document = run_json(capsys, str(write_log(tmp_path, lines)))
    assert document["protocol"] == "v1"
    assert code == 0, document["findings"]


def test_initialize_request_alone_decides(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, document = run_json(capsys, str(write_log(tmp_path, initialize(1)[:1])))
    assert document["protocol_source"] == "initialize request on line 1 says protocolVersion 1"


def test_first_telling_message_decides_for_the_lines_before_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # v1 agent_message_chunk has no messageId: read as v2 it would be a schema violation.
    chunk = update(
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}
    )
    create = update(
        {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "t", "status": "completed"}
    )
    code, document = run_json(capsys, str(write_log(tmp_path, [chunk, chunk, create])))
    assert document["protocol"] == "v1"
    assert document["protocol_source"] == "line 3: sessionUpdate 'tool_call' exists only in v1"
    assert code == 0, document["findings"]


@pytest.mark.parametrize(
    ("message", "protocol", "source"),
    [
        (
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "session/request_permission",
                "params": {"sessionId": SESSION, "toolCall": {"toolCallId": "c"}, "options": []},
            },
            "v1",
            "a permission request with `toolCall` (v1 shape)",
        ),
        (
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "session/request_permission",
                "params": {"sessionId": SESSION, "title": "t", "options": []},
            },
            "v2",
            "a permission request with `title` (v2 shape)",
        ),
        (
            update({"sessionUpdate": "state_update", "state": "idle"}),
            "v2",
            "sessionUpdate 'state_update' exists only in v2",
        ),
        (
            update({"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": ""}),
            "v2",
            "sessionUpdate 'terminal_output_chunk' exists only in v2",
        ),
        (
            {"jsonrpc": "2.0", "id": 1, "method": "terminal/create", "params": {}},
            "v1",
            "method 'terminal/create' exists only in v1",
        ),
    ],
    ids=["v1-permission", "v2-permission", "state-update", "terminal-chunk", "v1-method"],
)
def test_version_specific_messages(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    message: dict[str, Any],
    protocol: str,
    source: str,
) -> None:
    _, document = run_json(capsys, str(write_log(tmp_path, [message])))
    assert document["protocol"] == protocol
    assert document["protocol_source"] == f"line 1: {source}"


def test_initialize_beats_an_earlier_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [update({"sessionUpdate": "state_update", "state": "idle"}), *initialize(1)]
    _, document = run_json(capsys, str(write_log(tmp_path, lines)))
    assert document["protocol"] == "v1"


def test_default_is_v2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, document = run_json(capsys, str(write_log(tmp_path, [tcu(title="t", status="completed")])))
    assert document["protocol"] == "v2"
    assert document["protocol_source"].startswith("default")


def test_lookahead_is_bounded_then_v2_until_told(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chunk = update(
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}
    )
    create = update(
        {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "t", "status": "completed"}
    )
    lines = [chunk] * (LOOKAHEAD_LINES + 1) + [create, chunk]
    _, document = run_json(capsys, str(write_log(tmp_path, lines)))
    lines_with_findings = {f["line"] for f in document["findings"]}
    # Past the window, the held lines were read as v2 (messageId missing); after the
    # deciding line 1002, v1.
    assert lines_with_findings == set(range(1, LOOKAHEAD_LINES + 2))
    assert document["protocol"] == "v1"


def test_explicit_protocol_is_used(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = write_log(tmp_path, [*initialize(1), tcu(title="t", status="completed")])
    _, document = run_json(capsys, "--protocol", "v2", str(log))
    assert document["protocol"] == "v2"
    assert document["protocol_source"] == "given with --protocol"


# --- the examples ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "protocol"), [("session-v2.jsonl", "v2"), ("session-v1.jsonl", "v1")]
)
def test_clean_examples(capsys: pytest.CaptureFixture[str], name: str, protocol: str) -> None:
    code, document = run_json(capsys, str(EXAMPLES / name))
    assert code == 0, document["findings"]
    assert document["protocol"] == protocol
    assert document["protocol_source"].startswith("initialize response on line 2")


def test_buggy_example_shows_every_lint_and_a_schema_violation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, document = run_json(capsys, str(EXAMPLES / "buggy-v2.jsonl"))
    assert code == 1
    every_lint = set(CODES) - {"lint-limit"}  # a limit of the linter, not of the log
    assert every_lint | {"schema-violation", "lenient-salvage", "invalid-json"} == set(
        document["summary"]
    )


def test_examples_are_schema_valid(schema_valid: Any) -> None:
    for name, protocol in [("session-v2.jsonl", "v2"), ("session-v1.jsonl", "v1")]:
        for line in (EXAMPLES / name).read_bytes().splitlines():
            schema_valid(line, protocol)


# --- the entry point ------------------------------------------------------------------------


def test_console_entry_point_in_a_subprocess() -> None:
    env = child_env()
    args = [sys.executable, "-m", "acp_toolcalls.cli", "validate"]
    clean = subprocess.run(
        [*args, str(EXAMPLES / "session-v2.jsonl")], capture_output=True, text=True, env=env
    )
    assert clean.returncode == 0, clean.stderr
    assert "no findings" in clean.stdout
    buggy = subprocess.run(
        [*args, "--json", "-"],
        input=(EXAMPLES / "buggy-v2.jsonl").read_text(),
        capture_output=True,
        text=True,
        env=env,
    )
    assert buggy.returncode == 1
    assert json.loads(buggy.stdout)["summary"]["never-final"] == 1
    missing = subprocess.run([*args, "/nonexistent/log.jsonl"], capture_output=True, env=env)
    assert missing.returncode == 2
    assert b"Traceback" not in missing.stderr


def test_decoder_bug_is_a_finding_not_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The codec promises DecodeError only; anything else is a library bug, shown on its line
    # (never hidden behind schema violations), and the rest of the log is still read.
    real = decode_message

    def flaky(data: Any, **kwargs: Any) -> Any:
        if b"request_permission" in (data if isinstance(data, bytes) else b""):
            raise TypeError("union member <class 'int'> is not a tagged struct")
        return real(data, **kwargs)

    monkeypatch.setattr(validator_module, "decode_message", flaky)
    ask = {"jsonrpc": "2.0", "id": 1, "method": "session/request_permission", "params": {}}
    lines = [ask, tcu(title="t", kind="lookup", status="completed")]
    code, document = run_json(capsys, "--protocol", "v2", str(write_log(tmp_path, lines)))
    assert code == 1
    got = [(f["line"], f["code"]) for f in document["findings"]]
    assert got[-2:] == [(1, "decoder-error"), (2, "custom-value-prefix")]
    assert set(got[:-2]) == {(1, "schema-violation")}  # required params are missing
    assert "TypeError" in document["findings"][-2]["message"]


# --- the schema engine ----------------------------------------------------------------------

_WITHOUT_JSONSCHEMA_RS = (
    "import sys; sys.modules['jsonschema_rs'] = None; "  # as if it were not installed
    "from acp_toolcalls.cli import main; sys.exit(main(sys.argv[1:]))"
)


def test_findings_are_the_same_without_jsonschema_rs(tmp_path: Path) -> None:
    # jsonschema-rs answers "valid or not"; the findings come from jsonschema either way, and
    # jsonschema alone (a platform without jsonschema-rs) finds exactly the same.
    log = write_log(
        tmp_path,
        [
            *initialize(2),
            tcu(title=42, kind="reading", status="done"),
            tcu("call_2", content=[{"type": "content", "content": {"type": "txt"}}]),
            update({"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": 7}),
            update({"sessionUpdate": "tool_call_update", "title": "no id"}),
        ],
    )
    outputs = []
    for script in (
        "from acp_toolcalls.cli import main; import sys; sys.exit(main(sys.argv[1:]))",
        _WITHOUT_JSONSCHEMA_RS,
    ):
        done = subprocess.run(
            [sys.executable, "-c", script, "validate", "--json", str(log)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 1, done.stderr
        outputs.append(json.loads(done.stdout))
    with_rs, without = outputs
    assert with_rs == without
    assert with_rs["summary"]["schema-violation"] == 3
    engine = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; sys.modules['jsonschema_rs'] = None; "
            "from acp_toolcalls import schema; print(schema.ENGINE)",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert engine.stdout.strip() == "jsonschema"


# --- issue 16: methods of the other version -------------------------------------------------


def test_v1_only_methods_in_a_v2_log_are_findings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    read = {"sessionId": SESSION, "path": "/tmp/a.txt"}
    terminal = {"sessionId": SESSION, "command": "ls"}
    lines = [
        *initialize(2),
        {"jsonrpc": "2.0", "id": 5, "method": "fs/read_text_file", "params": read},
        {"jsonrpc": "2.0", "id": 6, "method": "terminal/create", "params": terminal},
        *CLEAN_V2[2:],
    ]
    code, document = run_json(capsys, "--protocol", "v2", str(write_log(tmp_path, lines)))
    assert code == 1
    wrong = [f for f in document["findings"] if f["code"] == "wrong-version-method"]
    assert [(f["line"], f["path"]) for f in wrong] == [(3, "$.method"), (4, "$.method")]
    assert "exists only in v1" in wrong[0]["message"] and "file system" in wrong[0]["message"]
    assert "terminal_update" in wrong[1]["message"]
    # The same requests in a v1 log are what v1 defines.
    v1_lines = [*initialize(1), *lines[2:4]]
    code, document = run_json(capsys, "--protocol", "v1", str(write_log(tmp_path, v1_lines)))
    assert not [f for f in document["findings"] if f["code"] == "wrong-version-method"]
