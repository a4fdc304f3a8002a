"""More conformance cases, v2 and v1, written by hand as ``cases_v2`` is: locations, exit
statuses, the v1 ``_meta`` terminal extension, batches holding requests, content blocks."""

from __future__ import annotations

from typing import Any

from tests.conformance.messages import (
    Case,
    case,
    chunk,
    output,
    permission,
    permission_v1,
    session_cancel,
    tcu,
    terminal,
    terminal_item,
    text,
    tool_call,
)

A, B = text("A"), text("B")
LINK = {
    "type": "content",
    "content": {"type": "resource_link", "uri": "file:///r/a.txt", "name": "a.txt"},
}


def v1(case_id: str, tags: list[str], rule: str, messages: list[Any], **options: Any) -> Case:
    return case(case_id, tags, rule, messages, protocol=1, **options)


CASES_MORE: list[Case] = [
    case(
        "location-line-zero-keeps-the-path",
        ["three-state", "arrays-replace"],
        "line-zero",
        [tcu(title="Read", locations=[{"path": "/a", "line": 0}, {"path": "/b", "line": 5}])],
        valid=False,
    ),
    v1(
        "v1-location-line-zero-drops-the-line",
        ["v1-upsert", "arrays-replace"],
        "line-zero",
        [tool_call(title="Read", locations=[{"path": "/a", "line": 0}])],
    ),
    case(
        "terminal-empty-exit-status-is-exited",
        ["terminals"],
        "terminals",
        [terminal(command="true"), terminal(exitStatus={})],
    ),
    case(
        "terminal-exit-status-replaced-whole",
        ["terminals", "three-state"],
        "patch",
        [
            terminal(command="make", exitStatus={"exitCode": 2}),
            terminal(exitStatus={"signal": "SIGKILL"}),
            terminal(exitStatus=None),
        ],
    ),
    case(
        "terminal-unknown-keys-kept-and-patched",
        ["unknown", "terminals", "three-state"],
        "unknown-keys",
        [
            terminal(command="ls", futureKey={"a": 1}, _meta={"m": 1}),
            terminal(futureKey=None, otherKey=[2]),
            terminal(otherKey={"b": 3}),
        ],
    ),
    case(
        "terminal-output-keeps-its-meta-through-chunks",
        ["unknown", "terminals", "chunks-append"],
        "terminal-output-object",
        [
            terminal(output={"data": "aGk=", "_meta": {"tty": True}, "encoding": "utf-8"}),
            output("term_1", b"!"),
            terminal(output={"data": "bmV3"}),
            terminal(output={"data": "eA==", "_meta": None, "z": None}),
            terminal(output=None),
            output("term_1", b"y"),
        ],
    ),
    case(
        "batch-with-a-permission-request",
        ["ordering", "permission-subject"],
        "batch-order",
        [
            [
                tcu(title="Edit", status="pending"),
                permission({"toolCallId": "call_1", "status": "in_progress"}),
                tcu(status="completed"),
            ]
        ],
    ),
    case(
        "batch-chunks-of-two-calls",
        ["ordering", "chunks-append"],
        "batch-order",
        [
            [chunk("call_1", A), chunk("call_2", B), chunk("call_1", B)],
            tcu("call_2", content=[]),
        ],
    ),
    case(
        "content-blocks-kept-as-sent",
        ["arrays-replace", "chunks-append"],
        "chunks",
        [tcu(title="Read", content=[LINK]), chunk("call_1", {**A, "_meta": {"chunk": 1}})],
    ),
    case(
        "permission-subject-meta-patches",
        ["permission-subject", "meta-patch"],
        "permission-subject",
        [
            tcu(title="Edit", meta={"a": 1, "b": 2}),
            permission({"toolCallId": "call_1", "_meta": {"a": None, "c": 3}}),
        ],
    ),
    case(
        "chunks-then-status-keep-content",
        ["chunks-append", "cancellation"],
        "chunks",
        [
            tcu(title="Run", status="in_progress"),
            chunk("call_1", A),
            session_cancel(),
            chunk("call_1", B),
            tcu(status="cancelled"),
        ],
    ),
    v1(
        "v1-meta-terminal-extension",
        ["v1-upsert", "terminals"],
        "v1-terminal-meta",
        [
            tool_call(
                title="Run tests",
                kind="execute",
                status="in_progress",
                content=[terminal_item("term_9")],
                meta={"terminal_info": {"terminal_id": "term_9", "cwd": "/w"}},
            ),
            tcu(meta={"terminal_output_delta": {"terminal_id": "term_9", "data": "ok\n"}}),
            tcu(
                status="completed",
                meta={"terminal_exit": {"terminal_id": "term_9", "exit_code": 0, "signal": None}},
            ),
        ],
    ),
    v1(
        "v1-status-after-final-is-applied",
        ["v1-upsert", "ordering"],
        "any-status",
        [tool_call(title="Run", status="completed"), tcu(status="in_progress")],
    ),
    v1(
        "v1-permission-after-cancel",
        ["v1-upsert", "cancellation", "permission-subject"],
        "cancel-overlay",
        [
            tool_call(title="Edit", status="pending"),
            permission_v1({"toolCallId": "call_1", "status": "pending"}),
            session_cancel(),
            {"jsonrpc": "2.0", "id": 7, "result": {"outcome": {"outcome": "cancelled"}}},
            tcu(status="failed"),
        ],
    ),
    v1(
        "v1-update-title-and-kind-replace",
        ["v1-upsert", "three-state"],
        "v1-store",
        [tool_call(title="Run", kind="execute"), tcu(title="Run tests", kind="think")],
    ),
    case(
        "update-only-unknown-fields-creates",
        ["first-sight", "unknown"],
        "upsert",
        [tcu(_vendorOnly=1)],
    ),
    case(
        "location-without-path-skipped",
        ["arrays-replace", "unknown"],
        "error-containment",
        [tcu(title="Read", locations=[{"path": "/ok", "line": 3}, {"line": 4}])],
        valid=False,
    ),
    case(
        "open-enum-value-without-prefix-kept",
        ["unknown", "three-state"],
        "open-enums",
        [tcu(title="Review", kind="review", status="deferred"), tcu(kind="read")],
    ),
    case(
        "diff-without-patch-kept",
        ["arrays-replace"],
        "tagged-unions",
        [
            tcu(
                title="Move",
                kind="move",
                content=[
                    {
                        "type": "diff",
                        "changes": [
                            {"operation": "move", "oldPath": "/r/a", "path": "/r/b"},
                        ],
                    }
                ],
            )
        ],
    ),
    case(
        "subject-session-update-key-dropped",
        ["permission-subject", "unknown"],
        "permission-subject",
        [
            permission(
                {"toolCallId": "call_1", "title": "Edit", "sessionUpdate": "tool_call_update"}
            )
        ],
    ),
    v1(
        "v1-meta-terminal-whole-output",
        ["v1-upsert", "terminals"],
        "v1-terminal-meta",
        [
            tool_call(
                title="Run",
                content=[terminal_item("term_9")],
                meta={"terminal_info": {"terminal_id": "term_9"}},
            ),
            tcu(meta={"terminal_output": {"terminal_id": "term_9", "data": "one\n"}}),
            tcu(meta={"terminal_output": {"terminal_id": "term_9", "data": "one\ntwo\n"}}),
        ],
    ),
]
