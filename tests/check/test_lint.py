"""Tool-call lint (acp_toolcalls.lint): every rule positive and negative, sessions, batches."""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

import pytest

from acp_toolcalls import decode_message, v2
from acp_toolcalls.check import (
    CODES,
    KNOWN_V2_SESSION_UPDATES,
    KNOWN_V2_VALUES,
    Finding,
    ToolCallLinter,
)
from acp_toolcalls.models import VersionName

SESSION = "sess_1"


# --- helpers --------------------------------------------------------------------------------


def update(body: dict[str, Any], session: str = SESSION) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session, "update": body},
    }


def tcu(call_id: str = "call_1", **fields: Any) -> dict[str, Any]:
    """A v2 tool_call_update (or v1 one: the shapes agree) notification."""
    return update({"sessionUpdate": "tool_call_update", "toolCallId": call_id, **fields})


def v1_create(call_id: str = "call_1", title: str = "Read file", **fields: Any) -> dict[str, Any]:
    return update({"sessionUpdate": "tool_call", "toolCallId": call_id, "title": title, **fields})


def chunk(call_id: str = "call_1", text: str = "output") -> dict[str, Any]:
    content = {"type": "content", "content": {"type": "text", "text": text}}
    return update(
        {"sessionUpdate": "tool_call_content_chunk", "toolCallId": call_id, "content": content}
    )


def text_item(text: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": text}}


OPTIONS = [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}]


def permission(
    tool_call: dict[str, Any] | None,
    title: str = "Allow this?",
    description: str | None = None,
    options: list[dict[str, Any]] | None = None,
    subject: dict[str, Any] | None = None,
) -> dict[str, Any]:
    params: dict[str, Any] = {"sessionId": SESSION, "title": title, "options": options or OPTIONS}
    if description is not None:
        params["description"] = description
    if subject is not None:
        params["subject"] = subject
    elif tool_call is not None:
        params["subject"] = {"type": "tool_call", "toolCall": tool_call}
    return {"jsonrpc": "2.0", "id": 7, "method": "session/request_permission", "params": params}


def v1_permission(tool_call: dict[str, Any]) -> dict[str, Any]:
    params = {"sessionId": SESSION, "toolCall": tool_call, "options": OPTIONS}
    return {"jsonrpc": "2.0", "id": 7, "method": "session/request_permission", "params": params}


def state(value: str, background: Any = None, session: str = SESSION) -> dict[str, Any]:
    body: dict[str, Any] = {"sessionUpdate": "state_update", "state": value}
    if background is not None:
        body["background"] = background
    return update(body, session)


def lint(messages: list[Any], protocol: VersionName = "v2", finish: bool = True) -> list[Finding]:
    """Feed each message as one line (line numbers from 1) and return every finding."""
    linter = ToolCallLinter()
    out: list[Finding] = []
    for line, message in enumerate(messages, start=1):
        if isinstance(message, dict):
            raw = message
            message = decode_message(json.dumps(raw).encode(), version=protocol).value
        else:
            raw = None  # an already typed message
        out += linter.feed(message, line, raw=raw)
    if finish:
        out += linter.finish()
    return out


def codes(findings: list[Finding], code: str | None = None) -> list[tuple[int, str, str]]:
    return [(f.line, f.path, f.code) for f in findings if code is None or f.code == code]


DONE = {"title": "Read file", "status": "completed"}


# --- missing-title --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "path"),
    [
        (tcu(status="pending"), "$.params.update"),
        (tcu(title="", status="pending"), "$.params.update"),
        (tcu(title="   ", status="pending"), "$.params.update"),
        (tcu(title=None, status="pending"), "$.params.update"),
        (chunk(), "$.params.update"),
        (permission({"toolCallId": "call_1", "kind": "edit"}), "$.params.subject.toolCall"),
    ],
    ids=["omitted", "empty", "blank", "null", "chunk-first", "permission-subject-first"],
)
def test_missing_title_v2(first: dict[str, Any], path: str) -> None:
    findings = lint([first, tcu(title="Read file", status="completed")])
    assert codes(findings) == [(1, path, "missing-title")]
    assert "'call_1'" in findings[0].message


def test_title_on_first_report_is_clean_and_later_reports_need_none() -> None:
    findings = lint([tcu(title="Read file", status="pending"), chunk(), tcu(status="completed")])
    assert findings == []


def test_missing_title_only_on_the_first_report() -> None:
    findings = lint([tcu(status="pending"), tcu(status="in_progress"), tcu(status="completed")])
    assert codes(findings) == [(1, "$.params.update", "missing-title")]


def test_missing_title_v1_update_and_permission_for_unseen_ids() -> None:
    messages = [
        tcu("call_1", status="in_progress"),
        v1_permission({"toolCallId": "call_2", "status": "pending"}),
        tcu("call_1", status="completed"),
        tcu("call_2", status="completed"),
    ]
    assert codes(lint(messages, "v1")) == [
        (1, "$.params.update", "missing-title"),
        (2, "$.params.toolCall", "missing-title"),
    ]


def test_missing_title_v1_clean_after_tool_call() -> None:
    messages = [
        v1_create(status="pending"),
        v1_permission({"toolCallId": "call_1"}),
        tcu(status="completed"),
    ]
    assert lint(messages, "v1") == []


def test_missing_title_v1_tool_call_with_empty_title() -> None:
    assert codes(lint([v1_create(title="", status="completed")], "v1")) == [
        (1, "$.params.update", "missing-title")
    ]


# --- custom-value-prefix --------------------------------------------------------------------

DIFF_CHANGE = {"operation": "modify", "path": "/repo/a.txt", "fileType": "text"}


@pytest.mark.parametrize(
    ("message", "path"),
    [
        (tcu(title="t", kind="lookup", status="completed"), "$.params.update.kind"),
        (tcu(title="t", status="done"), "$.params.update.status"),
        (
            tcu(title="t", status="completed", content=[{"type": "chart", "data": [1]}]),
            "$.params.update.content[0].type",
        ),
        (
            tcu(
                title="t",
                status="completed",
                content=[{"type": "content", "content": {"type": "video", "url": "x"}}],
            ),
            "$.params.update.content[0].content.type",
        ),
        (
            tcu(
                title="t",
                status="completed",
                content=[{"type": "diff", "changes": [{"operation": "chmod", "path": "/a"}]}],
            ),
            "$.params.update.content[0].changes[0].operation",
        ),
        (
            tcu(
                title="t",
                status="completed",
                content=[{"type": "diff", "changes": [{**DIFF_CHANGE, "fileType": "socket"}]}],
            ),
            "$.params.update.content[0].changes[0].fileType",
        ),
        (
            tcu(
                title="t",
                status="completed",
                content=[
                    {
                        "type": "diff",
                        "changes": [DIFF_CHANGE],
                        "patch": {"format": "unified", "text": "--- a\n+++ b\n"},
                    }
                ],
            ),
            "$.params.update.content[0].patch.format",
        ),
        (update({"sessionUpdate": "progress", "percent": 5}), "$.params.update.sessionUpdate"),
    ],
    ids=[
        "kind",
        "status",
        "content-type",
        "content-block-type",
        "diff-operation",
        "file-type",
        "patch-format",
        "session-update",
    ],
)
def test_custom_value_prefix(message: dict[str, Any], path: str) -> None:
    assert codes(lint([message]), "custom-value-prefix") == [(1, path, "custom-value-prefix")]


def typed_permission(subject: Any, *kinds: str) -> v2.PermissionRequestMessage:
    """Built, not decoded: the rule itself, whatever the codec does."""
    options = [v2.PermissionOption(option_id=k, name=k, kind=k) for k in kinds or ("allow_once",)]
    params = v2.RequestPermissionRequest(
        session_id=SESSION, title="Allow this?", options=options, subject=subject
    )
    return v2.PermissionRequestMessage(id=7, params=params)


def test_custom_value_prefix_permission_option_kind_and_subject_type() -> None:
    subject = v2.UnknownPermissionSubject({"type": "url", "url": "https://example.com"})
    findings = lint([typed_permission(subject, "allow_once", "maybe")])
    assert codes(findings) == [
        (1, "$.params.options[1].kind", "custom-value-prefix"),
        (1, "$.params.subject.type", "custom-value-prefix"),
    ]


def test_custom_subject_type_through_the_decoder() -> None:
    subject = {"type": "url", "url": "https://example.com"}
    findings = lint([permission(None, subject=subject)])
    assert codes(findings) == [(1, "$.params.subject.type", "custom-value-prefix")]


def test_custom_value_prefix_inside_permission_subject() -> None:
    call = {"toolCallId": "call_1", "title": "t", "kind": "browse", "status": "completed"}
    assert codes(lint([permission(call)])) == [
        (1, "$.params.subject.toolCall.kind", "custom-value-prefix")
    ]


def test_underscore_and_known_values_are_clean() -> None:
    content = [
        {"type": "_chart", "data": [1]},
        {"type": "content", "content": {"type": "_video"}},
        {"type": "content", "content": {"type": "text", "text": "ok"}},
        {
            "type": "diff",
            "changes": [
                {"operation": "_chmod", "path": "/a"},
                {**DIFF_CHANGE, "fileType": "_socket"},
                {"operation": "move", "oldPath": "/a", "path": "/b", "fileType": "symlink"},
            ],
            "patch": {"format": "_hunks", "text": "x"},
        },
        {"type": "terminal", "terminalId": "term_1"},
    ]
    messages = [
        tcu(title="t", kind="_review", status="_queued", content=content),
        tcu(kind="switch_mode", status="paused"),
        tcu(kind=None, status="completed"),
        update({"sessionUpdate": "_progress", "percent": 5}),
        update(
            {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "m1",
                "content": {"type": "text", "text": "hi"},
            }
        ),
        update({"sessionUpdate": "plan_update", "entries": []}),
        typed_permission(v2.UnknownPermissionSubject({"type": "_url"}), "_ask"),
    ]
    assert lint(messages) == []


def test_removed_v1_update_on_v2_says_what_to_send() -> None:
    findings = lint([update({"sessionUpdate": "tool_call", "toolCallId": "c", "title": "t"})])
    assert codes(findings) == [(1, "$.params.update.sessionUpdate", "custom-value-prefix")]
    assert "tool_call_update" in findings[0].message


def test_custom_value_prefix_is_v2_only() -> None:
    # v1 enums are closed: the schema (and the decoder) report unknown values there.
    assert codes(lint([v1_create(kind="lookup", status="completed")], "v1")) == []


def test_custom_value_path_counts_items_the_decoder_skipped() -> None:
    content = [{"type": "content"}, {"type": "chart"}]  # the first item is invalid and skipped
    findings = lint([tcu(title="t", status="completed", content=content)])
    assert codes(findings) == [(1, "$.params.update.content[1].type", "custom-value-prefix")]


def test_known_values_match_the_bundled_v2_schema() -> None:
    schema = json.loads((files("acp_toolcalls") / "schemas/v2/schema.json").read_text("utf-8"))
    defs = schema["$defs"]

    def consts(name: str) -> set[str]:
        found: set[str] = set()
        for branch in defs[name].get("anyOf", defs[name].get("oneOf", [])):
            if "const" in branch:
                found.add(branch["const"])
            for prop in branch.get("properties", {}).values():
                if "const" in prop:
                    found.add(prop["const"])
        return found

    expected = {
        "tool kind": "ToolKind",
        "tool call status": "ToolCallStatus",
        "permission option kind": "PermissionOptionKind",
        "tool call content type": "ToolCallContent",
        "content block type": "ContentBlock",
        "diff operation": "DiffChange",
        "diff fileType": "DiffFileType",
        "diff patch format": "DiffPatchFormat",
        "permission subject type": "RequestPermissionSubject",
        "sessionUpdate": "SessionUpdate",
    }
    # The `session` content variant (stable since 2026-11-20) is the schema overlay's.
    overlay = {"tool call content type": {"session"}}
    assert set(KNOWN_V2_VALUES) == set(expected)
    for what, name in expected.items():
        assert KNOWN_V2_VALUES[what] == consts(name) | overlay.get(what, set()), what
    assert consts("SessionUpdate") == KNOWN_V2_SESSION_UPDATES


# --- recreated-after-final ------------------------------------------------------------------


@pytest.mark.parametrize("final", ["completed", "failed", "cancelled"])
@pytest.mark.parametrize("again", ["in_progress", "pending", "paused", "_custom", None])
def test_recreated_after_final_v2(final: str, again: str | None) -> None:
    messages = [tcu(title="t", status=final), tcu(status=again), tcu(status="completed")]
    findings = lint(messages)
    assert codes(findings) == [(2, "$.params.update.status", "recreated-after-final")]
    assert f"{final!r} on line 1" in findings[0].message


def test_recreated_after_final_through_permission_subject() -> None:
    messages = [
        tcu(title="t", status="completed"),
        permission({"toolCallId": "call_1", "status": "pending"}),
        tcu(status="completed"),
    ]
    assert codes(lint(messages)) == [
        (2, "$.params.subject.toolCall.status", "recreated-after-final")
    ]


def test_final_calls_may_be_patched_without_a_status_or_with_another_final() -> None:
    messages = [
        tcu(title="t", status="completed"),
        tcu(content=[text_item("late output")]),
        chunk(),
        tcu(status="failed"),
    ]
    assert lint(messages) == []


def test_recreated_after_final_v1() -> None:
    messages = [
        v1_create(status="pending"),
        tcu(status="completed"),
        tcu(status=None),  # v1 null: unchanged (D8), not a reset
        v1_create(status="in_progress"),
        tcu(status="completed"),
        tcu(status="failed"),
        tcu(status="in_progress"),
        tcu(status="completed"),
    ]
    assert codes(lint(messages, "v1")) == [
        (4, "$.params.update", "recreated-after-final"),
        (7, "$.params.update.status", "recreated-after-final"),
    ]


# --- never-final ----------------------------------------------------------------------------


def test_never_final_reported_at_its_last_update() -> None:
    messages = [
        tcu("call_1", title="a", status="pending"),
        tcu("call_2", title="b", status="in_progress"),
        chunk("call_1"),
        tcu("call_2", status="completed"),
        state("idle", []),
    ]
    findings = lint(messages)
    assert codes(findings) == [(3, "$.params.update", "never-final")]
    assert "'pending'" in findings[0].message


def test_never_final_counts_unknown_and_paused_statuses_as_open() -> None:
    messages = [tcu("a", title="a", status="paused"), tcu("b", title="b", status="_waiting")]
    assert [f.code for f in lint(messages)] == ["never-final", "never-final"]


def test_never_final_only_at_finish() -> None:
    assert lint([tcu(title="t", status="in_progress")], finish=False) == []


def test_never_final_exempt_when_listed_as_background_on_the_final_idle() -> None:
    background = [
        {"type": "tool_call", "toolCallId": "call_1"},
        {"type": "terminal", "terminalId": "t"},
    ]
    messages = [tcu(title="t", status="in_progress"), state("idle", background)]
    assert lint(messages) == []


@pytest.mark.parametrize(
    "last",
    [
        state("running", [{"type": "tool_call", "toolCallId": "call_1"}]),
        state("idle", [{"type": "tool_call", "toolCallId": "other"}]),
        state("idle", [{"type": "tool_call", "toolCallId": "call_1"}, {"type": "tool_call"}]),
        state("idle", "not a list"),
        state("idle"),
        state("idle", [{"type": "tool_call", "toolCallId": "call_1"}], session="sess_2"),
    ],
    ids=["running", "other-id", "malformed-list", "not-a-list", "not-reported", "other-session"],
)
def test_never_final_not_exempt(last: dict[str, Any]) -> None:
    messages = [tcu(title="t", status="in_progress"), last]
    assert codes(lint(messages), "never-final") == [(1, "$.params.update", "never-final")]


def test_never_final_exemption_ends_with_a_later_state() -> None:
    listed = [{"type": "tool_call", "toolCallId": "call_1"}]
    messages = [tcu(title="t", status="in_progress"), state("idle", listed), state("running")]
    assert [f.code for f in lint(messages)] == ["never-final"]


def test_never_final_v1() -> None:
    messages = [v1_create("a", status="pending"), v1_create("b"), tcu("b", status="completed")]
    assert codes(lint(messages, "v1")) == [(1, "$.params.update", "never-final")]


# --- prompt-in-tool-call --------------------------------------------------------------------


def test_prompt_title_in_tool_call_title() -> None:
    call = {"toolCallId": "call_1", "title": "Run this script?", "status": "completed"}
    findings = lint([permission(call, title="Run this script?")])
    assert codes(findings) == [(1, "$.params.subject.toolCall.title", "prompt-in-tool-call")]


def test_prompt_description_inside_text_content_with_other_whitespace() -> None:
    call = {
        "toolCallId": "call_1",
        "title": "Execute setup script",
        "status": "completed",
        "content": [
            {"type": "terminal", "terminalId": "t"},
            text_item("Requesting approval:\nThe agent wants to   execute\tscripts/setup.sh."),
        ],
    }
    description = "The agent wants to execute scripts/setup.sh."
    findings = lint([permission(call, title="Run it?", description=description)])
    assert codes(findings) == [
        (1, "$.params.subject.toolCall.content[1].content.text", "prompt-in-tool-call")
    ]
    assert "description" in findings[0].message


def test_prompt_text_kept_apart_is_clean() -> None:
    call = {
        "toolCallId": "call_1",
        "title": "Execute setup script",
        "status": "completed",
        "content": [text_item("Running scripts/setup.sh")],
    }
    messages = [
        permission(call, title="Run this script?", description="It changes your project."),
        permission(call, title=" ", description=""),  # empty prompt texts are ignored
        permission(None, title="Execute setup script"),  # no subject: nothing to overwrite
    ]
    assert lint(messages) == []


def test_prompt_in_tool_call_is_v2_only() -> None:
    # v1 has no prompt title; its toolCall is where prompts lived.
    call = {"toolCallId": "call_1", "title": "Allow this?", "status": "completed"}
    assert lint([v1_permission(call)], "v1") == []


# --- scoping and batches --------------------------------------------------------------------


def test_state_is_per_session() -> None:
    messages = [
        tcu("call_1", title="t", status="completed"),
        update({"sessionUpdate": "tool_call_update", "toolCallId": "call_1"}, "sess_2"),
        update(
            {"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "status": "pending"},
            "sess_2",
        ),
        update(
            {"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "status": "completed"},
            "sess_2",
        ),
    ]
    # Same id in another session: a new call (missing title there), and no re-creation.
    assert codes(lint(messages)) == [(2, "$.params.update", "missing-title")]


def test_batch_elements_in_order_with_paths() -> None:
    batch = [
        tcu(status="in_progress"),
        {"jsonrpc": "2.0", "method": "session/update", "params": {}},  # unreadable: ignored
        tcu(title="t", status="completed"),
        tcu(status="pending"),
    ]
    linter = ToolCallLinter()
    decoded = decode_message(json.dumps(batch).encode(), version="v2")
    findings = linter.feed(decoded.value, 4, raw=batch) + linter.finish()
    assert codes(findings) == [
        (4, "$[0].params.update", "missing-title"),
        (4, "$[3].params.update.status", "recreated-after-final"),
        (4, "$[3].params.update", "never-final"),
    ]


def test_messages_with_unknown_keys_are_linted() -> None:
    # The codec keeps unknown keys on a same-named subclass of the message type.
    message = {**tcu(status="pending"), "_trace": "abc"}
    message["params"] = {**message["params"], "_extra": 1}
    assert codes(lint([message], finish=False)) == [(1, "$.params.update", "missing-title")]


def test_other_messages_are_ignored() -> None:
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {}},
        {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn"}},
        update({"sessionUpdate": "terminal_update", "terminalId": "t", "command": "ls"}),
    ]
    assert lint(messages) == []


def test_codes_are_documented() -> None:
    assert set(CODES) == {
        "missing-title",
        "custom-value-prefix",
        "recreated-after-final",
        "never-final",
        "prompt-in-tool-call",
        "invalid-base64",
        "lint-limit",
    }
