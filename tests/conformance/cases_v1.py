"""The v1 conformance cases, written by hand (see ``cases_v2``). Each starts with an
``initialize`` exchange of ``protocolVersion`` 1, so that any reducer can tell the version."""

from __future__ import annotations

from typing import Any

from tests.conformance.messages import (
    Case,
    permission_v1,
    selected,
    session_cancel,
    tcu,
    text,
    tool_call,
)
from tests.conformance.messages import case as v2_or_v1_case


def case(case_id: str, tags: list[str], rule: str, messages: list[Any], **options: Any) -> Case:
    return v2_or_v1_case(case_id, tags, rule, messages, protocol=1, **options)


A, B, C = (text(x) for x in "ABC")
DIFF_V1 = {"type": "diff", "path": "/r/a.txt", "oldText": "old\n", "newText": "new\n"}

CASES_V1: list[Case] = [
    case(
        "v1-tool-call-creates",
        ["v1-upsert", "first-sight"],
        "v1-mapping",
        [
            tool_call(
                title="Read config",
                kind="read",
                status="pending",
                content=[A],
                locations=[{"path": "/a", "line": 2}],
                rawInput={"path": "/a"},
            ),
        ],
    ),
    case(
        "v1-update-for-unseen-id-creates",
        ["v1-upsert", "first-sight"],
        "v1-store",
        [
            tcu(status="in_progress", title="Run"),
        ],
    ),
    case(
        "v1-null-means-unchanged",
        ["v1-upsert", "three-state"],
        "v1-null",
        [
            tool_call(
                title="Edit", kind="edit", status="in_progress", content=[A], rawInput={"p": 1}
            ),
            tcu(title=None, content=None, kind=None, rawInput=None, status="completed"),
        ],
    ),
    case(
        "v1-repeated-tool-call-merges",
        ["v1-upsert"],
        "v1-store",
        [
            tool_call(title="Edit"),
            tcu(content=[DIFF_V1]),
            tool_call(title="Edit main.py", kind="edit", rawInput={"path": "main.py"}),
        ],
    ),
    case(
        "v1-repeat-defaults-are-omitted",
        ["v1-upsert"],
        "v1-repeat",
        [
            tool_call(
                title="Run",
                kind="execute",
                status="in_progress",
                content=[A],
                locations=[{"path": "/w"}],
            ),
            tool_call(title="Run tests", kind="other", status="pending", content=[], locations=[]),
        ],
    ),
    case(
        "v1-update-content-replaces",
        ["v1-upsert", "arrays-replace"],
        "v1-store",
        [
            tool_call(title="Run", content=[A, B]),
            tcu(content=[C]),
            tcu(content=[]),
        ],
    ),
    case(
        "v1-update-locations-replace",
        ["v1-upsert", "arrays-replace"],
        "v1-store",
        [
            tool_call(title="Read", locations=[{"path": "/a"}, {"path": "/b"}]),
            tcu(locations=[{"path": "/c"}]),
        ],
    ),
    case(
        "v1-status-progression",
        ["v1-upsert", "ordering"],
        "v1-store",
        [
            tool_call(title="Run", status="pending"),
            tcu(status="in_progress"),
            tcu(status="completed", rawOutput={"ok": True}),
        ],
    ),
    case(
        "v1-diff-becomes-a-v2-diff",
        ["v1-upsert"],
        "v1-diff",
        [
            tool_call(title="Edit", kind="edit", content=[DIFF_V1]),
        ],
    ),
    case(
        "v1-new-file-diff-is-an-add",
        ["v1-upsert"],
        "v1-diff",
        [
            tool_call(
                title="Create",
                kind="edit",
                content=[{"type": "diff", "path": "/r/n.txt", "newText": "a\nb\n"}],
            ),
        ],
    ),
    case(
        "v1-unknown-status-not-applied",
        ["v1-upsert", "unknown"],
        "v1-unknown-enum",
        [
            tool_call(title="Run", kind="_custom", status="cancelled"),
        ],
        valid=False,
    ),
    case(
        "v1-unknown-status-on-update",
        ["v1-upsert", "unknown"],
        "v1-unknown-enum",
        [
            tool_call(title="Run", status="in_progress"),
            tcu(status="paused"),
            tcu(status="completed"),
        ],
        valid=False,
    ),
    case(
        "v1-meta-merges-by-key",
        ["v1-upsert", "meta-patch"],
        "meta-v1",
        [
            tool_call(title="Run", meta={"a": 1, "b": 2}),
            tcu(meta={"b": None, "c": 3}),
        ],
    ),
    case(
        "v1-meta-null-is-unchanged",
        ["v1-upsert", "meta-patch"],
        "meta-v1",
        [
            tool_call(title="Run", meta={"a": 1}),
            tcu(meta=None),
        ],
    ),
    case(
        "v1-name-null-is-unchanged",
        ["v1-upsert", "three-state"],
        "v1-null",
        [
            tool_call(title="Read", name="read_file"),
            tcu(name=None),
            tcu(name="read_many"),
        ],
    ),
    case(
        "v1-repeated-tool-call-after-final",
        ["v1-upsert", "cancellation"],
        "reused-ids",
        [
            tool_call(title="bash", status="completed", content=[A]),
            tool_call(title="bash", status="in_progress"),
        ],
    ),
    case(
        "v1-permission-tool-call-patches",
        ["v1-upsert", "permission-subject"],
        "permission-v1",
        [
            tool_call(title="Edit", kind="edit", status="pending"),
            permission_v1({"toolCallId": "call_1", "status": "in_progress", "title": "Edit a.txt"}),
            selected(),
        ],
    ),
    case(
        "v1-permission-tool-call-creates",
        ["v1-upsert", "permission-subject", "first-sight"],
        "permission-v1",
        [
            permission_v1({"toolCallId": "call_2", "title": "Delete b.txt", "kind": "delete"}),
        ],
    ),
    case(
        "v1-permission-null-is-unchanged",
        ["v1-upsert", "permission-subject"],
        "permission-v1",
        [
            tool_call(title="Edit", kind="edit", rawInput={"p": 1}),
            permission_v1({"toolCallId": "call_1", "kind": None, "rawInput": None, "title": None}),
        ],
    ),
    case(
        "v1-session-cancel-changes-no-exported-state",
        ["v1-upsert", "cancellation"],
        "cancel-overlay",
        [
            tool_call(title="Run", status="in_progress"),
            session_cancel(),
            tcu(status="failed"),
        ],
    ),
    case(
        "v1-two-calls-in-first-seen-order",
        ["v1-upsert", "ordering"],
        "received-order",
        [
            tool_call("call_b", title="B"),
            tool_call("call_a", title="A"),
            tcu("call_b", status="completed"),
        ],
    ),
    case(
        "v1-unknown-key-not-in-the-v2-state",
        ["v1-upsert", "unknown"],
        "unknown-keys-across",
        [
            tool_call(title="Run", _vendor={"x": 1}),
            tcu(_vendor={"x": 2}),
        ],
    ),
]
