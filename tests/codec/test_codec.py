"""The codec: decode/encode of the v1 and v2 tool-call surface (D46, its parsing rows).

Covers the parsing vectors P1-P15 (docs/decisions.md, Test vectors), example messages of the shapes
of D46's rows (methods, tool-call update to permissions, v1 shapes), omitted versus ``null``,
unknown keys and unknown variants, known discriminators with bad payloads, strict mode, batches,
opaque JSON-RPC messages, permission requests (the Q vectors) and
``RequestPermissionResponse.selected_option``.

Every schema-valid message or payload these tests encode is checked against the bundled upstream
schema (``schema_valid`` fixture, ``validate_payload``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any, cast

import pytest

from acp_toolcalls import (
    UNSET,
    Batch,
    DecodeError,
    Diagnostic,
    InvalidMessage,
    JsonRpcMessage,
    codec,
    decode,
    decode_message,
    encode,
    v1,
    v2,
)
from acp_toolcalls.check import validate_message, validate_payload
from acp_toolcalls.codec import _decode as codec_decode
from acp_toolcalls.models import TOOL_CALL_FIELDS, V1_TOOL_CALL_FIELDS, VersionName

SchemaCheck = Callable[..., None]  # the `schema_valid` fixture of conftest.py


def dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def env(update: dict[str, Any], **params: Any) -> dict[str, Any]:
    """A v2 (or v1: same shape) ``session/update`` notification carrying ``update``."""
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "sess_1", "update": update, **params},
    }


def perm(params: dict[str, Any], request_id: Any = 5) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "session/request_permission",
        "params": params,
    }


OPTIONS = [
    {"optionId": "allow", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "deny", "name": "Deny", "kind": "reject_once"},
]


def assert_payload_valid(value: Any, def_name: str, protocol: VersionName = "v2") -> None:
    violations = validate_payload(value, def_name, protocol)
    assert violations == [], [str(v) for v in violations]


def reencoded(value: Any) -> Any:
    return json.loads(encode(value))


@pytest.fixture
def fast_path_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if a decode of bytes leaves the fast path (the lenient reader's parse)."""

    def fail(data: Any) -> Any:
        raise AssertionError("the input left the fast path")

    monkeypatch.setattr(codec_decode, "_parse_plain", fail)


# ============================================================================================
# The spec's examples: fast path, no diagnostics, exact round trip, schema-valid output

SECTION_4 = env(
    {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_001",
        "title": "Reading configuration file",
        "kind": "read",
        "status": "pending",
    },
)
SECTION_4["params"]["sessionId"] = "sess_abc123def456"

SECTION_6_2: list[dict[str, Any]] = [
    {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_001",
        "name": "read_file",
        "title": "Reading configuration file",
        "kind": "read",
        "status": "pending",
    },
    {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_001",
        "status": "in_progress",
        "content": [
            {
                "type": "content",
                "content": {"type": "text", "text": "Found 3 configuration files..."},
            }
        ],
    },
    {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_001",
        "status": "completed",
        "content": None,
        "capabilities": None,
        "_meta": {"vendor.example/progress": None},
    },
]

SECTION_6_3 = {
    "sessionUpdate": "tool_call_content_chunk",
    "toolCallId": "call_001",
    "content": {"type": "content", "content": {"type": "text", "text": "partial output"}},
}

GIT_PATCH = (
    "diff --git /home/user/project/src/config.json /home/user/project/src/config.json\n"
    "--- /home/user/project/src/config.json\n+++ /home/user/project/src/config.json\n"
    '@@ -1,3 +1,3 @@\n {\n-  "debug": false\n+  "debug": true\n }\n'
)

SECTION_6_5 = [
    {
        "type": "diff",
        "changes": [
            {
                "operation": "modify",
                "path": "/home/user/project/src/config.json",
                "fileType": "text",
                "mimeType": "application/json",
            }
        ],
        "patch": {"format": "git_patch", "text": GIT_PATCH},
    },
    {
        "type": "diff",
        "changes": [
            {
                "operation": "modify",
                "path": "/home/user/project/assets/logo.png",
                "fileType": "binary",
                "mimeType": "image/png",
            }
        ],
    },
    {
        "type": "diff",
        "changes": [
            {"operation": "delete", "path": "/home/user/project/old_file.txt", "fileType": "text"}
        ],
    },
    {
        "type": "diff",
        "changes": [
            {
                "operation": "move",
                "oldPath": "/repo/src/old.rs",
                "path": "/repo/src/new.rs",
                "fileType": "text",
                "mimeType": "text/rust",
            }
        ],
    },
]

SECTION_6_4_KNOWN = [
    {"type": "content", "content": {"type": "text", "text": "Analysis complete. Found 3 issues."}},
    {"type": "terminal", "terminalId": "term_001"},
]
SECTION_6_4_UNKNOWN = {"type": "_chart", "title": "Tests", "data": [1, 2, 3]}

SECTION_6_6 = {"path": "/home/user/project/src/main.py", "line": 42}

SECTION_6_9_UPDATE = env(
    {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_001",
        "status": "cancelled",
        "capabilities": None,
    }
)

SECTION_6_10: list[dict[str, Any]] = [
    {
        "sessionUpdate": "terminal_update",
        "terminalId": "term_001",
        "command": "cargo test",
        "cwd": "/home/user/project",
        "size": {"cols": 120, "rows": 40},
        "output": {"data": "cnVubmluZyAxMjMgdGVzdHMNCg=="},
        "capabilities": {"cancel": {}},
    },
    {"sessionUpdate": "terminal_output_chunk", "terminalId": "term_001", "data": "cGFzc2VkDQo="},
    {
        "sessionUpdate": "terminal_update",
        "terminalId": "term_001",
        "exitStatus": {"exitCode": 0},
        "capabilities": None,
    },
]

SECTION_6_11_REQUESTS = [
    perm(
        {
            "sessionId": "sess_abc123",
            "title": "Run this script?",
            "description": "The agent wants to execute scripts/setup.sh in your project.",
            "subject": {
                "type": "tool_call",
                "toolCall": {
                    "toolCallId": "call_001",
                    "title": "Execute setup script",
                    "kind": "execute",
                    "status": "pending",
                },
            },
            "options": OPTIONS,
        },
        5,
    ),
    perm(
        {
            "sessionId": "sess_abc123",
            "title": "Run the test suite?",
            "subject": {
                "type": "command",
                "command": "cargo test",
                "cwd": "/home/user/project",
                "toolCallId": "call_002",
                "terminalId": "term_001",
            },
            "options": [{"optionId": "ok", "name": "Run", "kind": "allow_once"}],
        },
        6,
    ),
]
SECTION_6_11_RESPONSES = [
    {
        "jsonrpc": "2.0",
        "id": 5,
        "result": {"outcome": {"outcome": "selected", "optionId": "allow"}},
    },
    {"jsonrpc": "2.0", "id": 6, "result": {"outcome": {"outcome": "cancelled"}}},
]

SECTION_8_5 = perm(
    {
        "sessionId": "sess_abc123def456",
        "toolCall": {"toolCallId": "call_001"},
        "options": [
            {"optionId": "allow-once", "name": "Allow once", "kind": "allow_once"},
            {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
        ],
    },
    5,
)

V1_TOOL_CALL = env(  # vector C5, input side
    {
        "sessionUpdate": "tool_call",
        "toolCallId": "tc_1",
        "title": "editing files",
        "kind": "edit",
        "status": "in_progress",
        "content": [
            {"type": "diff", "path": "/path", "oldText": "old contents", "newText": "new contents"}
        ],
        "locations": [{"path": "/path", "line": 42}],
        "rawInput": {"foo": "bar"},
        "rawOutput": {"ok": True},
    }
)

V2_MESSAGES = [
    pytest.param(SECTION_4, id="4"),
    *(pytest.param(env(u), id=f"6.2-{i}") for i, u in enumerate(SECTION_6_2)),
    pytest.param(env(SECTION_6_3), id="6.3"),
    *(
        pytest.param(
            env({"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c", "content": c}),
            id=f"6.4-{i}",
        )
        for i, c in enumerate(SECTION_6_4_KNOWN)
    ),
    *(
        pytest.param(
            env({"sessionUpdate": "tool_call_update", "toolCallId": "c", "content": [d]}),
            id=f"6.5-{i}",
        )
        for i, d in enumerate(SECTION_6_5)
    ),
    pytest.param(
        env({"sessionUpdate": "tool_call_update", "toolCallId": "c", "locations": [SECTION_6_6]}),
        id="6.6",
    ),
    pytest.param(SECTION_6_9_UPDATE, id="6.9"),
    *(pytest.param(env(u), id=f"6.10-{i}") for i, u in enumerate(SECTION_6_10)),
    *(pytest.param(m, id=f"6.11-{i}") for i, m in enumerate(SECTION_6_11_REQUESTS)),
]


@pytest.mark.parametrize("message", V2_MESSAGES)
def test_v2_spec_examples_decode_on_the_fast_path_and_round_trip(
    message: dict[str, Any], fast_path_only: None, schema_valid: SchemaCheck
) -> None:
    decoded = decode_message(dumps(message))
    assert decoded.diagnostics == ()
    assert isinstance(decoded.value, v2.SessionUpdateMessage | v2.PermissionRequestMessage)
    out = encode(decoded.value)
    assert json.loads(out) == message
    schema_valid(out, "v2")


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        pytest.param(SECTION_8_5, v1.PermissionRequestMessage, id="8.5"),
        pytest.param(V1_TOOL_CALL, v1.SessionUpdateMessage, id="C5-tool_call"),
    ],
)
def test_v1_spec_examples_decode_on_the_fast_path_and_round_trip(
    message: dict[str, Any], expected: type, fast_path_only: None, schema_valid: SchemaCheck
) -> None:
    decoded = decode_message(dumps(message), version="v1")
    assert decoded.diagnostics == ()
    assert isinstance(decoded.value, expected)
    out = encode(decoded.value)
    assert json.loads(out) == message
    schema_valid(out, "v1")


def test_section_8_5_typed_values() -> None:
    value = decode_message(dumps(SECTION_8_5), version="v1").value
    assert value.id == 5
    assert value.params.tool_call == v1.ToolCallUpdate(tool_call_id="call_001")
    assert [o.kind for o in value.params.options] == ["allow_once", "reject_once"]


@pytest.mark.parametrize("item", [*SECTION_6_4_KNOWN, *SECTION_6_5], ids=lambda item: item["type"])
def test_content_item_examples_as_payloads(item: dict[str, Any], fast_path_only: None) -> None:
    # `decode` is annotated `tp: type[T]`, which a union alias is not: it reads one all the same.
    decoded = decode(dumps(item), cast(Any, v2.ToolCallContent))
    assert decoded.diagnostics == ()
    assert reencoded(decoded.value) == item
    assert_payload_valid(reencoded(decoded.value), "ToolCallContent")


def test_unknown_content_item_example_is_kept_verbatim() -> None:
    decoded = decode(dumps(SECTION_6_4_UNKNOWN), cast(Any, v2.ToolCallContent))
    assert decoded.diagnostics == ()
    assert isinstance(decoded.value, v2.UnknownToolCallContent)
    assert decoded.value.tag == "_chart"
    assert decoded.value.data == SECTION_6_4_UNKNOWN
    assert reencoded(decoded.value) == SECTION_6_4_UNKNOWN
    assert_payload_valid(reencoded(decoded.value), "ToolCallContent")


def test_location_example(fast_path_only: None) -> None:
    decoded = decode(dumps(SECTION_6_6), v2.ToolCallLocation)
    assert decoded.value == v2.ToolCallLocation(path="/home/user/project/src/main.py", line=42)
    assert reencoded(decoded.value) == SECTION_6_6
    assert_payload_valid(reencoded(decoded.value), "ToolCallLocation")


def test_section_6_2_typed_values() -> None:
    first, second, third = (decode_message(dumps(env(u))).value.params.update for u in SECTION_6_2)
    assert isinstance(first, v2.SessionToolCallUpdate)
    assert (first.name, first.title, first.kind, first.status) == (
        "read_file",
        "Reading configuration file",
        v2.ToolKind.READ,
        v2.ToolCallStatus.PENDING,
    )
    assert first.content is UNSET and first.raw_input is UNSET and first.meta is UNSET
    assert second.content == [
        v2.Content(content=v2.TextContent(text="Found 3 configuration files..."))
    ]
    assert third.content is None and third.capabilities is None
    assert third.meta == {"vendor.example/progress": None}
    assert third.title is UNSET


def test_section_6_9_and_6_10_typed_values() -> None:
    update = decode_message(dumps(SECTION_6_9_UPDATE)).value.params.update
    assert update.status == "cancelled" and update.capabilities is None
    create, chunk, done = (decode_message(dumps(env(u))).value.params.update for u in SECTION_6_10)
    assert isinstance(create, v2.TerminalUpdate)
    assert create.size == v2.TerminalSize(cols=120, rows=40)
    assert create.capabilities == v2.TerminalCapabilities(cancel=v2.TerminalCancelCapabilities())
    assert create.exit_status is UNSET
    assert isinstance(chunk, v2.TerminalOutputChunk) and chunk.data == "cGFzc2VkDQo="
    assert done.exit_status == v2.TerminalExitStatus(exit_code=0)
    assert done.capabilities is None and done.output is UNSET


def test_section_6_11_typed_values() -> None:
    tool_call_request, command_request = (
        decode_message(dumps(m)).value for m in SECTION_6_11_REQUESTS
    )
    subject = tool_call_request.params.subject
    assert isinstance(subject, v2.ToolCallPermissionSubject)
    assert subject.tool_call.title == "Execute setup script"
    assert tool_call_request.params.title == "Run this script?"
    command = command_request.params.subject
    assert isinstance(command, v2.CommandPermissionSubject)
    assert (command.command, command.cwd, command.tool_call_id, command.terminal_id) == (
        "cargo test",
        "/home/user/project",
        "call_002",
        "term_001",
    )
    assert command_request.params.description is UNSET


@pytest.mark.parametrize("response", SECTION_6_11_RESPONSES, ids=["selected", "cancelled"])
def test_section_6_11_responses(response: dict[str, Any], schema_valid: SchemaCheck) -> None:
    decoded = decode_message(dumps(response))
    assert decoded.diagnostics == ()
    assert isinstance(decoded.value, JsonRpcMessage)
    assert decoded.value.is_response and decoded.value.id == response["id"]
    out = encode(decoded.value)
    assert json.loads(out) == response
    schema_valid(out, "v2", response_method="session/request_permission")
    result = decode(decoded.value.data["result"], v2.RequestPermissionResponse)
    assert result.diagnostics == ()
    assert reencoded(result.value) == response["result"]


def test_section_6_9_cancel_request_and_response_are_opaque(schema_valid: SchemaCheck) -> None:
    request = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "tool_call/cancel",
        "params": {"sessionId": "sess_1", "toolCallId": "call_001"},
    }
    response = {"jsonrpc": "2.0", "id": 9, "result": {}}
    for message in (request, response):
        decoded = decode_message(dumps(message))
        assert decoded.value == JsonRpcMessage(message) and decoded.diagnostics == ()
        assert json.loads(encode(decoded.value)) == message
    schema_valid(encode(decode_message(dumps(request)).value), "v2")
    schema_valid(
        encode(decode_message(dumps(response)).value), "v2", response_method="tool_call/cancel"
    )
    assert decode_message(dumps(request)).value.method == "tool_call/cancel"


# ============================================================================================
# Conformance vectors P1-P15 (docs/decisions.md, Test vectors)


def test_p1_build_and_encode() -> None:
    update = v2.ToolCallUpdate(tool_call_id="tc_1", status="completed", content=None)
    out = encode(update)
    assert out == b'{"toolCallId":"tc_1","status":"completed","content":null}'
    assert_payload_valid(json.loads(out), "ToolCallUpdate")


def test_p2_parse_null_and_empty_list(fast_path_only: None) -> None:
    decoded = decode(b'{"toolCallId":"tc_1","status":null,"locations":[]}', v2.ToolCallUpdate)
    value = decoded.value
    assert value.title is UNSET
    assert value.status is None
    assert value.locations == []
    assert decoded.diagnostics == ()


def test_p3_bad_content_and_location_items_are_skipped() -> None:
    data = {
        "toolCallId": "tc_1",
        "content": [
            {"type": "content", "content": {"type": "text", "text": "ok"}},
            {"type": "diff", "path": "/bad"},
        ],
        "locations": [{"path": "/ok", "line": 3}, {"line": 4}],
    }
    decoded = decode(dumps(data), v2.ToolCallUpdate)
    assert decoded.value.content == [v2.Content(content=v2.TextContent(text="ok"))]
    assert decoded.value.locations == [v2.ToolCallLocation(path="/ok", line=3)]
    assert [d.path for d in decoded.diagnostics] == ["$.content[1]", "$.locations[1]"]
    assert all("skipped" in d.reason for d in decoded.diagnostics)
    salvaged = reencoded(decoded.value)
    assert salvaged == {
        "toolCallId": "tc_1",
        "content": [{"type": "content", "content": {"type": "text", "text": "ok"}}],
        "locations": [{"path": "/ok", "line": 3}],
    }
    assert_payload_valid(salvaged, "ToolCallUpdate")


def test_p4_every_invalid_patch_field_is_unset_never_none() -> None:
    data = {
        "toolCallId": "a",
        "title": 42,
        "status": 7,
        "content": "x",
        "_meta": False,
        "capabilities": 5,
        "name": [],
    }
    decoded = decode(dumps(data), v2.ToolCallUpdate)
    assert decoded.value == v2.ToolCallUpdate(tool_call_id="a")
    for name in ("title", "status", "content", "meta", "capabilities", "name"):
        assert getattr(decoded.value, name) is UNSET
    assert sorted(d.path for d in decoded.diagnostics) == sorted(
        ["$.title", "$.status", "$.content", "$._meta", "$.capabilities", "$.name"]
    )
    assert reencoded(decoded.value) == {"toolCallId": "a"}
    assert_payload_valid(reencoded(decoded.value), "ToolCallUpdate")


def test_p5_bad_lines_keep_the_location() -> None:
    data = {
        "toolCallId": "a",
        "locations": [
            {"path": "/x", "line": 0},
            {"path": "/y", "line": -1},
            {"path": "/z", "line": 5},
        ],
    }
    decoded = decode(dumps(data), v2.ToolCallUpdate)
    locations = decoded.value.locations
    assert isinstance(locations, list)
    assert [loc.path for loc in locations] == ["/x", "/y", "/z"]
    # "None" in the vector means "no line"; the codec reads an invalid line as omitted (D11).
    assert [loc.line for loc in locations] == [UNSET, UNSET, 5]
    assert [d.path for d in decoded.diagnostics] == ["$.locations[0].line", "$.locations[1].line"]
    salvaged = reencoded(decoded.value)
    assert salvaged["locations"] == [{"path": "/x"}, {"path": "/y"}, {"path": "/z", "line": 5}]
    assert_payload_valid(salvaged, "ToolCallUpdate")


def test_p6_unknown_kind_and_status_are_kept_verbatim(
    fast_path_only: None, schema_valid: SchemaCheck
) -> None:
    message = env(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "a",
            "kind": "review",
            "status": "deferred",
        }
    )
    decoded = decode_message(dumps(message))
    update = decoded.value.params.update
    assert (update.kind, update.status) == ("review", "deferred")
    assert type(update.kind) is str and type(update.status) is str
    assert decoded.diagnostics == ()
    out = encode(decoded.value)
    assert json.loads(out) == message
    schema_valid(out, "v2")


def test_p7_unknown_content_type_round_trips_identically(schema_valid: SchemaCheck) -> None:
    item = {"type": "_chart", "title": "Tests", "data": [1, 2, 3]}
    message = env({"sessionUpdate": "tool_call_update", "toolCallId": "a", "content": [item]})
    decoded = decode_message(dumps(message))
    (content,) = decoded.value.params.update.content
    assert isinstance(content, v2.UnknownToolCallContent)
    assert content.data == item
    assert decoded.diagnostics == ()
    out = encode(decoded.value)
    assert json.loads(out) == message
    schema_valid(out, "v2")


@pytest.mark.parametrize("bad", [{"type": "diff"}, {"type": "terminal"}], ids=["diff", "terminal"])
def test_p8_known_content_type_with_bad_payload_is_skipped(bad: dict[str, Any]) -> None:
    good = {"type": "terminal", "terminalId": "t"}
    message = env({"sessionUpdate": "tool_call_update", "toolCallId": "a", "content": [bad, good]})
    decoded = decode_message(dumps(message))
    content = decoded.value.params.update.content
    assert content == [v2.Terminal(terminal_id="t")]
    assert not any(isinstance(item, v2.UnknownToolCallContent) for item in content)
    assert [d.path for d in decoded.diagnostics] == ["$.params.update.content[0]"]
    with pytest.raises(DecodeError) as raised:
        decode(dumps(bad), cast(Any, v2.ToolCallContent))
    assert raised.value.path == "$"


def test_p9_chunk_with_a_bad_item_is_discarded_whole() -> None:
    message = env(
        {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "a", "content": {"type": "diff"}}
    )
    with pytest.raises(DecodeError) as raised:
        decode_message(dumps(message))
    assert raised.value.path == "$.params.update.content"
    assert "changes" in raised.value.reason


@pytest.mark.parametrize(
    "update",
    [
        {"sessionUpdate": "tool_call_update"},
        {"sessionUpdate": "terminal_update"},
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "term_1"},
        {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "a"},
        {"sessionUpdate": "tool_call_update", "toolCallId": None},
        {"sessionUpdate": "tool_call_update", "toolCallId": 7},
    ],
    ids=["no-toolCallId", "no-terminalId", "no-data", "chunk-no-content", "null-id", "int-id"],
)
def test_p10_malformed_known_update_discards_the_notification(update: dict[str, Any]) -> None:
    for strict in (False, True):
        with pytest.raises(DecodeError) as raised:
            decode_message(dumps(env(update)), strict=strict)
        assert raised.value.path.startswith("$.params.update")


def test_p11_unknown_session_update_round_trips_identically(schema_valid: SchemaCheck) -> None:
    update = {"sessionUpdate": "_status_badge", "label": "Indexing", "progress": 0.5}
    decoded = decode_message(dumps(env(update)))
    value = decoded.value.params.update
    assert isinstance(value, v2.OpaqueSessionUpdate)
    assert value.tag == "_status_badge" and value.data == update
    assert decoded.diagnostics == ()
    out = encode(decoded.value)
    assert json.loads(out) == env(update)
    schema_valid(out, "v2")


def test_p12_bad_changes_are_skipped_and_patch_kept() -> None:
    diff = {
        "type": "diff",
        "changes": [{"operation": "modify"}, {"operation": "delete", "path": "/ok"}],
        "patch": {"format": "git_patch", "text": "…"},
    }
    decoded = decode(dumps(diff), v2.Diff)
    assert decoded.value.changes == [v2.DeleteDiffChange(path="/ok")]
    assert decoded.value.patch == v2.DiffPatch(format="git_patch", text="…")
    assert [d.path for d in decoded.diagnostics] == ["$.changes[0]"]
    salvaged = reencoded(decoded.value)
    assert salvaged == {
        "type": "diff",
        "changes": [{"operation": "delete", "path": "/ok"}],
        "patch": {"format": "git_patch", "text": "…"},
    }
    assert_payload_valid(salvaged, "ToolCallContent")


def test_p12_all_changes_bad_leaves_a_valid_empty_diff() -> None:
    decoded = decode(
        dumps({"type": "diff", "changes": [{"operation": "move", "path": "/b"}, 3]}), v2.Diff
    )
    assert decoded.value.changes == []
    assert len(decoded.diagnostics) == 2


def test_p13_old_style_patch_becomes_absent() -> None:
    diff = {
        "type": "diff",
        "changes": [{"operation": "modify", "path": "/a"}],
        "patch": {"format": "git_patch", "diff": "x"},
    }
    decoded = decode(dumps(diff), v2.Diff)
    assert decoded.value.changes == [v2.ModifyDiffChange(path="/a")]
    assert decoded.value.patch is UNSET
    assert [d.path for d in decoded.diagnostics] == ["$.patch"]
    salvaged = reencoded(decoded.value)
    assert salvaged == {"type": "diff", "changes": [{"operation": "modify", "path": "/a"}]}
    assert_payload_valid(salvaged, "ToolCallContent")


def test_p14_v1_tool_call_on_a_v2_connection_is_an_opaque_update(
    schema_valid: SchemaCheck,
) -> None:
    update = {"sessionUpdate": "tool_call", "toolCallId": "a", "title": "t"}
    decoded = decode_message(dumps(env(update)), version="v2")
    value = decoded.value.params.update
    assert isinstance(value, v2.OpaqueSessionUpdate)
    assert not isinstance(value, v2.ToolCallUpdate)
    assert value.data == update
    out = encode(decoded.value)
    assert json.loads(out) == env(update)
    schema_valid(out, "v2")
    # The same line read as v1 is a typed create.
    as_v1 = decode_message(dumps(env(update)), version="v1").value.params.update
    assert as_v1 == v1.ToolCall(tool_call_id="a", title="t")


P15 = {"toolCallId": "a", "title": "t", "kind": "_custom", "status": "cancelled"}


@pytest.mark.encodes_invalid  # lenient input kept verbatim on purpose
def test_p15_v1_unknown_enum_values_keep_their_raw_strings() -> None:
    decoded = decode(dumps({"sessionUpdate": "tool_call", **P15}), v1.ToolCall)
    assert decoded.value.kind == "_custom"
    assert decoded.value.status == "cancelled"
    assert [d.path for d in decoded.diagnostics] == ["$.kind", "$.status"]
    assert all(d.reason.endswith("kept") for d in decoded.diagnostics)
    # Kept for re-emission (D32), so the re-encoding is not v1-valid: that is the point.
    assert reencoded(decoded.value) == {"sessionUpdate": "tool_call", **P15}


@pytest.mark.encodes_invalid  # lenient input kept verbatim on purpose
def test_p15_in_a_message_and_strict() -> None:
    message = env({"sessionUpdate": "tool_call", **P15})
    decoded = decode_message(dumps(message), version="v1")
    assert [d.path for d in decoded.diagnostics] == [
        "$.params.update.kind",
        "$.params.update.status",
    ]
    assert json.loads(encode(decoded.value)) == message
    with pytest.raises(DecodeError) as raised:
        decode_message(dumps(message), version="v1", strict=True)
    assert raised.value.path == "$.params.update.kind"


def test_p15_v1_update_and_permission_tool_call_keep_raw_strings_too() -> None:
    update = decode(dumps({"toolCallId": "a", "status": "cancelled"}), v1.ToolCallUpdate)
    assert update.value.status == "cancelled"
    assert [d.path for d in update.diagnostics] == ["$.status"]
    option = decode(
        dumps({"optionId": "p", "name": "P", "kind": "_allow_project"}), v1.PermissionOption
    )
    assert option.value.kind == "_allow_project"
    assert [d.path for d in option.diagnostics] == ["$.kind"]


# ============================================================================================
# Omitted versus null, both directions, for every ToolCallUpdate field

PATCH_FIELDS = [f.attr for f in TOOL_CALL_FIELDS]
WIRE_NAME = {f.attr: f.key for f in (*TOOL_CALL_FIELDS, *V1_TOOL_CALL_FIELDS)}
SAMPLE_VALUE: dict[str, Any] = {
    "name": "read_file",
    "title": "Read",
    "kind": "read",
    "status": "in_progress",
    "content": [v2.Terminal(terminal_id="t")],
    "locations": [v2.ToolCallLocation(path="/a", line=1)],
    "raw_input": {"path": "/a"},
    "raw_output": ["x", 1, False],
    "capabilities": v2.ToolCallCapabilities(cancel=v2.ToolCallCancelCapabilities()),
    "meta": {"k": None},
}


def test_patch_fields_are_all_covered() -> None:
    assert set(PATCH_FIELDS) == set(SAMPLE_VALUE)


@pytest.mark.parametrize("field", PATCH_FIELDS)
def test_null_is_written_and_read_back_as_none(field: str) -> None:
    update = v2.ToolCallUpdate(tool_call_id="a", **{field: None})
    wire = json.loads(encode(update))
    assert wire == {"toolCallId": "a", WIRE_NAME[field]: None}
    assert_payload_valid(wire, "ToolCallUpdate")
    for data in (dumps(wire), wire):
        back = decode(data, v2.ToolCallUpdate)
        assert getattr(back.value, field) is None
        assert back.diagnostics == ()
        others = [getattr(back.value, f) for f in PATCH_FIELDS if f != field]
        assert all(v is UNSET for v in others)


@pytest.mark.parametrize("field", PATCH_FIELDS)
def test_unset_is_not_written_and_read_back_as_unset(field: str) -> None:
    update = v2.ToolCallUpdate(tool_call_id="a", **{field: UNSET})
    wire = json.loads(encode(update))
    assert wire == {"toolCallId": "a"}
    assert_payload_valid(wire, "ToolCallUpdate")
    for data in (dumps(wire), wire):
        back = decode(data, v2.ToolCallUpdate).value
        assert getattr(back, field) is UNSET


@pytest.mark.parametrize("field", PATCH_FIELDS)
def test_value_round_trips(field: str) -> None:
    update = v2.ToolCallUpdate(tool_call_id="a", **{field: SAMPLE_VALUE[field]})
    wire = json.loads(encode(update))
    assert set(wire) == {"toolCallId", WIRE_NAME[field]}
    assert_payload_valid(wire, "ToolCallUpdate")
    assert decode(dumps(wire), v2.ToolCallUpdate).value == update
    assert decode(wire, v2.ToolCallUpdate).value == update


def test_null_and_omitted_stay_distinct_inside_a_message(schema_valid: SchemaCheck) -> None:
    message = env(
        {"sessionUpdate": "tool_call_update", "toolCallId": "a", "title": None, "rawOutput": None}
    )
    value = decode_message(dumps(message)).value
    update = value.params.update
    assert update.title is None and update.raw_output is None
    assert update.name is UNSET and update.raw_input is UNSET
    out = encode(value)
    assert json.loads(out) == message
    schema_valid(out, "v2")


@pytest.mark.parametrize("field", [f.attr for f in V1_TOOL_CALL_FIELDS])
def test_v1_null_is_kept_as_none_for_exact_re_encoding(
    field: str, schema_valid: SchemaCheck
) -> None:
    wire_name = WIRE_NAME[field]
    message = env({"sessionUpdate": "tool_call_update", "toolCallId": "a", wire_name: None})
    decoded = decode_message(dumps(message), version="v1")
    assert getattr(decoded.value.params.update, field) is None
    assert decoded.diagnostics == ()
    out = encode(decoded.value)
    assert json.loads(out) == message
    schema_valid(out, "v1")


# ============================================================================================
# Unknown keys on known objects survive decode -> encode (D19)


def test_a_wire_model_is_copied_only_by_models_replace() -> None:
    """``msgspec.structs.replace`` drops a model's unknown keys silently; ``models.replace``
    keeps them (D19). In the package, only models.replace calls it, and a copy of ``Limits``
    (no wire model). A subject copied the plain way once lost its unknown keys unreported."""
    import ast
    from pathlib import Path

    import acp_toolcalls

    package = Path(acp_toolcalls.__file__ or "").parent
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "replace"
                and ast.unparse(node.func.value) in ("msgspec.structs", "structs")
            ):
                copied = ast.unparse(node.args[0]) if node.args else ""
                name = path.relative_to(package).as_posix()
                if name != "models/_wire.py" and not copied.endswith("limits"):
                    found.append(f"{name}:{node.lineno}: {copied}")
    assert found == []


UNKNOWN_KEYS_UPDATE = {
    "sessionUpdate": "tool_call_update",
    "toolCallId": "a",
    "futureField": {"nested": [1, {"x": None}]},
    "content": [
        {
            "type": "content",
            "content": {"type": "text", "text": "hi", "futureBlockKey": True},
            "futureItemKey": "i",
        },
        {
            "type": "diff",
            "changes": [
                {"operation": "modify", "path": "/a", "hunks": 3},
                {"operation": "move", "oldPath": "/b", "path": "/c", "similarity": 0.9},
            ],
            "patch": {"format": "git_patch", "text": "x", "encoding": "utf-8"},
            "stats": {"added": 1},
        },
        {"type": "terminal", "terminalId": "t", "live": True},
    ],
    "locations": [{"path": "/a", "line": 3, "column": 7}],
    "capabilities": {"cancel": {"graceful": True}, "pause": {}},
}


@pytest.mark.parametrize("as_bytes", [True, False], ids=["bytes", "dict"])
def test_unknown_keys_survive_everywhere(as_bytes: bool, schema_valid: SchemaCheck) -> None:
    message = env(copy.deepcopy(UNKNOWN_KEYS_UPDATE), traceId="tr_1")
    message["x-top"] = 1
    data: Any = dumps(message) if as_bytes else copy.deepcopy(message)
    decoded = decode_message(data)
    assert decoded.diagnostics == ()  # unknown keys are allowed by the schema: no salvage
    value = decoded.value
    update = value.params.update
    assert update.extra == {"futureField": {"nested": [1, {"x": None}]}}
    text_item, diff_item, terminal_item = update.content
    assert text_item.extra == {"futureItemKey": "i"}
    assert text_item.content.extra == {"futureBlockKey": True}
    assert diff_item.extra == {"stats": {"added": 1}}
    assert diff_item.changes[0].extra == {"hunks": 3}
    assert diff_item.changes[1].extra == {"similarity": 0.9}
    assert diff_item.patch.extra == {"encoding": "utf-8"}
    assert terminal_item.extra == {"live": True}
    assert update.locations[0].extra == {"column": 7}
    assert update.capabilities.extra == {"pause": {}}
    assert value.params.extra == {"traceId": "tr_1"}
    assert value.extra == {"x-top": 1}
    out = encode(value)
    assert json.loads(out) == message
    schema_valid(out, "v2")
    assert not isinstance(data, dict) or data == message  # the input is not modified


def test_unknown_keys_survive_decode_of_a_dict_payload() -> None:
    payload = {k: v for k, v in UNKNOWN_KEYS_UPDATE.items() if k != "sessionUpdate"}
    decoded = decode(copy.deepcopy(payload), v2.ToolCallUpdate)
    assert decoded.diagnostics == ()
    assert reencoded(decoded.value) == payload
    assert_payload_valid(reencoded(decoded.value), "ToolCallUpdate")


def test_unknown_keys_survive_next_to_a_salvage(schema_valid: SchemaCheck) -> None:
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "a", "title": 42, "future": 1}
    decoded = decode_message(dumps(env(update)))
    assert [d.path for d in decoded.diagnostics] == ["$.params.update.title"]
    out = encode(decoded.value)
    assert json.loads(out)["params"]["update"] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "a",
        "future": 1,
    }
    schema_valid(out, "v2")


def test_unknown_keys_in_permission_requests_survive(schema_valid: SchemaCheck) -> None:
    message = perm(
        {
            "sessionId": "s",
            "title": "Allow?",
            "subject": {
                "type": "tool_call",
                "toolCall": {"toolCallId": "c", "title": "Edit", "risk": "low"},
                "source": "policy",
            },
            "options": [{**OPTIONS[0], "shortcut": "y"}, OPTIONS[1]],
            "priority": "high",
        }
    )
    decoded = decode_message(dumps(message))
    assert decoded.diagnostics == ()
    params = decoded.value.params
    assert params.extra == {"priority": "high"}
    assert params.subject.extra == {"source": "policy"}
    assert params.subject.tool_call.extra == {"risk": "low"}
    assert params.options[0].extra == {"shortcut": "y"}
    assert params.options[1].extra == {}
    out = encode(decoded.value)
    assert json.loads(out) == message
    schema_valid(out, "v2")


def test_unknown_keys_in_v1_survive(schema_valid: SchemaCheck) -> None:
    update = copy.deepcopy(V1_TOOL_CALL["params"]["update"])
    update["futureV1"] = [1]
    update["content"][0]["encoding"] = "utf-8"
    update["locations"][0]["column"] = 2
    message = env(update)
    decoded = decode_message(dumps(message), version="v1")
    assert decoded.diagnostics == ()
    out = encode(decoded.value)
    assert json.loads(out) == message
    schema_valid(out, "v1")


def test_objects_without_unknown_keys_stay_clean_after_some_were_seen() -> None:
    decode(dumps({"toolCallId": "a", "future": 1}), v2.ToolCallUpdate)
    plain = decode(dumps({"toolCallId": "b", "title": "t"}), v2.ToolCallUpdate).value
    assert plain.extra == {}
    assert reencoded(plain) == {"toolCallId": "b", "title": "t"}
    built = v2.ToolCallUpdate(tool_call_id="c", content=[v2.Terminal(terminal_id="t")])
    assert reencoded(built) == {
        "toolCallId": "c",
        "content": [{"type": "terminal", "terminalId": "t"}],
    }
    assert_payload_valid(reencoded(plain), "ToolCallUpdate")
    assert_payload_valid(reencoded(built), "ToolCallUpdate")


# ============================================================================================
# Unknown variants at every open union are kept verbatim, every key included

UNKNOWN_PAYLOAD = {"nested": {"a": [1, 2, {"b": None}]}, "flag": False, "n": 1.5}


def _unknown_cases() -> list[Any]:
    content_item = {"type": "_chart", **UNKNOWN_PAYLOAD}
    block = {"type": "_widget", **UNKNOWN_PAYLOAD}
    change = {"operation": "_chmod", "path": "/a", "mode": "0755", **UNKNOWN_PAYLOAD}
    subject = {"type": "_mcp_tool", "server": "x", **UNKNOWN_PAYLOAD}
    update = {"sessionUpdate": "_status_badge", **UNKNOWN_PAYLOAD}

    def upd(content: Any) -> dict[str, Any]:
        return env({"sessionUpdate": "tool_call_update", "toolCallId": "a", "content": content})

    return [
        pytest.param(
            upd([content_item]),
            lambda v: v.params.update.content[0],
            v2.UnknownToolCallContent,
            content_item,
            id="content-type",
        ),
        pytest.param(
            env(
                {
                    "sessionUpdate": "tool_call_content_chunk",
                    "toolCallId": "a",
                    "content": content_item,
                }
            ),
            lambda v: v.params.update.content,
            v2.UnknownToolCallContent,
            content_item,
            id="chunk-content-type",
        ),
        pytest.param(
            upd([{"type": "content", "content": block}]),
            lambda v: v.params.update.content[0].content,
            v2.UnknownContentBlock,
            block,
            id="content-block-type",
        ),
        pytest.param(
            upd([{"type": "diff", "changes": [change]}]),
            lambda v: v.params.update.content[0].changes[0],
            v2.UnknownDiffChange,
            change,
            id="diff-operation",
        ),
        pytest.param(
            perm({"sessionId": "s", "title": "t", "subject": subject, "options": OPTIONS}),
            lambda v: v.params.subject,
            v2.UnknownPermissionSubject,
            subject,
            id="subject-type",
        ),
        pytest.param(
            env(update),
            lambda v: v.params.update,
            v2.OpaqueSessionUpdate,
            update,
            id="sessionUpdate",
        ),
    ]


@pytest.mark.parametrize(("message", "get", "cls", "raw"), _unknown_cases())
def test_unknown_variants_are_kept_verbatim(
    message: dict[str, Any],
    get: Callable[[Any], Any],
    cls: Any,  # an Unknown* class: it has `tag_field`
    raw: dict[str, Any],
    schema_valid: SchemaCheck,
) -> None:
    for data in (dumps(message), copy.deepcopy(message)):
        decoded = decode_message(data)
        assert decoded.diagnostics == ()
        unknown = get(decoded.value)
        assert type(unknown) is cls
        assert unknown.data == raw
        assert unknown.tag == raw[cls.tag_field]
        out = encode(decoded.value)
        assert json.loads(out) == message
        schema_valid(out, "v2")
        assert decode_message(out).value == decoded.value


def test_unknown_outcome_is_kept_verbatim(schema_valid: SchemaCheck) -> None:
    outcome = {"outcome": "_defer", "reason": "needs-review", "retryAfterSeconds": 30}
    response = {"jsonrpc": "2.0", "id": 5, "result": {"outcome": outcome}}
    decoded = decode(dumps(response["result"]), v2.RequestPermissionResponse)
    assert decoded.diagnostics == ()
    assert type(decoded.value.outcome) is v2.UnknownPermissionOutcome
    assert decoded.value.outcome.data == outcome
    assert decoded.value.outcome.tag == "_defer"
    response["result"] = reencoded(decoded.value)
    assert response["result"] == {"outcome": outcome}
    schema_valid(response, "v2", response_method="session/request_permission")


@pytest.mark.parametrize(
    "update",
    [
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m",
            "content": {"type": "text", "text": "hi"},
        },
        {"sessionUpdate": "notice", "severity": "info", "title": "Heads up"},
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
        {"sessionUpdate": "plan", "entries": []},
        {"sessionUpdate": "current_mode_update", "currentModeId": "code"},
    ],
    ids=lambda u: u["sessionUpdate"],
)
def test_other_v2_session_updates_are_carried_untouched(
    update: dict[str, Any], schema_valid: SchemaCheck
) -> None:
    decoded = decode_message(dumps(env(update)))
    assert decoded.diagnostics == ()
    assert decoded.value.params.update == v2.OpaqueSessionUpdate(update)
    out = encode(decoded.value)
    assert json.loads(out) == env(update)
    schema_valid(out, "v2")


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_strict_mode_raises_what_lenient_mode_salvages_first_in_a_union(
    version: VersionName,
) -> None:
    """An embedded resource is text or a blob (an untagged union). Leniently, a bad
    ``mimeType`` of a text resource is treated as omitted; strict mode raises that, at that
    path, not "matches none" at the union (found by test_roundtrip's mutated messages)."""
    resource = {"uri": "file:///a", "text": "", "mimeType": []}
    item = {"type": "content", "content": {"type": "resource", "resource": resource}}
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "a", "content": [item]}
    decoded = decode_message(dumps(env(update)), version=version)
    path = "$.params.update.content[0].content.resource.mimeType"
    assert [d.path for d in decoded.diagnostics] == [path]
    with pytest.raises(DecodeError) as raised:
        decode_message(dumps(env(update)), version=version, strict=True)
    assert (raised.value.path, raised.value.reason) == (path, "expected a string, got an array")


@pytest.mark.encodes_invalid  # lenient input kept verbatim on purpose
def test_v1_unknown_session_update_is_kept_and_reported(schema_valid: SchemaCheck) -> None:
    update = {"sessionUpdate": "state_update", "state": "idle"}  # a v2-only update leaking
    decoded = decode_message(dumps(env(update)), version="v1")
    assert decoded.value.params.update == v1.OpaqueSessionUpdate(update)
    assert [d.path for d in decoded.diagnostics] == ["$.params.update"]
    assert json.loads(encode(decoded.value)) == env(update)
    with pytest.raises(DecodeError) as raised:
        decode_message(dumps(env(update)), version="v1", strict=True)
    assert raised.value.path == "$.params.update"
    # A v1 update the codec does not type is carried silently.
    plan = {"sessionUpdate": "plan", "entries": []}
    decoded = decode_message(dumps(env(plan)), version="v1")
    assert decoded.diagnostics == ()
    out = encode(decoded.value)
    assert json.loads(out) == env(plan)
    schema_valid(out, "v1")


@pytest.mark.parametrize(
    ("item", "path"),
    [
        ({"type": "_chart"}, "$.params.update.content[0]"),
        ({"type": "content", "content": {"type": "_widget"}}, "$.params.update.content[0].content"),
    ],
    ids=["content-type", "content-block-type"],
)
def test_v1_unions_are_closed(item: dict[str, Any], path: str) -> None:
    message = env({"sessionUpdate": "tool_call_update", "toolCallId": "a", "content": [item]})
    decoded = decode_message(dumps(message), version="v1")
    assert decoded.value.params.update.content == []
    assert [d.path for d in decoded.diagnostics] == [path]
    assert "unknown type" in decoded.diagnostics[0].reason


def test_v1_unknown_outcome_is_an_error() -> None:
    with pytest.raises(DecodeError):
        decode(dumps({"outcome": {"outcome": "_defer"}}), v1.RequestPermissionResponse)


# ============================================================================================
# A known discriminator with a bad payload is an item error, never the unknown variant


@pytest.mark.parametrize(
    ("item", "path"),
    [
        ({"type": "content"}, "$.params.update.content[0]"),
        ({"type": "content", "content": {"type": "text"}}, "$.params.update.content[0].content"),
        (
            {"type": "content", "content": {"type": "image", "data": "x"}},
            "$.params.update.content[0].content",
        ),
        (
            {"type": "content", "content": {"type": "resource", "resource": {"uri": "u"}}},
            "$.params.update.content[0].content.resource",
        ),
        ({"type": "diff", "changes": "x"}, "$.params.update.content[0].changes"),
        ({"type": "terminal", "terminalId": 5}, "$.params.update.content[0].terminalId"),
        ({"type": 5}, "$.params.update.content[0].type"),
        ({"path": "/a"}, "$.params.update.content[0]"),
    ],
    ids=[
        "content",
        "text",
        "image",
        "resource",
        "diff-changes",
        "terminal-id",
        "int-type",
        "no-type",
    ],
)
def test_bad_content_item_is_skipped_never_unknown(item: dict[str, Any], path: str) -> None:
    message = env({"sessionUpdate": "tool_call_update", "toolCallId": "a", "content": [item]})
    decoded = decode_message(dumps(message))
    assert decoded.value.params.update.content == []
    assert [d.path for d in decoded.diagnostics] == [path]
    with pytest.raises(DecodeError) as raised:
        decode_message(dumps(message), strict=True)
    assert raised.value.path == path


@pytest.mark.parametrize(
    "change",
    [
        {"operation": "add"},
        {"operation": "delete", "path": 3},
        {"operation": "move", "path": "/b"},
        {"operation": "copy", "oldPath": "/a"},
        {"operation": "modify", "path": None},
        {"operation": None, "path": "/a"},
        {"path": "/a"},
    ],
    ids=["add", "delete", "move", "copy", "modify", "null-op", "no-op"],
)
def test_bad_diff_change_is_skipped_never_unknown(change: dict[str, Any]) -> None:
    decoded = decode(dumps({"type": "diff", "changes": [change]}), v2.Diff)
    assert decoded.value.changes == []
    assert len(decoded.diagnostics) == 1
    assert decoded.diagnostics[0].path.startswith("$.changes[0]")


@pytest.mark.parametrize(
    "outcome",
    [{"outcome": "selected"}, {"outcome": "selected", "optionId": 3}, {"outcome": 1}, {}],
    ids=["no-optionId", "int-optionId", "int-outcome", "missing"],
)
def test_bad_known_outcome_is_an_error(outcome: dict[str, Any]) -> None:
    for strict in (False, True):
        with pytest.raises(DecodeError) as raised:
            decode(dumps({"outcome": outcome}), v2.RequestPermissionResponse, strict=strict)
        assert raised.value.path.startswith("$.outcome")


# ============================================================================================
# Strict mode: one DecodeError naming the JSON path


@pytest.mark.parametrize(
    ("update", "path"),
    [
        ({"title": 42}, "$.params.update.title"),
        ({"kind": 1}, "$.params.update.kind"),
        ({"_meta": []}, "$.params.update._meta"),
        ({"content": [{"type": "diff"}]}, "$.params.update.content[0]"),
        ({"locations": [{"path": "/a", "line": 0}]}, "$.params.update.locations[0].line"),
        ({"capabilities": {"cancel": 5}}, "$.params.update.capabilities.cancel"),
        (
            {
                "content": [
                    {
                        "type": "content",
                        "content": {"type": "text", "text": "x", "annotations": {"priority": 2}},
                    }
                ]
            },
            "$.params.update.content[0].content.annotations.priority",
        ),
        (
            {
                "content": [
                    {
                        "type": "content",
                        "content": {
                            "type": "resource_link",
                            "name": "n",
                            "uri": "u",
                            "icons": [{}],
                        },
                    }
                ]
            },
            "$.params.update.content[0].content.icons[0]",
        ),
    ],
    ids=["title", "kind", "meta", "content-item", "line", "cancel", "priority", "icon"],
)
def test_strict_raises_one_decode_error_at_the_path(update: dict[str, Any], path: str) -> None:
    message = env({"sessionUpdate": "tool_call_update", "toolCallId": "a", **update})
    lenient = decode_message(dumps(message))
    assert [d.path for d in lenient.diagnostics] == [path]
    with pytest.raises(DecodeError) as raised:
        decode_message(dumps(message), strict=True)
    assert raised.value.path == path
    assert path in str(raised.value)


def test_strict_accepts_what_needs_no_salvage(schema_valid: SchemaCheck) -> None:
    message = env(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "a",
            "kind": "_custom",
            "content": [{"type": "_x", "v": 1}],
            "future": True,
        }
    )
    strict = decode_message(dumps(message), strict=True)
    assert strict.diagnostics == ()
    assert strict.value == decode_message(dumps(message)).value
    out = encode(strict.value)
    assert json.loads(out) == message
    schema_valid(out, "v2")


def test_strict_decode_of_a_payload() -> None:
    with pytest.raises(DecodeError) as raised:
        decode({"toolCallId": "a", "title": 42}, v2.ToolCallUpdate, strict=True)
    assert raised.value.path == "$.title"


def test_a_parsed_value_holding_a_lone_surrogate_raises_only_decode_error() -> None:
    # `json.loads` reads the escape `"\ud800"` as a lone surrogate, which the route of parsed
    # values through `msgspec.json.encode` met as UnicodeEncodeError (found by
    # tests/fuzz/test_fuzz_convert.py): such a value takes `msgspec.convert`, as before.
    lone = json.loads('"\\ud800"')
    with pytest.raises(DecodeError) as raised:
        decode([lone], v2.ToolCallUpdate)
    assert raised.value.path == "$"
    decoded = decode({"toolCallId": "a", "title": lone}, v2.ToolCallUpdate)
    assert decoded.value.title == lone
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "a", "title": lone}
    assert decode_message(env(update)).value.params.update.title == lone
    with pytest.raises(codec.EncodeError):
        encode(decoded.value)  # JSON cannot carry it: refused, never written broken
    # msgspec.convert itself meets one in a union tag as UnicodeEncodeError (found by the long
    # hypothesis profile): the lenient reader reads it like any other unknown tag.
    answer = decode({"outcome": {"outcome": lone}}, v2.RequestPermissionResponse).value
    assert isinstance(answer.outcome, v2.UnknownPermissionOutcome)
    with pytest.raises(DecodeError) as raised:
        decode({"outcome": {"outcome": lone}}, v1.RequestPermissionResponse)
    assert raised.value.path == "$.outcome"


def test_diagnostic_is_a_value() -> None:
    decoded = decode(dumps({"toolCallId": "a", "title": 42}), v2.ToolCallUpdate)
    (diag,) = decoded.diagnostics
    assert isinstance(diag, Diagnostic)
    assert diag == Diagnostic("$.title", diag.reason)
    assert str(diag).startswith("$.title: ")
    assert "42" in diag.reason and "omitted" in diag.reason


# ============================================================================================
# Batches


def test_batch_keeps_order_and_isolates_bad_elements(schema_valid: SchemaCheck) -> None:
    good = env({"sessionUpdate": "tool_call_update", "toolCallId": "a", "title": "A"})
    salvaged = env({"sessionUpdate": "tool_call_update", "toolCallId": "b", "title": 42})
    bad = env({"sessionUpdate": "tool_call_update", "title": "no id"})
    response = {"jsonrpc": "2.0", "id": 3, "result": {}}
    other = {"jsonrpc": "2.0", "method": "_vendor/ping"}
    request = SECTION_6_11_REQUESTS[0]
    batch = [good, salvaged, bad, 5, response, other, request, None]
    decoded = decode_message(dumps(batch))
    value = decoded.value
    assert isinstance(value, Batch)
    items = value.items
    assert len(items) == len(batch)
    assert items[0].params.update.title == "A"
    assert items[1].params.update.title is UNSET
    assert isinstance(items[2], InvalidMessage) and items[2].data == bad
    assert items[2].error.path == "$[2].params.update"
    assert isinstance(items[3], InvalidMessage) and items[3].data == 5
    assert items[3].error.path == "$[3]"
    assert items[4] == JsonRpcMessage(response)
    assert items[5] == JsonRpcMessage(other)
    assert isinstance(items[6], v2.PermissionRequestMessage)
    assert isinstance(items[7], InvalidMessage)
    assert [d.path for d in decoded.diagnostics] == ["$[1].params.update.title"]
    assert all(d.path.startswith("$[") for d in decoded.diagnostics)
    # Encoding a batch writes every element back, invalid ones as received.
    out = json.loads(encode(value))
    assert out[0] == good and out[2] == bad and out[3] == 5 and out[4] == response
    assert out[6] == request and out[7] is None
    assert out[1]["params"]["update"] == {"sessionUpdate": "tool_call_update", "toolCallId": "b"}
    schema_valid(out[0], "v2")
    schema_valid(out[1], "v2")
    schema_valid(out[6], "v2")


def test_batch_of_valid_messages_round_trips(schema_valid: SchemaCheck) -> None:
    batch = [env(u) for u in SECTION_6_2] + [SECTION_6_11_REQUESTS[1], SECTION_6_11_RESPONSES[0]]
    decoded = decode_message(dumps(batch))
    assert decoded.diagnostics == ()
    out = json.loads(encode(decoded.value))
    assert out == batch
    for message in out[:-1]:
        schema_valid(message, "v2")


def test_strict_batch_turns_salvage_into_an_invalid_element() -> None:
    batch = [
        env({"sessionUpdate": "tool_call_update", "toolCallId": "a", "title": 42}),
        env({"sessionUpdate": "tool_call_update", "toolCallId": "b"}),
    ]
    decoded = decode_message(dumps(batch), strict=True)
    first, second = decoded.value.items
    assert isinstance(first, InvalidMessage)
    assert first.error.path == "$[0].params.update.title"
    assert second.params.update.tool_call_id == "b"
    assert decoded.diagnostics == ()


def test_batch_diagnostics_of_an_invalid_element_are_not_reported_twice() -> None:
    bad = env(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "a",
            "title": 42,
            "content": [{"type": "diff"}],
            "capabilities": 1,
        }
    )
    bad["params"]["sessionId"] = 7
    decoded = decode_message(dumps([bad]))
    (item,) = decoded.value.items
    assert isinstance(item, InvalidMessage)
    assert decoded.diagnostics == ()


def test_v1_batch(schema_valid: SchemaCheck) -> None:
    batch = [V1_TOOL_CALL, SECTION_8_5]
    decoded = decode_message(dumps(batch), version="v1")
    assert [type(i) for i in decoded.value.items] == [
        v1.SessionUpdateMessage,
        v1.PermissionRequestMessage,
    ]
    out = json.loads(encode(decoded.value))
    assert out == batch
    for message in out:
        schema_valid(message, "v1")


# ============================================================================================
# Other JSON-RPC messages come back verbatim


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 5, "result": {"outcome": {"outcome": "cancelled"}}},
        {"jsonrpc": "2.0", "id": "r-1", "error": {"code": -32602, "message": "Invalid params"}},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "session/prompt",
            "params": {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]},
        },
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}},
        {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 7}},
        {"jsonrpc": "2.0", "id": 2, "method": "_vendor.example/thing", "params": [1, 2]},
        {"jsonrpc": "2.0", "method": 5, "params": {}},
        {"id": 1, "result": None, "weird": {"k": [None]}},
    ],
    ids=[
        "response",
        "error",
        "prompt",
        "cancel",
        "cancel_request",
        "extension",
        "int-method",
        "non-jsonrpc",
    ],
)
def test_other_messages_are_opaque_and_verbatim(
    message: dict[str, Any], schema_valid: SchemaCheck
) -> None:
    for protocol in ("v1", "v2"):
        for data in (dumps(message), copy.deepcopy(message)):
            decoded = decode_message(data, version=protocol)
            assert decoded.value == JsonRpcMessage(message)
            assert decoded.diagnostics == ()
            out = json.loads(encode(decoded.value))
            assert out == message
            if message.get("jsonrpc") == "2.0" and not isinstance(message.get("method"), int):
                schema_valid(out, protocol)  # the well-formed ones are valid in both versions


def test_json_rpc_message_accessors() -> None:
    response = decode_message(b'{"jsonrpc":"2.0","id":7,"result":{}}').value
    assert response.is_response and response.id == 7 and response.method is None
    notification = decode_message(b'{"jsonrpc":"2.0","method":"session/cancel"}').value
    assert not notification.is_response
    assert notification.method == "session/cancel" and notification.id is None


def test_v2_only_methods_on_v1_and_v1_only_methods_on_v2_are_opaque() -> None:
    create = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "terminal/create",
        "params": {"sessionId": "s", "command": "ls"},
    }
    assert decode_message(dumps(create), version="v2").value == JsonRpcMessage(create)
    cancel = {"jsonrpc": "2.0", "id": 4, "method": "tool_call/cancel", "params": {}}
    assert decode_message(dumps(cancel), version="v1").value == JsonRpcMessage(cancel)


def test_unknown_protocol_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="protocol"):
        decode_message(dumps(SECTION_4), version="v3")  # type: ignore[arg-type]  # deliberately wrong


# ============================================================================================
# Permission requests at the codec level (the Q vectors; D46 (error containment))


def _request(**params: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"sessionId": "s", "title": "Allow?", "options": OPTIONS}
    base.update(params)
    return perm({k: v for k, v in base.items() if v is not _DROP})


_DROP = object()


@pytest.mark.parametrize(
    ("params", "path"),
    [
        ({"options": "not-an-array"}, "$.params.options"),
        ({"options": [{"optionId": "allow"}]}, "$.params.options[0]"),
        (
            {"options": [OPTIONS[0], {"optionId": "x", "name": "X", "kind": 3}]},
            "$.params.options[1].kind",
        ),
        ({"options": _DROP}, "$.params"),
        ({"options": None}, "$.params.options"),
    ],
    ids=["not-an-array", "option-missing-fields", "one-bad-option", "missing", "null"],
)
def test_q4_malformed_options_fail_the_request(params: dict[str, Any], path: str) -> None:
    for strict in (False, True):
        with pytest.raises(DecodeError) as raised:
            decode_message(dumps(_request(**params)), strict=strict)
        assert raised.value.path == path


@pytest.mark.parametrize(
    ("subject", "path"),
    [
        ({"type": "tool_call"}, "$.params.subject"),
        ({"type": 1}, "$.params.subject.type"),
        ({"type": "command", "cwd": "/w"}, "$.params.subject"),
        ({"type": "command", "command": "x"}, "$.params.subject"),
        ({"type": "command", "command": "x", "cwd": None}, "$.params.subject.cwd"),
        ({"type": "tool_call", "toolCall": {"title": "no id"}}, "$.params.subject.toolCall"),
        ({"command": "x", "cwd": "/w"}, "$.params.subject"),
        ("tool_call", "$.params.subject"),
        (False, "$.params.subject"),
    ],
    ids=[
        "tool_call-no-toolCall",
        "int-type",
        "command-no-command",
        "command-no-cwd",
        "command-null-cwd",
        "toolCall-no-id",
        "no-type",
        "string",
        "false",
    ],
)
def test_q6_malformed_subject_fails_the_request(subject: Any, path: str) -> None:
    for strict in (False, True):
        with pytest.raises(DecodeError) as raised:
            decode_message(dumps(_request(subject=subject)), strict=strict)
        assert raised.value.path == path


def test_q7_command_subject_with_null_optional_fields(schema_valid: SchemaCheck) -> None:
    subject = {
        "type": "command",
        "command": "cargo test",
        "cwd": "/home/user/project",
        "toolCallId": None,
        "terminalId": None,
        "_meta": None,
    }
    message = _request(subject=subject)
    decoded = decode_message(dumps(message))
    assert decoded.diagnostics == ()
    value = decoded.value.params.subject
    assert isinstance(value, v2.CommandPermissionSubject)
    # Omitted and null are equivalent for these fields ("no id"): read as omitted (Q7), and
    # re-serialized without them, as the reference crate does (issue 16).
    assert value.tool_call_id is UNSET and value.terminal_id is UNSET and value.meta is UNSET
    omitted = {k: v for k, v in subject.items() if v is not None}
    out = encode(decoded.value)
    assert json.loads(out) == _request(subject=omitted)
    schema_valid(out, "v2")
    decoded_omitted = decode_message(dumps(_request(subject=omitted))).value.params.subject
    assert decoded_omitted == value
    assert json.loads(encode(decoded_omitted)) == omitted


def test_q7_bad_optional_command_subject_fields_read_as_omitted() -> None:
    subject = {"type": "command", "command": "x", "cwd": "/w", "toolCallId": 5, "terminalId": []}
    decoded = decode_message(dumps(_request(subject=subject)))
    value = decoded.value.params.subject
    assert value.tool_call_id is UNSET and value.terminal_id is UNSET
    assert [d.path for d in decoded.diagnostics] == [
        "$.params.subject.toolCallId",
        "$.params.subject.terminalId",
    ]


@pytest.mark.parametrize(
    ("params", "path"),
    [
        ({"title": _DROP}, "$.params"),
        ({"title": None}, "$.params.title"),
        ({"title": 5}, "$.params.title"),
        ({"sessionId": _DROP}, "$.params"),
        ({"sessionId": 1}, "$.params.sessionId"),
    ],
    ids=["no-title", "null-title", "int-title", "no-session", "int-session"],
)
def test_q8_missing_or_bad_title_fails_the_request(params: dict[str, Any], path: str) -> None:
    for strict in (False, True):
        with pytest.raises(DecodeError) as raised:
            decode_message(dumps(_request(**params)), strict=strict)
        assert raised.value.path == path


def test_permission_request_id_forms(schema_valid: SchemaCheck) -> None:
    request_id: object  # valid ids, then invalid ones of any JSON type
    for request_id in (0, -1, 2**63 - 1, -(2**63), "req-1", ""):
        message = _request()
        message["id"] = request_id
        decoded = decode_message(dumps(message))
        assert decoded.value.id == request_id
        out = encode(decoded.value)
        assert json.loads(out) == message
        schema_valid(out, "v2")
    # v2 `RequestId` is an int64 or a string, never null.
    for request_id in (None, 2**63, -(2**63) - 1, 1.5, True, [1], {"a": 1}):
        message = _request()
        message["id"] = request_id
        with pytest.raises(DecodeError) as raised:
            decode_message(dumps(message))
        assert raised.value.path == "$.id"
    missing = _request()
    del missing["id"]
    with pytest.raises(DecodeError):
        decode_message(dumps(missing))


def test_v1_permission_request_id_may_be_null(schema_valid: SchemaCheck) -> None:
    message = copy.deepcopy(SECTION_8_5)
    message["id"] = None
    decoded = decode_message(dumps(message), version="v1")
    assert decoded.value.id is None
    out = encode(decoded.value)
    assert json.loads(out) == message
    schema_valid(out, "v1")
    message["id"] = 2**63
    with pytest.raises(DecodeError):
        decode_message(dumps(message), version="v1")


def test_permission_request_salvage_takes_the_lenient_path(schema_valid: SchemaCheck) -> None:
    # A request that needs the lenient reader (unknown key, bad description) still decodes.
    message = _request(description=5, futureKey={"a": 1})
    message["id"] = "r-9"
    decoded = decode_message(dumps(message))
    assert decoded.value.id == "r-9"
    assert decoded.value.params.description is UNSET
    assert [d.path for d in decoded.diagnostics] == ["$.params.description"]
    assert decoded.value.params.extra == {"futureKey": {"a": 1}}
    out = encode(decoded.value)
    assert "description" not in json.loads(out)["params"]
    schema_valid(out, "v2")


@pytest.mark.encodes_invalid  # lenient input kept verbatim on purpose
def test_q5_empty_options_are_accepted_with_a_diagnostic_and_strict_rejects() -> None:
    message = _request(options=[])
    decoded = decode_message(dumps(message))
    assert decoded.value.params.options == []
    assert [d.path for d in decoded.diagnostics] == ["$.params.options"]
    assert "at least 1" in decoded.diagnostics[0].reason
    # Receivers accept `[]` (D5), but the re-encoding keeps it, so it is not v2-valid:
    out = json.loads(encode(decoded.value))
    assert out == message
    assert [v.path for v in validate_message(out, "v2")] == ["$.params.options"]
    with pytest.raises(DecodeError) as raised:
        decode_message(dumps(message), strict=True)
    assert raised.value.path == "$.params.options"


def test_q5_v1_has_no_minimum(schema_valid: SchemaCheck) -> None:
    message = copy.deepcopy(SECTION_8_5)
    message["params"]["options"] = []
    decoded = decode_message(dumps(message), version="v1", strict=True)
    assert decoded.diagnostics == () and decoded.value.params.options == []
    out = encode(decoded.value)
    assert json.loads(out) == message
    schema_valid(out, "v1")


def test_duplicate_option_ids_are_kept(schema_valid: SchemaCheck) -> None:
    options = [OPTIONS[0], {**OPTIONS[1], "optionId": "allow"}]
    decoded = decode_message(dumps(_request(options=options)))
    assert [o.option_id for o in decoded.value.params.options] == ["allow", "allow"]
    assert decoded.diagnostics == ()  # D5: the codec keeps them; the client reports them
    schema_valid(encode(decoded.value), "v2")


def test_unknown_option_kind_is_kept_in_v2(schema_valid: SchemaCheck) -> None:
    options = [*OPTIONS, {"optionId": "p", "name": "Allow for project", "kind": "_allow_project"}]
    message = _request(options=options)
    decoded = decode_message(dumps(message))
    assert decoded.diagnostics == ()
    assert decoded.value.params.options[2].kind == "_allow_project"
    out = encode(decoded.value)
    assert json.loads(out) == message
    schema_valid(out, "v2")


def test_v1_permission_request_tool_call_is_a_v1_update() -> None:
    message = copy.deepcopy(SECTION_8_5)
    message["params"]["toolCall"] = {"toolCallId": "c", "title": 5, "status": "paused"}
    decoded = decode_message(dumps(message), version="v1")
    tool_call = decoded.value.params.tool_call
    assert tool_call.title is UNSET and tool_call.status == "paused"
    assert [d.path for d in decoded.diagnostics] == [
        "$.params.toolCall.status",
        "$.params.toolCall.title",
    ]


# ============================================================================================
# RequestPermissionResponse.selected_option (vectors Q1-Q3, D34)

OFFERED = [
    v2.PermissionOption(option_id=o["optionId"], name=o["name"], kind=o["kind"]) for o in OPTIONS
]


def _response(outcome: dict[str, Any]) -> v2.RequestPermissionResponse:
    decoded = decode(dumps({"outcome": outcome}), v2.RequestPermissionResponse)
    assert decoded.diagnostics == ()
    return decoded.value


def test_q1_unknown_outcome_selects_nothing() -> None:
    response = _response({"outcome": "_defer", "reason": "needs-review", "retryAfterSeconds": 30})
    assert response.selected_option(OFFERED) is None
    # Even an unknown outcome carrying an optionId of an allow option is not a selection.
    sneaky = _response({"outcome": "_selected_v3", "optionId": "allow"})
    assert sneaky.selected_option(OFFERED) is None


def test_q2_malformed_selected_is_an_error() -> None:
    for outcome in ({"outcome": "selected"}, {"outcome": 1}):
        with pytest.raises(DecodeError):
            decode(dumps({"outcome": outcome}), v2.RequestPermissionResponse)


def test_q3_option_that_was_not_offered_selects_nothing() -> None:
    response = _response({"outcome": "selected", "optionId": "not-offered"})
    assert isinstance(response.outcome, v2.SelectedPermissionOutcome)
    assert response.selected_option(OFFERED) is None
    assert response.selected_option([]) is None


def test_cancelled_selects_nothing_and_selected_returns_the_offered_option() -> None:
    assert _response({"outcome": "cancelled"}).selected_option(OFFERED) is None
    assert _response({"outcome": "cancelled", "_meta": {"x": 1}}).selected_option(OFFERED) is None
    chosen = _response({"outcome": "selected", "optionId": "deny"}).selected_option(OFFERED)
    assert chosen is OFFERED[1]
    assert chosen.kind == "reject_once"


def test_built_responses_encode_schema_valid(schema_valid: SchemaCheck) -> None:
    for outcome in (
        v2.SelectedPermissionOutcome(option_id="allow"),
        v2.CancelledPermissionOutcome(),
        v2.CancelledPermissionOutcome(meta={"reason": "policy"}),
    ):
        result = json.loads(encode(v2.RequestPermissionResponse(outcome=outcome)))
        schema_valid(
            {"jsonrpc": "2.0", "id": 1, "result": result},
            "v2",
            response_method="session/request_permission",
        )
        assert decode(dumps(result), v2.RequestPermissionResponse).value.outcome == outcome


def test_v1_responses(schema_valid: SchemaCheck) -> None:
    for outcome in ({"outcome": "cancelled"}, {"outcome": "selected", "optionId": "allow-once"}):
        decoded = decode(dumps({"outcome": outcome}), v1.RequestPermissionResponse)
        assert decoded.diagnostics == ()
        result = reencoded(decoded.value)
        assert result == {"outcome": outcome}
        schema_valid(
            {"jsonrpc": "2.0", "id": 1, "result": result},
            "v1",
            response_method="session/request_permission",
        )


def test_t5_exit_status_null_fields_read_as_omitted(schema_valid: SchemaCheck) -> None:
    def terminal(exit_status: dict[str, Any]) -> bytes:
        body = {"sessionUpdate": "terminal_update", "terminalId": "t", "exitStatus": exit_status}
        params = {"sessionId": "s", "update": body}
        return dumps({"jsonrpc": "2.0", "method": "session/update", "params": params})

    with_nulls = decode_message(terminal({"exitCode": None, "signal": None, "_meta": None}))
    empty = decode_message(terminal({}))
    assert with_nulls.diagnostics == ()
    assert with_nulls.value == empty.value  # the same exit status: omitted and null are one
    out = encode(with_nulls.value)
    assert json.loads(out)["params"]["update"]["exitStatus"] == {}
    schema_valid(out, "v2")


def test_d22_invalid_base64_in_a_terminal_snapshot_is_an_invalid_value_at_decode() -> None:
    body = {"sessionUpdate": "terminal_update", "terminalId": "t", "output": {"data": "abc"}}
    params = {"sessionId": "s", "update": body}
    decoded = decode_message(
        dumps({"jsonrpc": "2.0", "method": "session/update", "params": params})
    )
    assert decoded.value.params.update.output is UNSET  # read as omitted
    assert [d.path for d in decoded.diagnostics] == ["$.params.update.output.data"]
    with pytest.raises(DecodeError) as raised:
        decode_message(
            dumps({"jsonrpc": "2.0", "method": "session/update", "params": params}), strict=True
        )
    assert raised.value.path == "$.params.update.output.data"
