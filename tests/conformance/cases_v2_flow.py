"""The v2 conformance cases of what surrounds the fields (permissions, terminals, unknown
updates, ordering, cancellation), written by hand as ``cases_v2`` is."""

from __future__ import annotations

from tests.conformance.messages import (
    Case,
    answer,
    cancelled_answer,
    case,
    chunk,
    initialize,
    output,
    permission,
    selected,
    session_cancel,
    state,
    tcu,
    terminal,
    terminal_item,
    text,
    tool_call,
    tool_call_cancel,
    update,
)

A, B, C, D, E, F = (text(x) for x in "ABCDEF")

CASES_V2_FLOW: list[Case] = [
    # --- permission subjects
    case(
        "permission-subject-patches-the-call",
        ["permission-subject"],
        "permission-subject",
        [
            tcu(title="Edit main.py", kind="edit", status="pending"),
            permission(
                {"toolCallId": "call_1", "status": "in_progress", "title": "Edit src/main.py"}
            ),
        ],
    ),
    case(
        "permission-subject-creates-the-call",
        ["permission-subject", "first-sight"],
        "permission-subject",
        [
            permission({"toolCallId": "call_1", "title": "Edit", "status": "pending"}),
        ],
    ),
    case(
        "permission-title-is-not-stored",
        ["permission-subject"],
        "permission-prompt",
        [
            permission({"toolCallId": "call_1"}, title="Approve?", description="Allow edits?"),
        ],
    ),
    case(
        "permission-subject-null-clears",
        ["permission-subject", "three-state"],
        "permission-subject",
        [
            tcu(title="Edit", kind="edit", rawInput={"p": 1}),
            permission({"toolCallId": "call_1", "kind": None, "rawInput": None}),
        ],
    ),
    case(
        "permission-subject-in-stream-order",
        ["permission-subject", "ordering"],
        "permission-subject",
        [
            tcu(title="Edit", status="pending"),
            permission({"toolCallId": "call_1", "status": "in_progress"}),
            tcu(status="completed"),
        ],
    ),
    case(
        "permission-answer-changes-nothing",
        ["permission-subject"],
        "permission-prompt",
        [
            permission({"toolCallId": "call_1", "title": "Edit"}),
            selected(),
        ],
    ),
    case(
        "command-subject-changes-nothing",
        ["permission-subject"],
        "permission-other-subject",
        [
            tcu(title="Run"),
            permission(None, raw_subject={"type": "command", "command": "ls", "cwd": "/w"}),
        ],
    ),
    case(
        "unknown-subject-changes-nothing",
        ["permission-subject", "unknown"],
        "permission-other-subject",
        [
            permission(None, raw_subject={"type": "_network", "host": "example.org"}),
        ],
    ),
    case(
        "subjectless-request-changes-nothing",
        ["permission-subject"],
        "permission-other-subject",
        [
            tcu(title="Run"),
            permission(None),
        ],
    ),
    case(
        "permission-subject-content-replaces",
        ["permission-subject", "arrays-replace"],
        "permission-subject",
        [
            tcu(title="Edit", content=[A]),
            chunk("call_1", B),
            permission({"toolCallId": "call_1", "content": [C]}),
            chunk("call_1", D),
        ],
    ),
    # --- terminals
    case(
        "terminal-update-creates",
        ["terminals"],
        "terminal-unseen",
        [
            terminal(command="npm test", cwd="/w"),
        ],
    ),
    case(
        "terminal-output-then-chunk",
        ["terminals"],
        "terminals",
        [
            terminal(command="echo", output=b"old"),
            output("term_1", b"new"),
        ],
    ),
    case(
        "terminal-output-replaces-bytes",
        ["terminals", "three-state"],
        "terminals",
        [
            terminal(command="cargo test", cwd="/home/user/project", output=b"old"),
            terminal(command=None, output=b"new", exitStatus={"signal": "SIGTERM"}),
        ],
    ),
    case(
        "terminal-chunk-splits-utf8",
        ["terminals"],
        "terminals",
        [
            output("term_1", "8J+a"),
            output("term_1", "gA=="),
        ],
    ),
    case(
        "terminal-bad-chunk-dropped",
        ["terminals"],
        "terminal-bad-chunk",
        [
            output("term_1", b"ok"),
            output("term_1", "!!notbase64"),
        ],
    ),
    case(
        "terminal-bad-snapshot-is-no-change",
        ["terminals"],
        "terminal-bad-snapshot",
        [
            terminal(command="make", output=b"built"),
            terminal(output={"data": "%%%"}),
        ],
    ),
    case(
        "terminal-chunk-on-unseen-creates",
        ["terminals", "first-sight"],
        "terminal-unseen",
        [
            output("term_7", b"hello\n"),
        ],
    ),
    case(
        "terminal-exit-status",
        ["terminals"],
        "terminals",
        [
            terminal(command="false"),
            terminal(exitStatus={"exitCode": -1073741510}),
        ],
    ),
    case(
        "terminal-null-output-clears",
        ["terminals", "three-state"],
        "terminals",
        [
            terminal(command="ls", output=b"a b"),
            terminal(output=None),
            output("term_1", b"c"),
        ],
    ),
    case(
        "terminal-reference-before-state",
        ["terminals", "ordering"],
        "terminal-reference",
        [
            tcu(title="Run", content=[terminal_item("term_u")]),
            terminal("term_u", command="ls"),
            output("term_u", b"x"),
        ],
    ),
    case(
        "terminal-exit-independent-of-call",
        ["terminals"],
        "terminals",
        [
            tcu(title="Run", status="completed", content=[terminal_item("term_1")]),
            terminal(command="sleep 9"),
            terminal(exitStatus={"exitCode": 0}),
        ],
    ),
    case(
        "terminal-id-is-not-a-call-id",
        ["terminals"],
        "terminal-ids",
        [
            tcu("shared", title="Run"),
            terminal("shared", command="ls"),
        ],
    ),
    case(
        "terminal-invalid-size-is-no-change",
        ["terminals"],
        "invalid-no-change",
        [
            terminal(command="top", size={"cols": 80, "rows": 24}),
            terminal(size={"cols": 0, "rows": 24}),
        ],
        valid=False,
    ),
    case(
        "terminal-meta-patches",
        ["terminals", "meta-patch"],
        "meta",
        [
            terminal(command="ls", meta={"a": 1, "b": 2}),
            terminal(meta={"a": None}),
        ],
    ),
    # --- unknown fields and variants
    case(
        "unknown-update-is-ignored",
        ["unknown"],
        "ignored-updates",
        [
            tcu(title="Run"),
            update({"sessionUpdate": "_status_badge", "label": "Indexing", "progress": 0.5}),
        ],
    ),
    case(
        "v1-tool-call-on-v2-is-ignored",
        ["unknown"],
        "v1-only-on-v2",
        [
            *initialize(2),
            tool_call(title="Edit"),
            tcu(title="Edit", status="pending"),
        ],
    ),
    case(
        "unknown-content-item-kept",
        ["unknown", "arrays-replace"],
        "tagged-unions",
        [
            tcu(title="Chart", content=[{"type": "_chart", "title": "Tests", "data": [1, 2, 3]}]),
        ],
    ),
    case(
        "unknown-chunk-item-appended",
        ["unknown", "chunks-append"],
        "tagged-unions",
        [
            tcu(title="Chart", content=[A]),
            chunk("call_1", {"type": "_chart", "data": [1]}),
        ],
    ),
    case(
        "unknown-kind-and-status-kept",
        ["unknown", "three-state"],
        "open-enums",
        [
            tcu(title="Review", kind="_review", status="deferred"),
            tcu(status="paused"),
        ],
    ),
    case(
        "unknown-key-kept-and-patched",
        ["unknown", "three-state"],
        "unknown-keys",
        [
            tcu(title="Run", _vendorField={"a": 1}),
            tcu(_vendorField={"b": 2}),
            tcu(_vendorField=None),
        ],
    ),
    case(
        "other-updates-change-nothing",
        ["unknown"],
        "ignored-updates",
        [
            tcu(title="Run"),
            update(
                {
                    "sessionUpdate": "agent_message_chunk",
                    "messageId": "m1",
                    "content": {"type": "text", "text": "hi"},
                }
            ),
            state("idle"),
        ],
    ),
    case(
        "unknown-method-changes-nothing",
        ["unknown"],
        "ignored-updates",
        [
            tcu(title="Run"),
            {"jsonrpc": "2.0", "method": "_vendor/ping", "params": {"sessionId": "sess_1"}},
        ],
    ),
    case(
        "chunk-with-item-error-is-dropped",
        ["unknown", "chunks-append"],
        "error-containment",
        [
            tcu(title="Run", content=[A]),
            chunk("call_1", {"type": "diff"}),
        ],
        valid=False,
    ),
    case(
        "update-without-id-is-dropped",
        ["unknown"],
        "error-containment",
        [
            tcu(title="Run"),
            update({"sessionUpdate": "tool_call_update", "title": "Lost"}),
        ],
        valid=False,
    ),
    # --- ordering
    case(
        "batch-applied-in-array-order",
        ["ordering", "chunks-append"],
        "batch-order",
        [
            tcu(title="Run"),
            [tcu(content=[A]), chunk("call_1", B), tcu(content=[C]), chunk("call_1", D)],
        ],
    ),
    case(
        "batch-bad-element-costs-nothing-else",
        ["ordering"],
        "batch-order",
        [
            [
                tcu(title="Run"),
                update({"sessionUpdate": "tool_call_update"}),
                tcu(status="completed"),
            ],
        ],
        valid=False,
    ),
    case(
        "last-writer-wins",
        ["ordering"],
        "received-order",
        [
            tcu(title="First"),
            tcu(title="Second"),
            tcu(title="Third", status="in_progress"),
        ],
    ),
    case(
        "calls-in-first-seen-order",
        ["ordering", "first-sight"],
        "received-order",
        [
            tcu("call_b", title="B"),
            tcu("call_a", title="A"),
            tcu("call_b", status="completed"),
            chunk("call_c", A),
        ],
    ),
    case(
        "any-status-transition-applies",
        ["ordering"],
        "any-status",
        [
            tcu(title="Run", status="paused"),
            tcu(status="in_progress"),
            tcu(status="completed"),
            tcu(status="failed"),
        ],
    ),
    # --- cancellation
    case(
        "session-cancel-changes-no-exported-state",
        ["cancellation"],
        "cancel-overlay",
        [
            tcu(title="Run", status="in_progress"),
            session_cancel(),
        ],
    ),
    case(
        "agent-final-after-cancel-applies",
        ["cancellation"],
        "cancel-overlay",
        [
            tcu(title="Run", status="in_progress"),
            session_cancel(),
            tcu(status="cancelled"),
        ],
    ),
    case(
        "late-chunk-keeps-final-status",
        ["cancellation", "chunks-append"],
        "no-invented-state",
        [
            tcu(title="Run", status="in_progress", content=[A]),
            tcu(status="cancelled"),
            chunk("call_1", B),
        ],
    ),
    case(
        "late-update-without-status-keeps-final",
        ["cancellation", "three-state"],
        "no-invented-state",
        [
            tcu(title="Run", status="in_progress"),
            tcu(status="completed"),
            tcu(title="Ran tests", rawOutput={"passed": 3}),
        ],
    ),
    case(
        "late-status-after-final-is-applied",
        ["cancellation", "ordering"],
        "any-status",
        [
            tcu(title="Run", status="cancelled"),
            tcu(status="in_progress"),
        ],
    ),
    case(
        "tool-call-cancel-changes-no-exported-state",
        ["cancellation"],
        "cancel-overlay",
        [
            tcu(title="Run", status="in_progress", capabilities={"cancel": {}}),
            tool_call_cancel("call_1"),
            answer(9),
            tcu(status="cancelled"),
        ],
    ),
    case(
        "cancelled-permission-changes-nothing",
        ["cancellation", "permission-subject"],
        "cancel-overlay",
        [
            permission({"toolCallId": "call_1", "title": "Edit", "status": "pending"}),
            session_cancel(),
            cancelled_answer(),
        ],
    ),
    case(
        "cancel-spares-background-work",
        ["cancellation"],
        "cancel-overlay",
        [
            tcu(title="Serve", status="in_progress"),
            state("running", background=["call_1"]),
            session_cancel(),
            tcu(status="completed"),
        ],
    ),
    case(
        "reused-id-after-final-is-patched",
        ["cancellation", "ordering"],
        "reused-ids",
        [
            tcu(title="bash", status="completed", content=[A]),
            tcu(title="bash", status="in_progress"),
            chunk("call_1", B),
        ],
    ),
]
