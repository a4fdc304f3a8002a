"""The TypeScript-SDK harness (tests/interop): it passes what the SDK accepts, fails the rest.

Every message goes to one ``node`` process (module-scoped batch). Shapes follow
D46 (v2 updates to state updates) for v2 and D46 (v1 shapes) for v1.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.interop.ts_sdk import TsInput, TsMessage, ts_validate

SESSION = "sess_abc123"


def update(body: dict[str, Any], session: str | None = SESSION) -> dict[str, Any]:
    params: dict[str, Any] = {"update": body}
    if session is not None:
        params["sessionId"] = session
    return {"jsonrpc": "2.0", "method": "session/update", "params": params}


V2_UPDATE_WITH_NULLS = update(
    {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_001",
        "status": "completed",
        "content": None,
        "capabilities": None,
        "_meta": {"vendor.example/progress": None},
    }
)
V2_CONTENT_CHUNK = update(
    {
        "sessionUpdate": "tool_call_content_chunk",
        "toolCallId": "call_001",
        "content": {"type": "content", "content": {"type": "text", "text": "partial output"}},
    }
)
V1_TOOL_CALL = update(
    {
        "sessionUpdate": "tool_call",
        "toolCallId": "call_001",
        "title": "Reading configuration file",
        "kind": "read",
        "status": "pending",
    }
)
NO_SESSION_ID = update({"sessionUpdate": "tool_call_update", "toolCallId": "call_001"}, None)
V2_PERMISSION_REQUEST: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 5,
    "method": "session/request_permission",
    "params": {
        "sessionId": SESSION,
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
        "options": [
            {"optionId": "allow", "name": "Allow once", "kind": "allow_once"},
            {"optionId": "deny", "name": "Deny", "kind": "reject_once"},
        ],
    },
}
SELECTED = {"outcome": {"outcome": "selected", "optionId": "a"}}

CASES: dict[str, TsInput] = {
    "v2 update with nulls": (2, V2_UPDATE_WITH_NULLS),
    "v2 chunk under v2": (2, V2_CONTENT_CHUNK),
    "v2 chunk under v1": (1, V2_CONTENT_CHUNK),
    "v1 tool_call under v1": (1, V1_TOOL_CALL),
    "v1 tool_call under v2": (2, V1_TOOL_CALL),
    "no sessionId under v1": (1, NO_SESSION_ID),
    "no sessionId under v2": (2, NO_SESSION_ID),
    "v2 permission request": (2, V2_PERMISSION_REQUEST),
    "v2 permission request, no options": (
        2,
        {**V2_PERMISSION_REQUEST, "params": {**V2_PERMISSION_REQUEST["params"], "options": []}},
    ),
    "selected response under v1": TsMessage.response(1, SELECTED, request_id=5),
    "selected response under v2": TsMessage.response(2, SELECTED, request_id=5),
    "selected without optionId under v2": TsMessage.response(
        2, {"outcome": {"outcome": "selected"}}
    ),
    "unsupported method": (2, {"jsonrpc": "2.0", "method": "fs/read_text_file", "params": {}}),
}


@pytest.fixture(scope="module")
def verdicts() -> dict[str, str | None]:
    return dict(zip(CASES, ts_validate(list(CASES.values())), strict=True))


def test_v2_update_with_null_fields_passes_v2(verdicts: dict[str, str | None]) -> None:
    assert verdicts["v2 update with nulls"] is None


def test_v2_content_chunk_passes_v2_and_is_rejected_by_v1(
    verdicts: dict[str, str | None],
) -> None:
    assert verdicts["v2 chunk under v2"] is None
    assert "tool_call_content_chunk" in (verdicts["v2 chunk under v1"] or "")


def test_v1_tool_call_passes_v1_and_is_an_unknown_variant_to_v2(
    verdicts: dict[str, str | None],
) -> None:
    assert verdicts["v1 tool_call under v1"] is None
    # `tool_call` is no v2 variant: the v2 SDK keeps it as an unknown update (D46 (v2 updates),
    # D17).
    assert verdicts["v1 tool_call under v2"] is None


def test_missing_session_id_fails_both(verdicts: dict[str, str | None]) -> None:
    for version in (1, 2):
        assert "params.sessionId" in (verdicts[f"no sessionId under v{version}"] or "")


def test_v2_permission_request(verdicts: dict[str, str | None]) -> None:
    assert verdicts["v2 permission request"] is None
    assert "params.options" in (verdicts["v2 permission request, no options"] or "")


def test_permission_responses(verdicts: dict[str, str | None]) -> None:
    assert verdicts["selected response under v1"] is None
    assert verdicts["selected response under v2"] is None
    assert "result.outcome" in (verdicts["selected without optionId under v2"] or "")


def test_unsupported_method_is_reported(verdicts: dict[str, str | None]) -> None:
    assert (verdicts["unsupported method"] or "").startswith("unsupported method")
