"""Tests of acp_toolcalls.schema: validation against the bundled upstream ACP schemas.

Example messages show the shapes of D46's rows (methods, tool-call update, content chunks,
capabilities, terminals, permissions, v1 shapes). Every test runs with each engine that answers
"valid or not" (jsonschema-rs, and jsonschema, the fallback where it is not installed);
tests/schema/test_schema_engines.py asks both of mutated messages and wants the same violations.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from acp_toolcalls.check import (
    SchemaViolation,
    method_table,
    validate_message,
    validate_payload,
)
from acp_toolcalls.schema import _schemas as schema

ENGINES = ["jsonschema-rs", "jsonschema"]


@pytest.fixture(autouse=True, params=ENGINES)
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "jsonschema-rs" and schema._compiled_engine() is None:
        pytest.skip("jsonschema-rs is not installed on this platform")
    monkeypatch.setattr(schema, "ENGINE", request.param)
    return str(request.param)


SchemaCheck = Callable[..., None]  # the `schema_valid` fixture of conftest.py

# --- examples from the spec -----------------------------------------------------------------

# Section 4.
V2_TOOL_CALL_UPDATE = b"""{"jsonrpc":"2.0","method":"session/update",
 "params":{"sessionId":"sess_abc123def456",
 "update":{"sessionUpdate":"tool_call_update","toolCallId":"call_001",
           "title":"Reading configuration file","kind":"read","status":"pending"}}}"""

# Section 6.2 (payloads; wrapped in session/update below).
V2_UPDATES_6_2 = [
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

# Section 6.3.
V2_CONTENT_CHUNK = {
    "sessionUpdate": "tool_call_content_chunk",
    "toolCallId": "call_001",
    "content": {"type": "content", "content": {"type": "text", "text": "partial output"}},
}

# Section 6.10.
V2_TERMINAL_UPDATES = [
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

# Section 6.11.
V2_PERMISSION_REQUEST_TOOL_CALL = """{"jsonrpc":"2.0","id":5,"method":"session/request_permission",
 "params":{"sessionId":"sess_abc123","title":"Run this script?",
 "description":"The agent wants to execute scripts/setup.sh in your project.",
 "subject":{"type":"tool_call","toolCall":{"toolCallId":"call_001","title":"Execute setup script",
 "kind":"execute","status":"pending"}},
 "options":[{"optionId":"allow","name":"Allow once","kind":"allow_once"},
 {"optionId":"deny","name":"Deny","kind":"reject_once"}]}}"""
V2_PERMISSION_RESPONSE_SELECTED = (
    '{"jsonrpc":"2.0","id":5,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}'
)
V2_PERMISSION_REQUEST_COMMAND = """{"jsonrpc":"2.0","id":6,"method":"session/request_permission",
 "params":{"sessionId":"sess_abc123","title":"Run the test suite?",
 "subject":{"type":"command","command":"cargo test","cwd":"/home/user/project",
 "toolCallId":"call_002","terminalId":"term_001"},
 "options":[{"optionId":"ok","name":"Run","kind":"allow_once"}]}}"""
V2_PERMISSION_RESPONSE_CANCELLED = (
    '{"jsonrpc":"2.0","id":6,"result":{"outcome":{"outcome":"cancelled"}}}'
)

# Section 8.5.
V1_PERMISSION_REQUEST = """{"jsonrpc":"2.0","id":5,"method":"session/request_permission",
 "params":{"sessionId":"sess_abc123def456","toolCall":{"toolCallId":"call_001"},
 "options":[{"optionId":"allow-once","name":"Allow once","kind":"allow_once"},
 {"optionId":"reject-once","name":"Reject","kind":"reject_once"}]}}"""

# Sections 8.1 / 8.2 (and conformance vector C1).
V1_TOOL_CALL = {
    "sessionUpdate": "tool_call",
    "toolCallId": "c1",
    "title": "Edit",
    "kind": "other",
    "status": "pending",
    "content": [],
    "locations": [],
}
V1_TOOL_CALL_UPDATE = {
    "sessionUpdate": "tool_call_update",
    "toolCallId": "c1",
    "status": "completed",
    "title": None,
    "content": [
        {"type": "diff", "path": "/home/user/a.py", "oldText": "a = 1\n", "newText": "a = 2\n"},
        {"type": "terminal", "terminalId": "term_1"},
    ],
    "locations": [{"path": "/home/user/a.py", "line": 1}],
    "rawOutput": {"exit": 0},
}


def notification(update: dict[str, Any], session_id: str = "sess_1") -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session_id, "update": update},
    }


def v2_update_message(**changes: Any) -> dict[str, Any]:
    message = json.loads(V2_TOOL_CALL_UPDATE)
    message["params"]["update"].update(changes)
    assert isinstance(message, dict)
    return message


def at(violations: list[SchemaViolation], path: str) -> list[SchemaViolation]:
    return [v for v in violations if v.path == path]


# --- valid messages -------------------------------------------------------------------------


def test_v2_tool_call_update_from_section_4(schema_valid: SchemaCheck) -> None:
    schema_valid(V2_TOOL_CALL_UPDATE, "v2")


@pytest.mark.parametrize("update", V2_UPDATES_6_2)
def test_v2_tool_call_updates_from_section_6_2(
    schema_valid: SchemaCheck, update: dict[str, Any]
) -> None:
    schema_valid(notification(update), "v2")


def test_v2_tool_call_content_chunk(schema_valid: SchemaCheck) -> None:
    schema_valid(notification(V2_CONTENT_CHUNK), "v2")


@pytest.mark.parametrize("update", V2_TERMINAL_UPDATES)
def test_v2_terminal_updates(schema_valid: SchemaCheck, update: dict[str, Any]) -> None:
    schema_valid(notification(update), "v2")


def test_v2_permission_requests_and_responses(schema_valid: SchemaCheck) -> None:
    method = "session/request_permission"
    schema_valid(V2_PERMISSION_REQUEST_TOOL_CALL, "v2")
    schema_valid(V2_PERMISSION_RESPONSE_SELECTED, "v2", response_method=method)
    schema_valid(V2_PERMISSION_REQUEST_COMMAND, "v2")
    schema_valid(V2_PERMISSION_RESPONSE_CANCELLED, "v2", method)


def test_v2_tool_call_cancel_round_trip(schema_valid: SchemaCheck) -> None:
    # Section 6.9.
    schema_valid(
        '{"jsonrpc":"2.0","id":9,"method":"tool_call/cancel",'
        '"params":{"sessionId":"sess_1","toolCallId":"call_001"}}',
        "v2",
    )
    schema_valid('{"jsonrpc":"2.0","id":9,"result":{}}', "v2", "tool_call/cancel")
    schema_valid(
        notification(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "call_001",
                "status": "cancelled",
                "capabilities": None,
            }
        ),
        "v2",
    )


def test_v1_tool_call_and_update(schema_valid: SchemaCheck) -> None:
    schema_valid(notification(V1_TOOL_CALL), "v1")
    schema_valid(notification(V1_TOOL_CALL_UPDATE), "v1")
    schema_valid(
        notification({"sessionUpdate": "tool_call", "toolCallId": "a", "title": "t"}), "v1"
    )


def test_v1_permission_request_and_response(schema_valid: SchemaCheck) -> None:
    schema_valid(V1_PERMISSION_REQUEST, "v1")
    schema_valid(
        '{"jsonrpc":"2.0","id":5,"result":{"outcome":{"outcome":"selected","optionId":"allow-once"}}}',
        "v1",
        "session/request_permission",
    )


def test_fixture_accepts_bytes_str_and_dict(schema_valid: SchemaCheck) -> None:
    schema_valid(V2_TOOL_CALL_UPDATE, "v2")
    schema_valid(V2_TOOL_CALL_UPDATE.decode(), "v2")
    schema_valid(json.loads(V2_TOOL_CALL_UPDATE), "v2")


def test_fixture_fails_with_the_violations_listed(schema_valid: SchemaCheck) -> None:
    with pytest.raises(pytest.fail.Exception) as failure:
        schema_valid(v2_update_message(title=42), "v2")
    assert "$.params.update.title: 42 is not of type 'string', 'null'" in str(failure.value)


# --- invalid messages: path and message -----------------------------------------------------


def test_v2_title_of_wrong_type_is_reported_inside_tool_call_update() -> None:
    violations = validate_message(v2_update_message(title=42), "v2")
    assert violations == [
        SchemaViolation(
            path="$.params.update.title",
            message="42 is not of type 'string', 'null'",
            schema_path="#/$defs/ToolCallUpdate/properties/title/type",
        )
    ]


def test_v2_missing_tool_call_id() -> None:
    message = v2_update_message()
    del message["params"]["update"]["toolCallId"]
    violations = validate_message(message, "v2")
    assert [(v.path, v.message) for v in violations] == [
        ("$.params.update", "'toolCallId' is a required property")
    ]
    assert violations[0].schema_path == "#/$defs/ToolCallUpdate/required"


def test_union_failures_never_say_not_valid_under_any() -> None:
    message = v2_update_message(
        title=42,
        status=3,
        content=[{"type": "content", "content": {"type": "text"}}, {"type": "diff"}],
    )
    violations = validate_message(message, "v2")
    assert [(v.path, v.message) for v in violations] == [
        ("$.params.update.content[0].content", "'text' is a required property"),
        ("$.params.update.content[1]", "'changes' is a required property"),
        # v2 ToolCallStatus is open (any string), so only the JSON type can be wrong.
        ("$.params.update.status", "3 is not of type 'string', 'null'"),
        ("$.params.update.title", "42 is not of type 'string', 'null'"),
    ]
    assert not any("valid under" in v.message for v in violations)


def test_v1_tool_call_is_an_unknown_but_valid_update_under_v2() -> None:
    # v2 removed `tool_call`, but v2's SessionUpdate is an open union: its last branch (title
    # "other") accepts any object whose string `sessionUpdate` is not a known v2 value. A v1
    # `tool_call` is therefore schema-valid v2 (receivers treat it as an unknown update, D17);
    # it is our senders, not the schema, that must never emit it on a v2 connection.
    message = notification({"sessionUpdate": "tool_call", "toolCallId": "a", "title": "t"})
    assert validate_message(message, "v2") == []
    # A known v2 discriminator cannot hide a malformed payload behind the "other" branch.
    message = notification({"sessionUpdate": "tool_call_update", "title": "t"})
    assert [v.path for v in validate_message(message, "v2")] == ["$.params.update"]


def test_v2_only_session_update_is_invalid_under_v1() -> None:
    violations = validate_message(notification(V2_CONTENT_CHUNK), "v1")
    assert len(violations) == 1
    assert violations[0].path == "$.params.update.sessionUpdate"
    assert violations[0].message.startswith("'tool_call_content_chunk' is not one of [")
    assert "'tool_call_update'" in violations[0].message


def test_v2_permission_request_with_no_options() -> None:
    message = json.loads(V2_PERMISSION_REQUEST_COMMAND)
    message["params"]["options"] = []
    violations = validate_message(message, "v2")
    assert len(violations) == 1
    assert violations[0].path == "$.params.options"
    assert violations[0].schema_path.endswith(
        "/RequestPermissionRequest/properties/options/minItems"
    )
    assert violations[0].message == "[] should be non-empty"
    # v1 has no minItems on options.
    v1 = json.loads(V1_PERMISSION_REQUEST)
    v1["params"]["options"] = []
    assert validate_message(v1, "v1") == []


def test_wrong_jsonrpc_version() -> None:
    message = json.loads(V2_TOOL_CALL_UPDATE)
    message["jsonrpc"] = "1.0"
    violations = validate_message(message, "v2")
    assert [(v.path, v.message) for v in violations] == [
        ("$.jsonrpc", "'1.0' is not one of ['2.0']")
    ]
    del message["jsonrpc"]
    assert [(v.path, v.message) for v in validate_message(message, "v2")] == [
        ("$", "'jsonrpc' is a required property")
    ]


def test_v2_cancelled_status_is_invalid_under_v1() -> None:
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "cancelled"}
    assert validate_message(notification(update), "v2") == []
    violations = validate_message(notification(update), "v1")
    assert len(violations) == 1
    assert violations[0].path == "$.params.update.status"
    assert violations[0].message == (
        "'cancelled' is not one of ['pending', 'in_progress', 'completed', 'failed']"
        " or of type 'null'"
    )


def test_open_enums_in_v2_closed_in_v1() -> None:
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "c", "kind": "_vendor_kind"}
    assert validate_message(notification(update), "v2") == []
    assert [v.path for v in validate_message(notification(update), "v1")] == [
        "$.params.update.kind"
    ]


def test_v1_tool_call_requires_title_and_rejects_null_kind() -> None:
    update = {"sessionUpdate": "tool_call", "toolCallId": "c", "kind": None}
    violations = validate_message(notification(update), "v1")
    assert [v.path for v in violations] == ["$.params.update", "$.params.update.kind"]
    assert violations[0].message == "'title' is a required property"
    assert violations[1].message.startswith("null is not one of ['read', 'edit', ")


def test_v2_permission_subject_errors_point_into_the_subject() -> None:
    message = json.loads(V2_PERMISSION_REQUEST_TOOL_CALL)
    del message["params"]["subject"]["toolCall"]["toolCallId"]
    del message["params"]["options"][1]["kind"]
    violations = validate_message(message, "v2")
    assert [(v.path, v.message) for v in violations] == [
        ("$.params.options[1]", "'kind' is a required property"),
        ("$.params.subject.toolCall", "'toolCallId' is a required property"),
    ]


def test_permission_response_is_checked_only_with_response_method() -> None:
    response = {"jsonrpc": "2.0", "id": 5, "result": {"outcome": {"outcome": "selected"}}}
    assert validate_message(response, "v2") == []
    violations = validate_message(response, "v2", response_method="session/request_permission")
    assert [(v.path, v.message) for v in violations] == [
        ("$.result.outcome", "'optionId' is a required property")
    ]
    # An unknown outcome is the open union's "other" branch in v2, invalid in v1.
    response["result"] = {"outcome": {"outcome": "deferred"}}
    assert validate_message(response, "v2", response_method="session/request_permission") == []
    violations = validate_message(response, "v1", response_method="session/request_permission")
    assert [(v.path, v.message) for v in violations] == [
        ("$.result.outcome.outcome", "'deferred' is not one of ['cancelled', 'selected']")
    ]


def test_error_responses() -> None:
    ok = {"jsonrpc": "2.0", "id": None, "error": {"code": -32602, "message": "Invalid params"}}
    assert validate_message(ok, "v2") == []
    bad = {"jsonrpc": "2.0", "id": 1, "error": {"code": "x"}}
    assert [(v.path, v.message) for v in validate_message(bad, "v2")] == [
        ("$.error", "'message' is a required property"),
        ("$.error.code", "'x' is not of type 'integer'"),
    ]
    both = {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "m"}}
    assert [v.message for v in validate_message(both, "v2")] == [
        "a response must not contain both 'result' and 'error'"
    ]
    no_id = {"jsonrpc": "2.0", "result": {}}
    assert [(v.path, v.message) for v in validate_message(no_id, "v2")] == [
        ("$", "'id' is a required property")
    ]


def test_request_ids() -> None:
    request = json.loads(V2_PERMISSION_REQUEST_COMMAND)
    request["id"] = "req-6"
    assert validate_message(request, "v2") == []
    request["id"] = 1.5
    assert [(v.path, v.message) for v in validate_message(request, "v2")] == [
        ("$.id", "1.5 is not of type 'integer', 'string'")
    ]
    # v1's RequestId includes null; v2's does not.
    request["id"] = None
    assert [v.path for v in validate_message(request, "v2")] == ["$.id"]
    v1 = json.loads(V1_PERMISSION_REQUEST)
    v1["id"] = None
    assert validate_message(v1, "v1") == []


def test_method_kind_mismatches() -> None:
    request = json.loads(V2_PERMISSION_REQUEST_COMMAND)
    del request["id"]
    assert [(v.path, v.message) for v in validate_message(request, "v2")] == [
        ("$", "'session/request_permission' is a request: 'id' is a required property")
    ]
    update = json.loads(V2_TOOL_CALL_UPDATE)
    update["id"] = 3
    assert [(v.path, v.message) for v in validate_message(update, "v2")] == [
        ("$.id", "'session/update' is a notification and must not have an 'id'")
    ]


def test_missing_and_null_params() -> None:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": "session/update"}
    assert [(v.path, v.message) for v in validate_message(message, "v2")] == [
        ("$", "'params' is a required property")
    ]
    message["params"] = None
    assert [(v.path, v.message) for v in validate_message(message, "v2")] == [
        ("$.params", "null is not of type 'object'")
    ]


def test_unknown_and_extension_methods_get_envelope_checks_only() -> None:
    for method in ("_vendor.example/ping", "unknown/method"):
        assert validate_message({"jsonrpc": "2.0", "method": method, "params": [1]}, "v2") == []
        assert validate_message({"jsonrpc": "2.0", "id": 1, "method": method}, "v1") == []
    bad = {"jsonrpc": "2.0", "id": {}, "method": 7}
    assert [(v.path, v.message) for v in validate_message(bad, "v2")] == [
        ("$.id", "{} is not of type 'integer', 'string'"),
        ("$.method", "7 is not of type 'string'"),
    ]


def test_v2_only_methods_are_unknown_to_v1() -> None:
    request = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "tool_call/cancel",
        "params": {"sessionId": "sess_1"},
    }
    assert [v.message for v in validate_message(request, "v2")] == [
        "'toolCallId' is a required property"
    ]
    assert validate_message(request, "v1") == []  # not a v1 method: envelope only


@pytest.mark.parametrize("message", [None, [], "x", 5, [V2_UPDATES_6_2[0]]])
def test_non_object_messages(message: object) -> None:
    violations = validate_message(message, "v2")
    assert len(violations) == 1
    assert violations[0].path == "$"
    assert violations[0].message.endswith("is not of type 'object'")


def test_missing_method_and_result() -> None:
    violations = validate_message({"jsonrpc": "2.0", "id": 1}, "v2")
    assert [v.path for v in violations] == ["$"]
    assert violations[0].message.startswith("'method' is a required property")


def test_unknown_protocol_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown protocol"):
        validate_message({}, "v3")  # type: ignore[arg-type]  # deliberately no such version


def test_input_is_not_modified() -> None:
    message = v2_update_message(title=42, content=[{"type": "diff"}])
    before = copy.deepcopy(message)
    validate_message(message, "v2")
    assert message == before


# --- validate_payload -----------------------------------------------------------------------


def test_validate_payload_paths_are_relative() -> None:
    assert validate_payload(V2_UPDATES_6_2[1], "SessionUpdate", "v2") == []
    assert validate_payload({"toolCallId": "a", "title": None}, "ToolCallUpdate", "v2") == []
    violations = validate_payload({"toolCallId": 1}, "ToolCallUpdate", "v2")
    assert [(v.path, v.message) for v in violations] == [
        ("$.toolCallId", "1 is not of type 'string'")
    ]
    violations = validate_payload({"title": "t"}, "ToolCall", "v1")
    assert [(v.path, v.schema_path) for v in violations] == [("$", "#/$defs/ToolCall/required")]


def test_validate_payload_unknown_def() -> None:
    with pytest.raises(KeyError):
        validate_payload({}, "NoSuchDef", "v2")


def test_paths_quote_odd_keys_and_sort_indexes_numerically() -> None:
    violations = validate_payload(
        {"type": "object", "properties": {"my.field": 5}}, "ElicitationSchema", "v2"
    )
    assert [v.path for v in violations] == ['$.properties["my.field"]']
    update = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c",
        "locations": [{"path": "/a"}] * 2 + [{"line": 1}] + [{"path": "/a"}] * 8 + [{"line": 2}],
    }
    violations = validate_payload(update, "SessionUpdate", "v2")
    assert [v.path for v in violations] == ["$.locations[2]", "$.locations[11]"]


def test_long_values_are_abbreviated_in_messages() -> None:
    violations = validate_payload({"toolCallId": "c", "title": ["x" * 500]}, "ToolCallUpdate", "v2")
    assert len(violations) == 1
    assert len(violations[0].message) < 120
    assert violations[0].message.endswith("is not of type 'string', 'null'")


def test_format_is_not_asserted() -> None:
    # `format: int64` / `uint16` etc. are annotations only; the numeric bounds are enforced.
    update = {"sessionUpdate": "terminal_update", "terminalId": "t", "size": {"cols": 0, "rows": 1}}
    violations = validate_payload(update, "SessionUpdate", "v2")
    assert [(v.path, v.message) for v in violations] == [
        ("$.size.cols", "0 is less than the minimum of 1")
    ]
    huge = {"jsonrpc": "2.0", "id": 2**70, "result": {}}
    assert validate_message(huge, "v2") == []


# --- the method table -----------------------------------------------------------------------


def test_method_table_is_derived_from_x_method() -> None:
    v1 = method_table("v1")
    v2 = method_table("v2")
    assert v2["session/update"].params_def == "UpdateSessionNotification"
    assert v2["session/update"].kind == "notification"
    assert v2["session/update"].side == "client"
    assert v1["session/update"].params_def == "SessionNotification"
    for table in (v1, v2):
        permission = table["session/request_permission"]
        assert (permission.kind, permission.side) == ("request", "client")
        assert permission.params_def == "RequestPermissionRequest"
        assert permission.result_def == "RequestPermissionResponse"
        assert table["$/cancel_request"].side == "protocol"
        assert table["session/cancel"].kind == "notification"
        assert all(spec.result_def for spec in table.values() if spec.kind == "request")
        assert not any(spec.result_def for spec in table.values() if spec.kind == "notification")
    assert v2["tool_call/cancel"].result_def == "CancelToolCallResponse"
    assert "tool_call/cancel" not in v1
    assert "terminal/create" in v1
    assert "terminal/create" not in v2
    assert (len(v1), len(v2)) == (25, 18)
