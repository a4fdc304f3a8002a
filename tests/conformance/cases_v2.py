"""The v2 conformance cases of the fields of a call, written by hand: id, tags, the rule (a key
of ``rules.RULES``) and the messages. Their expected states are computed by the store
(``make_vectors.py``) and reviewed; ``valid=False`` marks a case holding a message the schema
rejects on purpose."""

from __future__ import annotations

from tests.conformance.messages import (
    Case,
    case,
    chunk,
    diff_v2,
    tcu,
    terminal_item,
    text,
)

A, B, C, D, E, F = (text(x) for x in "ABCDEF")

CASES_V2_FIELDS: list[Case] = [
    # --- three-state fields: omitted keeps, null clears, a value replaces
    case(
        "omitted-field-is-unchanged",
        ["three-state"],
        "patch",
        [
            tcu(title="Read config", kind="read", status="pending"),
            tcu(status="in_progress"),
        ],
    ),
    case(
        "null-clears-title",
        ["three-state"],
        "stored-as-received",
        [
            tcu(title="Read", status="in_progress"),
            tcu(title=None),
        ],
    ),
    case(
        "null-resets-kind",
        ["three-state"],
        "kind-status-null",
        [
            tcu(title="Edit", kind="edit"),
            tcu(kind=None),
        ],
    ),
    case(
        "null-resets-status",
        ["three-state"],
        "kind-status-null",
        [
            tcu(title="Run", status="in_progress"),
            tcu(status=None),
        ],
    ),
    case(
        "null-clears-raw-input",
        ["three-state"],
        "raw-null",
        [
            tcu(title="Read", rawInput={"path": "/a"}),
            tcu(rawInput=None),
        ],
    ),
    case(
        "null-clears-raw-output",
        ["three-state"],
        "raw-null",
        [
            tcu(title="Read", rawOutput={"ok": True}),
            tcu(rawOutput=None),
            tcu(rawOutput={"ok": False}),
        ],
    ),
    case(
        "null-title-status-raw-at-once",
        ["three-state"],
        "patch",
        [
            tcu(title="Read", status="in_progress", rawInput={"p": 1}),
            tcu(title=None, status=None, rawInput=None),
        ],
    ),
    case(
        "name-omitted-null-value",
        ["three-state"],
        "name-patch",
        [
            tcu(title="Read", name="read_file"),
            tcu(),
            tcu(name=None),
            tcu(name="write_file"),
        ],
    ),
    case(
        "value-replaces-value",
        ["three-state"],
        "patch",
        [
            tcu(title="Reading"),
            tcu(title="Read config.json", kind="read"),
            tcu(kind="search"),
        ],
    ),
    case(
        "invalid-value-is-no-change",
        ["three-state"],
        "invalid-no-change",
        [
            tcu(title="Read", status="in_progress", kind="read"),
            tcu(title=42, status=7, kind=False),
        ],
        valid=False,
    ),
    case(
        "invalid-collection-is-no-change",
        ["three-state", "arrays-replace"],
        "invalid-no-change",
        [
            tcu(title="Edit", content=[A], locations=[{"path": "/a"}]),
            tcu(content="x", locations=5),
        ],
        valid=False,
    ),
    case(
        "invalid-meta-is-no-change",
        ["three-state", "meta-patch"],
        "invalid-no-change",
        [
            tcu(title="Edit", meta={"a": 1}),
            tcu(meta=False),
        ],
        valid=False,
    ),
    case(
        "empty-title-is-a-value",
        ["three-state"],
        "empty-strings",
        [
            tcu(title="Run"),
            tcu(title=""),
        ],
    ),
    case(
        "capabilities-replaced-whole",
        ["three-state"],
        "kind-status-null",
        [
            tcu(title="Run", capabilities={"cancel": {}}),
            tcu(capabilities={}),
            tcu(capabilities={"cancel": {}}),
            tcu(capabilities=None),
        ],
    ),
    # --- arrays replace
    case(
        "content-array-replaces",
        ["arrays-replace"],
        "patch",
        [
            tcu(title="Edit", content=[A, B]),
            tcu(content=[C]),
        ],
    ),
    case(
        "empty-content-clears",
        ["arrays-replace"],
        "collection-stored",
        [
            tcu(title="Edit", content=[A]),
            tcu(content=[]),
        ],
    ),
    case(
        "null-content-clears",
        ["arrays-replace", "three-state"],
        "collection-stored",
        [
            tcu(title="Edit", content=[A]),
            tcu(content=None),
        ],
    ),
    case(
        "locations-replace",
        ["arrays-replace"],
        "patch",
        [
            tcu(title="Read", locations=[{"path": "/a", "line": 1}, {"path": "/b"}]),
            tcu(locations=[{"path": "/c", "line": 3}]),
        ],
    ),
    case(
        "empty-locations-clears",
        ["arrays-replace"],
        "collection-stored",
        [
            tcu(title="Read", locations=[{"path": "/a"}]),
            tcu(locations=[]),
            tcu(locations=None),
        ],
    ),
    case(
        "omitted-content-keeps",
        ["arrays-replace", "three-state"],
        "patch",
        [
            tcu(title="Edit", content=[A]),
            tcu(status="completed"),
        ],
    ),
    case(
        "replacement-holds-every-variant",
        ["arrays-replace"],
        "patch",
        [
            tcu(title="Edit", content=[A]),
            tcu(content=[diff_v2("/r/new.txt", "hello"), terminal_item("term_1"), B]),
        ],
    ),
    case(
        "bad-item-skipped-rest-kept",
        ["arrays-replace", "unknown"],
        "error-containment",
        [
            tcu(title="Edit", content=[A, {"type": "diff", "path": "/bad"}, B]),
        ],
        valid=False,
    ),
    # --- chunks append, after a replacement too
    case(
        "chunks-append-in-order",
        ["chunks-append"],
        "chunks",
        [
            tcu(title="Run"),
            chunk("call_1", A),
            chunk("call_1", B),
            chunk("call_1", C),
        ],
    ),
    case(
        "chunk-after-replacement-appends",
        ["chunks-append", "arrays-replace"],
        "chunks",
        [
            chunk("call_1", A),
            chunk("call_1", B),
            tcu(content=[C]),
            chunk("call_1", D),
        ],
    ),
    case(
        "chunk-after-empty-content",
        ["chunks-append", "arrays-replace"],
        "collection-stored",
        [
            tcu(title="Run", content=[A]),
            chunk("call_1", B),
            tcu(content=[]),
            chunk("call_1", E),
        ],
    ),
    case(
        "chunk-after-null-content",
        ["chunks-append", "three-state"],
        "collection-stored",
        [
            tcu(title="Run", content=[A]),
            tcu(content=None),
            chunk("call_1", F),
        ],
    ),
    case(
        "replacement-drops-earlier-chunks",
        ["chunks-append", "arrays-replace"],
        "chunks",
        [
            tcu(title="Run", content=[A]),
            chunk("call_1", B),
            chunk("call_1", C),
            tcu(content=[]),
        ],
    ),
    case(
        "chunk-on-unseen-id-creates",
        ["chunks-append", "first-sight"],
        "first-sight",
        [
            chunk("call_9", A),
        ],
    ),
    case(
        "chunk-of-diff-and-terminal-items",
        ["chunks-append"],
        "chunks",
        [
            tcu(title="Edit", kind="edit"),
            chunk("call_1", diff_v2("/r/a.txt", "a")),
            chunk("call_1", terminal_item("term_1")),
        ],
    ),
    case(
        "chunk-does-not-touch-other-fields",
        ["chunks-append", "three-state"],
        "chunks",
        [
            tcu(title="Run", status="completed", kind="execute"),
            chunk("call_1", A),
        ],
    ),
    case(
        "chunks-of-two-calls-stay-apart",
        ["chunks-append", "ordering"],
        "received-order",
        [
            tcu("call_1", title="One"),
            tcu("call_2", title="Two"),
            chunk("call_1", A),
            chunk("call_2", B),
            chunk("call_1", C),
        ],
    ),
    # --- _meta patches
    case(
        "meta-patches-by-key",
        ["meta-patch"],
        "meta",
        [
            tcu(title="Run", meta={"a": 1, "b": {"c": 1}}),
            tcu(meta={"b": {"d": 2}, "a": None, "e": 3}),
        ],
    ),
    case(
        "meta-null-clears-all",
        ["meta-patch", "three-state"],
        "meta",
        [
            tcu(title="Run", meta={"a": 1}),
            tcu(meta=None),
            tcu(meta={"z": None}),
        ],
    ),
    case(
        "meta-null-key-on-new-id-is-absent",
        ["meta-patch", "first-sight"],
        "meta-new-id",
        [
            tcu(title="Run", meta={"z": None, "y": 1}),
        ],
    ),
    case(
        "meta-empty-object-changes-nothing",
        ["meta-patch"],
        "meta-empty",
        [
            tcu(title="Run", meta={"a": 1}),
            tcu(meta={}),
        ],
    ),
    case(
        "meta-empty-object-on-new-id",
        ["meta-patch", "first-sight"],
        "meta-empty",
        [
            tcu(title="Run", meta={}),
        ],
    ),
    case(
        "meta-no-nested-merge",
        ["meta-patch"],
        "meta-nested",
        [
            tcu(title="Run", meta={"vendor": {"x": 1, "y": 2}}),
            tcu(meta={"vendor": {"y": 3}}),
        ],
    ),
    case(
        "meta-omitted-keeps",
        ["meta-patch", "three-state"],
        "meta",
        [
            tcu(title="Run", meta={"a": 1}),
            tcu(status="in_progress"),
        ],
    ),
    case(
        "chunk-meta-is-chunk-scoped",
        ["meta-patch", "chunks-append"],
        "meta",
        [
            tcu(title="Run", meta={"a": 1}),
            chunk("call_1", A, meta={"x": 1}),
        ],
    ),
    case(
        "chunk-meta-on-new-id-is-no-call-meta",
        ["meta-patch", "first-sight"],
        "meta",
        [
            chunk("call_1", A, meta={"x": 1}),
        ],
    ),
    case(
        "item-meta-is-kept-in-the-item",
        ["meta-patch", "arrays-replace"],
        "meta",
        [
            tcu(title="Run", meta={"a": 1}),
            tcu(content=[{**A, "_meta": {"item": True}}]),
        ],
    ),
    # --- first sight
    case(
        "id-alone-creates-with-defaults",
        ["first-sight"],
        "first-sight",
        [
            tcu(),
        ],
    ),
    case(
        "update-before-create-creates",
        ["first-sight"],
        "upsert",
        [
            tcu(status="in_progress", rawInput={"cmd": "ls"}),
            tcu(title="List files", kind="execute"),
        ],
    ),
    case(
        "first-sight-may-be-final",
        ["first-sight"],
        "upsert",
        [
            tcu(title="Done already", status="completed", content=[A]),
        ],
    ),
    case(
        "no-placeholder-title-is-stored",
        ["first-sight", "three-state"],
        "first-sight",
        [
            chunk("call_1", A),
            tcu(status="in_progress"),
            tcu(title="Run tests"),
        ],
    ),
    case(
        "empty-call-id-is-an-id",
        ["first-sight"],
        "empty-strings",
        [
            tcu("", title="Nameless"),
        ],
    ),
    case(
        "same-id-in-two-sessions",
        ["first-sight", "ordering"],
        "upsert",
        [
            tcu("call_1", "sess_1", title="One"),
            tcu("call_1", "sess_2", title="Two"),
            tcu("call_1", "sess_1", status="completed"),
        ],
    ),
]
