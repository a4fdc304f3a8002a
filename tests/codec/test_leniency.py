"""Leniency rules (D46 (schema markers to field leniency), D11) row by row, and bad input of every
kind.

Notation of D46 (field leniency): U = behaves as omitted (``UNSET``, never ``None``), N = ``null``
(``None``), V = the value, ERR = item error (``DecodeError`` for the payload, or the element is
skipped inside a skip-invalid-items array). Every salvage must come with a ``Diagnostic`` at the
right JSON path.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, cast

import pytest

from acp_toolcalls import (
    UNSET,
    Decoded,
    DecodeError,
    EncodeError,
    JsonRpcMessage,
    decode,
    decode_message,
    encode,
    v1,
    v2,
)
from acp_toolcalls.check import validate_payload

SchemaCheck = Callable[..., None]  # the `schema_valid` fixture of conftest.py

SCHEMA_DEF: dict[Any, str] = {
    v2.ToolCallUpdate: "ToolCallUpdate",
    v2.ToolCallCapabilities: "ToolCallCapabilities",
    v2.ToolCallContentChunk: "SessionUpdate",
    v2.ToolCallContent: "ToolCallContent",
    v2.Content: "ToolCallContent",
    v2.Diff: "ToolCallContent",
    v2.Terminal: "ToolCallContent",
    v2.DiffChange: "DiffChange",
    v2.ToolCallLocation: "ToolCallLocation",
    v2.TerminalUpdate: "SessionUpdate",
    v2.TerminalExitStatus: "TerminalExitStatus",
    v2.TerminalOutputChunk: "SessionUpdate",
    v2.RequestPermissionRequest: "RequestPermissionRequest",
    v2.RequestPermissionResponse: "RequestPermissionResponse",
}
"""The v2 ``$defs`` entry each decoded type is checked against after encoding."""


def assert_valid(value: Any, tp: Any) -> None:
    violations = validate_payload(value, SCHEMA_DEF[tp], "v2")
    assert violations == [], [str(v) for v in violations]


MISSING = object()
"""Marks a key that is left out of the input."""


def dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def with_field(base: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    out = dict(base)
    if value is MISSING:
        out.pop(key, None)
    else:
        out[key] = value
    return out


def read(tp: Any, data: dict[str, Any]) -> Decoded[Any]:
    """Decode through bytes and through a dict; both must agree."""
    from_bytes = decode(dumps(data), tp)
    from_dict = decode(json.loads(dumps(data)), tp)
    assert from_bytes.value == from_dict.value
    assert from_bytes.diagnostics == from_dict.diagnostics
    return from_bytes


U = "U"  # behaves as omitted: UNSET, one diagnostic at the field's path (for a bad value)
ERR = "ERR"  # the payload fails with a DecodeError at that path


class Row:
    """One cell of the 5.7 table: ``tp`` read from ``base`` with ``key`` set to ``value``."""

    def __init__(
        self,
        tp: Any,
        base: dict[str, Any],
        key: str,
        value: Any,
        expected: Any,
        attr: str | None = None,
        path: str | None = None,
        def_name: str | None = None,
    ) -> None:
        self.tp, self.base, self.key, self.value = tp, base, key, value
        self.expected = expected
        self.attr = attr
        self.path = path or f"$.{key}"
        self.def_name = def_name


TCU = {"toolCallId": "a"}
CHUNK = {
    "sessionUpdate": "tool_call_content_chunk",
    "toolCallId": "a",
    "content": {"type": "terminal", "terminalId": "t"},
}
TEXT_ITEM = {"type": "content", "content": {"type": "text", "text": "x"}}
DIFF = {"type": "diff", "changes": [{"operation": "modify", "path": "/a"}]}
LOCATION = {"path": "/a", "line": 3}
TERMINAL_UPDATE = {"sessionUpdate": "terminal_update", "terminalId": "t"}
OUTPUT_CHUNK = {"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": "eA=="}
OPTION = {"optionId": "o", "name": "O", "kind": "allow_once"}
REQUEST = {"sessionId": "s", "title": "Allow?", "options": [OPTION]}
RESPONSE = {"outcome": {"outcome": "cancelled"}}
CAPS: dict[str, Any] = {"cancel": {}}


def _rows() -> list[Any]:
    rows: list[Any] = []
    value: object  # each loop below reads its own mix of JSON values
    bad: object

    def add(row_id: str, row: Row) -> None:
        rows.append(pytest.param(row, id=row_id))

    tcu = v2.ToolCallUpdate
    # ToolCallUpdate.toolCallId: ERR / ERR / ERR
    for name, value in (("missing", MISSING), ("null", None), ("int", 5), ("list", ["a"])):
        add(
            f"TCU.toolCallId-{name}",
            Row(tcu, TCU, "toolCallId", value, ERR, path="$" if value is MISSING else None),
        )
    # name, title: U / N / U
    for key in ("name", "title"):
        add(f"TCU.{key}-missing", Row(tcu, TCU, key, MISSING, UNSET, key))
        add(f"TCU.{key}-null", Row(tcu, TCU, key, None, None, key))
        add(f"TCU.{key}-value", Row(tcu, TCU, key, "x", "x", key))
        add(f"TCU.{key}-empty", Row(tcu, TCU, key, "", "", key))  # D24: accepted
        for bad_name, bad in (("int", 42), ("bool", True), ("list", []), ("object", {})):
            add(f"TCU.{key}-{bad_name}", Row(tcu, TCU, key, bad, U, key))
    # kind, status: U / N / U (non-string); any string is V
    for key in ("kind", "status"):
        add(f"TCU.{key}-missing", Row(tcu, TCU, key, MISSING, UNSET, key))
        add(f"TCU.{key}-null", Row(tcu, TCU, key, None, None, key))
        for value in ("read" if key == "kind" else "paused", "_custom", "future_value", ""):
            add(f"TCU.{key}-{value or 'empty'}", Row(tcu, TCU, key, value, value, key))
        for bad_name, bad in (("int", 7), ("object", {"v": "read"}), ("list", ["read"])):
            add(f"TCU.{key}-{bad_name}", Row(tcu, TCU, key, bad, U, key))
    # content, locations: U / N / U (non-array); [] is V
    for key in ("content", "locations"):
        add(f"TCU.{key}-missing", Row(tcu, TCU, key, MISSING, UNSET, key))
        add(f"TCU.{key}-null", Row(tcu, TCU, key, None, None, key))
        add(f"TCU.{key}-empty", Row(tcu, TCU, key, [], [], key))
        for bad_name, bad in (("string", "x"), ("object", TEXT_ITEM), ("int", 1)):
            add(f"TCU.{key}-{bad_name}", Row(tcu, TCU, key, bad, U, key))
    # rawInput, rawOutput: U / N / never invalid (any JSON is V)
    for key, attr in (("rawInput", "raw_input"), ("rawOutput", "raw_output")):
        add(f"TCU.{key}-missing", Row(tcu, TCU, key, MISSING, UNSET, attr))
        add(f"TCU.{key}-null", Row(tcu, TCU, key, None, None, attr))
        for name, value in (
            ("zero", 0),
            ("false", False),
            ("empty-string", ""),
            ("empty-list", []),
            ("empty-object", {}),
            ("nested", {"a": [1, None, {"b": "c"}]}),
            ("float", 1.5),
            ("string", "output"),
            ("big-int", 2**64 + 1),
        ):
            add(f"TCU.{key}-{name}", Row(tcu, TCU, key, value, value, attr))
    # capabilities: U / N / U; inner cancel invalid -> unsupported
    add("TCU.capabilities-missing", Row(tcu, TCU, "capabilities", MISSING, UNSET, "capabilities"))
    add("TCU.capabilities-null", Row(tcu, TCU, "capabilities", None, None, "capabilities"))
    add(
        "TCU.capabilities-empty",
        Row(tcu, TCU, "capabilities", {}, v2.ToolCallCapabilities(), "capabilities"),
    )
    for bad_name, bad in (("int", 5), ("list", [CAPS]), ("string", "cancel"), ("true", True)):
        add(f"TCU.capabilities-{bad_name}", Row(tcu, TCU, "capabilities", bad, U, "capabilities"))
    caps = v2.ToolCallCapabilities
    for bad_name, bad in (("int", 5), ("list", []), ("true", True), ("string", "yes")):
        add(
            f"ToolCallCapabilities.cancel-{bad_name}",
            Row(caps, {}, "cancel", bad, U, "cancel"),
        )
    add(
        "ToolCallCapabilities.cancel-empty",
        Row(caps, {}, "cancel", {}, v2.ToolCallCancelCapabilities(), "cancel"),
    )
    add("ToolCallCapabilities.cancel-null", Row(caps, {}, "cancel", None, None, "cancel"))
    # _meta: U / N / U (non-object)
    add("TCU._meta-missing", Row(tcu, TCU, "_meta", MISSING, UNSET, "meta"))
    add("TCU._meta-null", Row(tcu, TCU, "_meta", None, None, "meta"))
    add("TCU._meta-object", Row(tcu, TCU, "_meta", {"a": None}, {"a": None}, "meta"))
    for bad_name, bad in (("false", False), ("list", []), ("string", "x"), ("int", 0)):
        add(f"TCU._meta-{bad_name}", Row(tcu, TCU, "_meta", bad, U, "meta"))

    # ToolCallContentChunk.toolCallId, .content: ERR (no item skipping); _meta scoped
    chunk = v2.ToolCallContentChunk
    for key in ("toolCallId", "content"):
        for name, value in (("missing", MISSING), ("null", None), ("int", 3)):
            add(
                f"Chunk.{key}-{name}",
                Row(chunk, CHUNK, key, value, ERR, path="$" if value is MISSING else None),
            )
    add("Chunk.content-array", Row(chunk, CHUNK, "content", [CHUNK["content"]], ERR))
    add("Chunk.content-bad-item", Row(chunk, CHUNK, "content", {"type": "terminal"}, ERR))
    add("Chunk._meta-list", Row(chunk, CHUNK, "_meta", [], U, "meta"))
    add("Chunk._meta-object", Row(chunk, CHUNK, "_meta", {"x": 1}, {"x": 1}, "meta"))

    # ToolCallContent.type: ERR (see 5.4)
    content = v2.ToolCallContent
    for name, value in (("missing", MISSING), ("null", None), ("int", 1), ("list", ["diff"])):
        add(
            f"ToolCallContent.type-{name}",
            Row(content, TEXT_ITEM, "type", value, ERR, path="$" if value is MISSING else None),
        )
    # Content.content: ERR; an unknown block type is V
    for name, value in (
        ("missing", MISSING),
        ("null", None),
        ("string", "hi"),
        ("bad-text", {"type": "text", "text": 1}),
    ):
        add(
            f"Content.content-{name}",
            Row(
                v2.Content, TEXT_ITEM, "content", value, ERR, path="$" if value is MISSING else None
            ),
        )
    unknown_block = {"type": "_widget", "w": 1}
    add(
        "Content.content-unknown-block",
        Row(
            v2.Content,
            TEXT_ITEM,
            "content",
            unknown_block,
            v2.UnknownContentBlock(unknown_block),
            "content",
        ),
    )

    # Diff.changes: ERR (missing, null, non-array); [] is V
    diff = v2.Diff
    for name, value in (("missing", MISSING), ("null", None), ("object", {"operation": "add"})):
        add(
            f"Diff.changes-{name}",
            Row(diff, DIFF, "changes", value, ERR, path="$" if value is MISSING else None),
        )
    add("Diff.changes-empty", Row(diff, DIFF, "changes", [], [], "changes"))
    # Diff.patch: none (invalid -> absent), including a patch missing `text`
    for name, value in (
        ("no-text", {"format": "git_patch", "diff": "x"}),
        ("string", "x"),
        ("no-format", {"text": "t"}),
        ("int-text", {"format": "g", "text": 1}),
    ):
        add(f"Diff.patch-{name}", Row(diff, DIFF, "patch", value, U, "patch"))
    add("Diff.patch-null", Row(diff, DIFF, "patch", None, None, "patch"))
    add(
        "Diff.patch-custom-format",
        Row(
            diff,
            DIFF,
            "patch",
            {"format": "_svn", "text": "t"},
            v2.DiffPatch(format="_svn", text="t"),
            "patch",
        ),
    )

    # DiffChange.fileType, .mimeType: none (invalid -> absent)
    change = v2.DiffChange
    modify = {"operation": "modify", "path": "/a"}
    for key, attr in (("fileType", "file_type"), ("mimeType", "mime_type")):
        add(f"DiffChange.{key}-int", Row(change, modify, key, 3, U, attr))
        add(f"DiffChange.{key}-null", Row(change, modify, key, None, None, attr))
    add(
        "DiffChange.fileType-custom",
        Row(change, modify, "fileType", "_socket", "_socket", "file_type"),
    )
    # DiffChange.operation and path/oldPath of known operations: ERR
    for name, value in (("missing", MISSING), ("null", None), ("int", 1)):
        add(
            f"DiffChange.operation-{name}",
            Row(change, modify, "operation", value, ERR, path="$" if value is MISSING else None),
        )
    for name, value in (("missing", MISSING), ("null", None), ("int", 1)):
        add(
            f"DiffChange.path-{name}",
            Row(change, modify, "path", value, ERR, path="$" if value is MISSING else None),
        )
    move = {"operation": "move", "oldPath": "/a", "path": "/b"}
    for name, value in (("missing", MISSING), ("null", None), ("list", ["/a"])):
        add(
            f"DiffChange.oldPath-{name}",
            Row(change, move, "oldPath", value, ERR, path="$" if value is MISSING else None),
        )

    # ToolCallLocation.path: ERR; .line: none (0, negative, fractional, > 2^32-1), location kept
    loc = v2.ToolCallLocation
    for name, value in (("missing", MISSING), ("null", None), ("int", 1)):
        add(
            f"Location.path-{name}",
            Row(loc, LOCATION, "path", value, ERR, path="$" if value is MISSING else None),
        )
    for name, value in (
        ("zero", 0),
        ("negative", -1),
        ("fractional", 1.5),
        ("float-int", 3.0),
        ("too-big", 2**32),
        ("huge", 2**70),
        ("string", "3"),
        ("bool", True),
    ):
        add(f"Location.line-{name}", Row(loc, LOCATION, "line", value, U, "line"))
    add("Location.line-null", Row(loc, LOCATION, "line", None, None, "line"))
    add("Location.line-max", Row(loc, LOCATION, "line", 2**32 - 1, 2**32 - 1, "line"))
    add("Location.line-one", Row(loc, LOCATION, "line", 1, 1, "line"))

    # Terminal.terminalId: ERR
    terminal = {"type": "terminal", "terminalId": "t"}
    for name, value in (("missing", MISSING), ("null", None), ("int", 1)):
        add(
            f"Terminal.terminalId-{name}",
            Row(
                v2.Terminal,
                terminal,
                "terminalId",
                value,
                ERR,
                path="$" if value is MISSING else None,
            ),
        )

    # TerminalUpdate.terminalId: ERR; the patch fields: U / N / U
    tu = v2.TerminalUpdate
    for name, value in (("missing", MISSING), ("null", None), ("int", 1)):
        add(
            f"TerminalUpdate.terminalId-{name}",
            Row(
                tu,
                TERMINAL_UPDATE,
                "terminalId",
                value,
                ERR,
                path="$" if value is MISSING else None,
            ),
        )
    terminal_fields = {
        "command": ("command", 5, "cargo test"),
        "cwd": ("cwd", [], "/w"),
        "output": ("output", {"data": 5}, v2.TerminalOutput(data="eA==")),
        "exitStatus": ("exit_status", 0, v2.TerminalExitStatus()),
        "size": ("size", {"cols": 0, "rows": 24}, v2.TerminalSize(cols=80, rows=24)),
        "capabilities": ("capabilities", "x", v2.TerminalCapabilities()),
        "_meta": ("meta", True, {"k": 1}),
    }
    wire_of = {
        "output": {"data": "eA=="},
        "exitStatus": {},
        "size": {"cols": 80, "rows": 24},
        "capabilities": {},
    }
    for key, (attr, bad, good) in terminal_fields.items():
        add(f"TerminalUpdate.{key}-missing", Row(tu, TERMINAL_UPDATE, key, MISSING, UNSET, attr))
        add(f"TerminalUpdate.{key}-null", Row(tu, TERMINAL_UPDATE, key, None, None, attr))
        add(f"TerminalUpdate.{key}-bad", Row(tu, TERMINAL_UPDATE, key, bad, U, attr))
        add(
            f"TerminalUpdate.{key}-value",
            Row(tu, TERMINAL_UPDATE, key, wire_of.get(key, good), good, attr),
        )
    for name, value in (
        ("size-rows-too-big", {"cols": 80, "rows": 65536}),
        ("size-string", {"cols": "80", "rows": 24}),
        ("size-missing-rows", {"cols": 80}),
    ):
        add(f"TerminalUpdate.{name}", Row(tu, TERMINAL_UPDATE, "size", value, U, "size"))
    # exitStatus fields are themselves default-on-error: the exit is kept, the detail dropped
    add(
        "TerminalExitStatus.exitCode-string",
        Row(v2.TerminalExitStatus, {}, "exitCode", "1", U, "exit_code"),
    )
    add(
        "TerminalExitStatus.exitCode-negative",
        Row(v2.TerminalExitStatus, {}, "exitCode", -1073741510, -1073741510, "exit_code"),
    )
    add(
        "TerminalExitStatus.exitCode-over-int64",
        Row(v2.TerminalExitStatus, {}, "exitCode", 2**63, U, "exit_code"),
    )
    add("TerminalExitStatus.signal-int", Row(v2.TerminalExitStatus, {}, "signal", 15, U, "signal"))

    # TerminalOutputChunk.terminalId, .data: ERR
    for key in ("terminalId", "data"):
        for name, value in (("missing", MISSING), ("null", None), ("int", 1)):
            add(
                f"TerminalOutputChunk.{key}-{name}",
                Row(
                    v2.TerminalOutputChunk,
                    OUTPUT_CHUNK,
                    key,
                    value,
                    ERR,
                    path="$" if value is MISSING else None,
                ),
            )

    # RequestPermissionRequest: sessionId, title ERR; description none; subject ERR; options ERR
    req = v2.RequestPermissionRequest
    for key in ("sessionId", "title"):
        for name, value in (("missing", MISSING), ("null", None), ("int", 1)):
            add(
                f"Request.{key}-{name}",
                Row(req, REQUEST, key, value, ERR, path="$" if value is MISSING else None),
            )
    add("Request.description-int", Row(req, REQUEST, "description", 5, U, "description"))
    add("Request.description-null", Row(req, REQUEST, "description", None, None, "description"))
    add("Request.subject-null", Row(req, REQUEST, "subject", None, None, "subject"))
    add("Request.subject-missing", Row(req, REQUEST, "subject", MISSING, UNSET, "subject"))
    for name, value in (("int", 5), ("list", []), ("bad-command", {"type": "command"})):
        add(f"Request.subject-{name}", Row(req, REQUEST, "subject", value, ERR))
    for name, value in (
        ("missing", MISSING),
        ("null", None),
        ("object", OPTION),
        ("bad-option", [OPTION, {"optionId": "x"}]),
    ):
        add(
            f"Request.options-{name}",
            Row(
                req,
                REQUEST,
                "options",
                value,
                ERR,
                path={"missing": "$", "bad-option": "$.options[1]"}.get(name),
            ),
        )
    add("Request._meta-list", Row(req, REQUEST, "_meta", [], U, "meta"))

    # RequestPermissionResponse.outcome: ERR
    resp = v2.RequestPermissionResponse
    for name, value in (
        ("missing", MISSING),
        ("null", None),
        ("string", "cancelled"),
        ("no-tag", {"optionId": "o"}),
    ):
        add(
            f"Response.outcome-{name}",
            Row(resp, RESPONSE, "outcome", value, ERR, path="$" if value is MISSING else None),
        )
    return rows


ROWS = _rows()


@pytest.mark.parametrize("row", ROWS)
def test_leniency_table(row: Row) -> None:
    data = with_field(row.base, row.key, row.value)
    if row.expected == ERR:
        with pytest.raises(DecodeError) as raised:
            decode(dumps(data), row.tp)
        assert raised.value.path.startswith(row.path), (raised.value.path, row.path)
        with pytest.raises(DecodeError):
            decode(data, row.tp)
        return
    decoded = read(row.tp, data)
    assert row.attr is not None
    got = getattr(decoded.value, row.attr)
    if row.expected == U:
        assert got is UNSET  # never None: only a literal null clears (D11)
        (diagnostic,) = decoded.diagnostics
        # At the field, or inside it where the value failed (`$.patch.text`).
        assert diagnostic.path == row.path or diagnostic.path.startswith(row.path + ".")
        assert "omitted" in diagnostic.reason
        with pytest.raises(DecodeError) as raised:
            decode(dumps(data), row.tp, strict=True)
        assert raised.value.path == diagnostic.path
        # The salvaged value re-encodes without the key, and decodes again cleanly.
        again = decode(encode(decoded.value), row.tp)
        assert again.diagnostics == () and again.value == decoded.value
        assert row.key not in json.loads(encode(decoded.value))
        assert_valid(json.loads(encode(decoded.value)), row.tp)
        return
    if row.expected is UNSET or row.expected is None:
        assert got is row.expected
    else:
        assert got == row.expected
        if isinstance(row.expected, str | int | float):
            assert type(got) is type(row.expected)  # `3.0` stays a float, `""` a string
    assert decoded.diagnostics == ()
    assert json.loads(encode(decoded.value)) == data  # exact round trip
    assert_valid(json.loads(encode(decoded.value)), row.tp)


def test_leniency_table_is_large() -> None:
    assert len(ROWS) > 200


# ============================================================================================
# Skipping invalid items: each element on its own, diagnostics at the element's path


def test_content_and_locations_skip_each_bad_element() -> None:
    data = {
        "toolCallId": "a",
        "content": [
            None,
            5,
            "x",
            [],
            {},
            {"type": "diff"},
            {"type": "terminal", "terminalId": "t"},
            {"type": "content", "content": {"type": "text", "text": 1}},
            {"type": "_unknown", "k": 1},
        ],
        "locations": [{"line": 1}, {"path": "/ok"}, 3, None, {"path": 1}],
    }
    decoded = decode(dumps(data), v2.ToolCallUpdate)
    assert decoded.value.content == [
        v2.Terminal(terminal_id="t"),
        v2.UnknownToolCallContent({"type": "_unknown", "k": 1}),
    ]
    assert decoded.value.locations == [v2.ToolCallLocation(path="/ok")]
    paths = [d.path for d in decoded.diagnostics]
    assert paths == [
        *(f"$.content[{i}]" for i in range(6)),
        "$.content[7].content.text",
        "$.locations[0]",
        "$.locations[2]",
        "$.locations[3]",
        "$.locations[4].path",
    ]
    assert all("skipped" in d.reason for d in decoded.diagnostics)


def test_nested_skip_invalid_items_arrays() -> None:
    block = {
        "type": "resource_link",
        "name": "n",
        "uri": "https://x",
        "icons": [{"src": "https://i"}, {"sizes": ["1x1"]}, 5],
        "annotations": {"audience": ["user", 3, "_bot", None], "priority": 0.5},
    }
    # `decode` is annotated `tp: type[T]`, which a union alias is not: it reads one all the same.
    decoded = decode(dumps(block), cast(Any, v2.ContentBlock))
    assert decoded.value.icons == [v2.Icon(src="https://i")]
    assert decoded.value.annotations.audience == ["user", "_bot"]  # Role is open in v2
    assert [d.path for d in decoded.diagnostics] == [
        "$.icons[1]",
        "$.icons[2]",
        "$.annotations.audience[1]",
        "$.annotations.audience[3]",
    ]
    # v1 Role is closed: an unknown role is skipped.
    v1_block = {"type": "text", "text": "t", "annotations": {"audience": ["user", "_bot"]}}
    decoded_v1 = decode(dumps(v1_block), cast(Any, v1.ContentBlock))
    assert decoded_v1.value.annotations.audience == ["user"]
    assert [d.path for d in decoded_v1.diagnostics] == ["$.annotations.audience[1]"]


def test_resource_contents_text_or_blob() -> None:
    text = {"type": "resource", "resource": {"uri": "file:///a", "text": "t"}}
    blob = {"type": "resource", "resource": {"uri": "file:///a", "blob": "AA==", "mimeType": "x/y"}}
    for item, cls in ((text, v2.TextResourceContents), (blob, v2.BlobResourceContents)):
        decoded = decode(dumps(item), cast(Any, v2.ContentBlock))
        assert type(decoded.value.resource) is cls
        assert decoded.diagnostics == ()
        assert json.loads(encode(decoded.value)) == item
        assert validate_payload(json.loads(encode(decoded.value)), "ContentBlock", "v2") == []
    with pytest.raises(DecodeError) as raised:
        decode(dumps({"type": "resource", "resource": {"uri": "u"}}), cast(Any, v2.ContentBlock))
    assert raised.value.path == "$.resource"


def test_v1_tool_call_defaults_and_non_nullable_fields() -> None:
    data = {
        "toolCallId": "a",
        "title": "t",
        "kind": None,
        "status": None,
        "content": None,
        "locations": None,
        "name": None,
        "rawInput": None,
    }
    decoded = decode(dumps({"sessionUpdate": "tool_call", **data}), v1.ToolCall)
    value = decoded.value
    # Not nullable on a v1 create: null reads as omitted (the v1 default then applies).
    assert (value.kind, value.status, value.content, value.locations) == (UNSET,) * 4
    # Nullable ones keep null.
    assert value.name is None and value.raw_input is None
    assert [d.path for d in decoded.diagnostics] == [
        "$.kind",
        "$.status",
        "$.content",
        "$.locations",
    ]
    with pytest.raises(DecodeError):
        decode(dumps({"sessionUpdate": "tool_call", "toolCallId": "a"}), v1.ToolCall)
    with pytest.raises(DecodeError):
        decode(dumps({"sessionUpdate": "tool_call", "toolCallId": "a", "title": None}), v1.ToolCall)


def test_v1_location_line_zero_is_kept_by_the_codec() -> None:
    # The v1 schema allows 0 (D7 is applied by readers, not the codec).
    decoded = decode(dumps({"path": "/a", "line": 0}), v1.ToolCallLocation)
    assert decoded.value.line == 0 and decoded.diagnostics == ()
    bad = decode(dumps({"path": "/a", "line": -1}), v1.ToolCallLocation)
    assert bad.value.line is UNSET and [d.path for d in bad.diagnostics] == ["$.line"]


def test_v1_diff_requires_new_text_and_keeps_null_old_text() -> None:
    decoded = decode(
        dumps({"type": "diff", "path": "/a", "oldText": None, "newText": "n"}),
        cast(Any, v1.ToolCallContent),
    )
    assert decoded.value.old_text is None
    with pytest.raises(DecodeError):
        decode(dumps({"type": "diff", "path": "/a", "oldText": "o"}), cast(Any, v1.ToolCallContent))


# ============================================================================================
# Bad input of every kind: DecodeError and nothing else

VALID = {
    "jsonrpc": "2.0",
    "method": "session/update",
    "params": {
        "sessionId": "s",
        "update": {"sessionUpdate": "tool_call_update", "toolCallId": "a", "rawInput": 1},
    },
}
VALID_TEXT = json.dumps(VALID, separators=(",", ":"))


def _replace_raw(replacement: str) -> str:
    return VALID_TEXT.replace('"rawInput":1', '"rawInput":' + replacement)


def deep_array(depth: int) -> str:
    return "[" * depth + "]" * depth


def deep_object(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


BAD_INPUTS = [
    pytest.param(b"", id="empty"),
    pytest.param(b"   \n", id="whitespace"),
    pytest.param(b"{", id="truncated"),
    pytest.param(b"{'jsonrpc': '2.0'}", id="single-quotes"),
    pytest.param(VALID_TEXT.encode() + b" x", id="trailing-garbage"),
    pytest.param(VALID_TEXT.encode() + b"\n" + VALID_TEXT.encode(), id="two-messages"),
    pytest.param(b"\x00", id="nul"),
    pytest.param(b"[1,]", id="trailing-comma"),
    pytest.param(b"5", id="number"),
    pytest.param(b'"x"', id="string"),
    pytest.param(b"null", id="null"),
    pytest.param(b"true", id="true"),
    pytest.param(b"[]", id="empty-batch"),
    pytest.param(b'{"jsonrpc":"2.0","method":"x","params":"\xff"}', id="invalid-utf8"),
    pytest.param(b'{"jsonrpc":"2.0","method":"x","params":"\xed\xa0\x80"}', id="utf8-surrogate"),
    pytest.param(b'{"jsonrpc":"2.0","method":"x","params":"\xc0\xaf"}', id="overlong-utf8"),
    pytest.param(b"\xef\xbb\xbf" + VALID_TEXT.encode(), id="utf8-bom"),
    pytest.param(_replace_raw("NaN").encode(), id="NaN"),
    pytest.param(_replace_raw("Infinity").encode(), id="Infinity"),
    pytest.param(_replace_raw("-Infinity").encode(), id="-Infinity"),
    pytest.param(_replace_raw("1e400").encode(), id="1e400"),
    pytest.param(_replace_raw("-1e400").encode(), id="-1e400"),
    pytest.param(_replace_raw('"\\ud800"').encode(), id="lone-high-surrogate-escape"),
    pytest.param(_replace_raw('"\\udc00"').encode(), id="lone-low-surrogate-escape"),
    pytest.param(_replace_raw('"a\\ud800b"').encode(), id="surrogate-escape-mid-string"),
    pytest.param(_replace_raw('"\\ud800\\u0041"').encode(), id="high-surrogate-then-A"),
    pytest.param(
        VALID_TEXT.replace('"toolCallId":"a"', '"toolCallId":"\\ud800"').encode(),
        id="surrogate-escape-in-id",
    ),
    pytest.param(_replace_raw(deep_array(100_000)).encode(), id="deep-array-in-rawInput"),
    pytest.param(_replace_raw(deep_object(100_000)).encode(), id="deep-object-in-rawInput"),
    pytest.param(deep_array(100_000).encode(), id="deep-array-top-level"),
    pytest.param(deep_object(100_000).encode(), id="deep-object-top-level"),
    pytest.param(
        VALID_TEXT.replace(
            '"rawInput":1', '"content":[{"type":"_x","v":' + deep_array(100_000) + "}]"
        ).encode(),
        id="deep-array-in-unknown-variant",
    ),
    pytest.param(
        ('{"jsonrpc":"2.0","method":"_x","params":' + deep_object(100_000) + "}").encode(),
        id="deep-object-in-other-message",
    ),
]


def _as(kind: str, data: bytes) -> Any:
    if kind == "bytes":
        return data
    if kind == "bytearray":
        return bytearray(data)
    if kind == "memoryview":
        return memoryview(data)
    return data.decode("utf-8", "surrogateescape")


@pytest.mark.parametrize("kind", ["bytes", "bytearray", "memoryview", "str"])
@pytest.mark.parametrize("data", BAD_INPUTS)
def test_bad_input_raises_decode_error_only(data: bytes, kind: str) -> None:
    value = _as(kind, data)
    for strict in (False, True):
        with pytest.raises(DecodeError) as raised:
            decode_message(value, strict=strict)
        assert raised.value.path.startswith("$")
        assert str(raised.value)
        with pytest.raises(DecodeError):
            decode(value, v2.UpdateSessionNotification, strict=strict)
    with pytest.raises(DecodeError):
        decode_message(value, version="v1")


@pytest.mark.parametrize(
    "value",
    [5, "x", None, True, 1.5, [], ["a"]],
    ids=["int", "str", "null", "bool", "float", "empty-list", "list"],
)
def test_non_object_payloads_are_decode_errors(value: Any) -> None:
    tp: Any  # classes and a union alias (see test_nested_skip_invalid_items_arrays)
    for tp in (v2.ToolCallUpdate, v2.ToolCallContent, v1.ToolCall, v2.RequestPermissionResponse):
        with pytest.raises(DecodeError) as raised:
            decode(dumps(value), tp)
        assert raised.value.path == "$"
        with pytest.raises(DecodeError):
            decode(value, tp)


def test_decode_error_messages_are_clear() -> None:
    cases = {
        b"{": "not valid JSON",
        b"5": "JSON-RPC message object",
        b"[]": "empty batch",
        _replace_raw("NaN").encode(): "not valid JSON",
        deep_array(100_000).encode(): "nesting",
        b'{"jsonrpc":"2.0","method":"x","params":"\xff"}': "UTF-8",
        _replace_raw('"\\ud800"').encode(): "unpaired UTF-16 surrogate",
        _replace_raw('"a\\udc00"').encode(): "surrogate",
    }
    for data, needle in cases.items():
        with pytest.raises(DecodeError) as raised:
            decode_message(data)
        assert needle in str(raised.value), (data[:40], str(raised.value))


def test_str_with_a_lone_surrogate_code_point_is_a_decode_error() -> None:
    text = VALID_TEXT.replace('"rawInput":1', '"title":"\ud800"')
    with pytest.raises(DecodeError):
        decode_message(text)
    with pytest.raises(DecodeError):
        decode(text, v2.UpdateSessionNotification)


def test_surrogate_pairs_are_fine(schema_valid: SchemaCheck) -> None:
    decoded = decode_message(_replace_raw('"\\ud83d\\ude80"').encode())
    assert decoded.value.params.update.raw_input == "\U0001f680"
    out = encode(decoded.value)
    assert json.loads(out)["params"]["update"]["rawInput"] == "\U0001f680"
    schema_valid(out, "v2")


def test_moderate_nesting_is_fine(schema_valid: SchemaCheck) -> None:
    # Depth well within any limit decodes and re-encodes exactly.
    text = _replace_raw(deep_array(200))
    decoded = decode_message(text.encode())
    assert decoded.diagnostics == ()
    out = encode(decoded.value)
    assert json.loads(out) == json.loads(text)
    schema_valid(out, "v2")


# --------------------------------------------------------------------------------------------
# Size limit


@pytest.mark.parametrize("kind", ["bytes", "bytearray", "memoryview", "str"])
def test_message_over_max_bytes_is_rejected(kind: str) -> None:
    data = VALID_TEXT.encode()
    size = len(data)
    assert decode_message(_as(kind, data), max_bytes=size).value.params.update.raw_input == 1
    for strict in (False, True):
        with pytest.raises(DecodeError) as raised:
            decode_message(_as(kind, data), max_bytes=size - 1, strict=strict)
        assert raised.value.path == "$"
        assert "limit" in str(raised.value) and str(size - 1) in str(raised.value)
    with pytest.raises(DecodeError):
        decode(_as(kind, data), v2.SessionUpdateMessage, max_bytes=size - 1)
    with pytest.raises(DecodeError):  # the limit applies before parsing: bad JSON too
        decode_message(_as(kind, b"{" * 100), max_bytes=50)


def test_max_bytes_counts_utf8_bytes_of_text() -> None:
    text = VALID_TEXT.replace('"rawInput":1', '"title":"' + "é" * 20 + '"')
    size = len(text.encode())
    assert size == len(text) + 20
    assert decode_message(text, max_bytes=size).diagnostics == ()
    with pytest.raises(DecodeError):
        decode_message(text, max_bytes=size - 1)


def test_max_bytes_applies_to_batches() -> None:
    batch = f"[{VALID_TEXT},{VALID_TEXT}]".encode()
    with pytest.raises(DecodeError):
        decode_message(batch, max_bytes=len(batch) - 1)
    assert len(decode_message(batch, max_bytes=len(batch)).value.items) == 2


# --------------------------------------------------------------------------------------------
# Integers beyond 64 bits


def test_huge_line_reads_as_no_line_and_keeps_the_location() -> None:
    for line in (2**64, 2**64 + 1, -(2**64), 10**30):
        update = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "a",
            "locations": [{"path": "/a", "line": line}, {"path": "/b", "line": 2}],
        }
        message = {**VALID, "params": {"sessionId": "s", "update": update}}
        decoded = decode_message(dumps(message))
        first, second = decoded.value.params.update.locations
        assert first.path == "/a" and first.line is UNSET
        assert second.line == 2
        assert [d.path for d in decoded.diagnostics] == ["$.params.update.locations[0].line"]


@pytest.mark.parametrize("number", [2**64, 2**64 - 1, -(2**63) - 1, -(2**70), 10**40], ids=str)
def test_huge_integers_in_raw_values_are_kept_exactly(
    number: int, schema_valid: SchemaCheck
) -> None:
    raw = {"n": number, "list": [number, -number]}
    text = _replace_raw(json.dumps(raw))
    decoded = decode_message(text.encode())
    assert decoded.diagnostics == ()
    assert decoded.value.params.update.raw_input == raw
    out = encode(decoded.value)
    assert str(number).encode() in out
    assert json.loads(out) == json.loads(text)
    schema_valid(out, "v2")
    # Also as the whole params of an opaque message.
    opaque = '{"jsonrpc":"2.0","method":"_x","params":' + str(number) + "}"
    value = decode_message(opaque).value
    assert value == JsonRpcMessage({"jsonrpc": "2.0", "method": "_x", "params": number})
    assert encode(value) == opaque.encode()


def test_huge_integer_in_exit_code_is_unset() -> None:
    decoded = decode(dumps({"exitCode": 2**64}), v2.TerminalExitStatus)
    assert decoded.value.exit_code is UNSET
    assert [d.path for d in decoded.diagnostics] == ["$.exitCode"]


# --------------------------------------------------------------------------------------------
# Input forms: str, bytearray and memoryview work like bytes; dict works on both paths

INPUT_FORM_MESSAGES = [
    pytest.param(VALID, id="fast"),
    pytest.param(
        {
            **VALID,
            "params": {
                "sessionId": "s",
                "update": {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": "a",
                    "title": 42,
                    "content": [{"type": "diff"}, {"type": "terminal", "terminalId": "t"}],
                    "future": {"x": 1},
                },
            },
        },
        id="lenient",
    ),
    pytest.param([VALID, {"jsonrpc": "2.0", "id": 1, "result": {}}], id="batch"),
    pytest.param({"jsonrpc": "2.0", "id": 1, "result": {}}, id="opaque"),
]


@pytest.mark.parametrize("kind", ["bytearray", "memoryview", "str"])
@pytest.mark.parametrize("message", INPUT_FORM_MESSAGES)
def test_input_forms_work_like_bytes(message: Any, kind: str, schema_valid: SchemaCheck) -> None:
    data = dumps(message)
    expected = decode_message(data)
    got = decode_message(_as(kind, data))
    assert got.value == expected.value
    assert got.diagnostics == expected.diagnostics
    out = json.loads(encode(got.value))
    assert out == json.loads(encode(expected.value))
    for each in out if isinstance(out, list) else [out]:
        schema_valid(each, "v2")


@pytest.mark.parametrize("message", INPUT_FORM_MESSAGES)
def test_dict_input_works_like_bytes(message: Any) -> None:
    data = dumps(message)
    expected = decode_message(data)
    plain = json.loads(data)
    got = decode_message(plain)
    assert got.value == expected.value
    assert got.diagnostics == expected.diagnostics
    assert encode(got.value) == encode(expected.value)
    assert plain == json.loads(data)  # the input is not modified


def test_dict_input_bad_values_are_decode_errors() -> None:
    with pytest.raises(DecodeError):
        decode_message({"jsonrpc": "2.0", "method": "session/update", "params": 5})
    with pytest.raises(DecodeError):
        decode({"toolCallId": object()}, v2.ToolCallUpdate)
    for value in (5, "x", None):
        with pytest.raises(DecodeError):
            decode_message(value)


def test_payload_input_forms() -> None:
    data = dumps({"toolCallId": "a", "title": 1, "status": "paused"})
    results = [
        decode(form, v2.ToolCallUpdate)
        for form in (data, bytearray(data), memoryview(data), data.decode(), json.loads(data))
    ]
    for result in results:
        assert result == results[0]
        assert result.value.status == "paused" and result.value.title is UNSET


# ============================================================================================
# Encoding what JSON cannot hold raises EncodeError


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param(v2.ToolCallUpdate(tool_call_id="a", title="\ud800"), id="title"),
        pytest.param(v2.ToolCallUpdate(tool_call_id="\udfff"), id="id"),
        pytest.param(
            v2.ToolCallUpdate(tool_call_id="a", raw_input={"k": ["\ud800"]}), id="raw-value"
        ),
        pytest.param(v2.ToolCallUpdate(tool_call_id="a", meta={"\ud800": 1}), id="meta-key"),
        pytest.param(
            v2.UnknownToolCallContent({"type": "_x", "v": "\ud800"}), id="unknown-variant"
        ),
        pytest.param(JsonRpcMessage({"jsonrpc": "2.0", "method": "\ud800"}), id="opaque"),
    ],
)
def test_encode_of_a_lone_surrogate_raises_encode_error(obj: Any) -> None:
    with pytest.raises(EncodeError):
        encode(obj)


def test_encode_of_a_lone_surrogate_in_an_unknown_key_raises_encode_error() -> None:
    decoded = decode({"toolCallId": "a", "future": "\ud800"}, v2.ToolCallUpdate)
    with pytest.raises(EncodeError):
        encode(decoded.value)


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")], ids=str)
def test_encode_of_non_finite_numbers_raises_instead_of_writing_null(number: float) -> None:
    # msgspec would write `null`, and `rawOutput: null` means "clear" (D3).
    for obj in (
        v2.ToolCallUpdate(tool_call_id="a", raw_output=number),
        v2.ToolCallUpdate(tool_call_id="a", raw_input={"x": [1, number]}),
        v2.Annotations(priority=number),
        JsonRpcMessage({"jsonrpc": "2.0", "method": "_x", "params": [number]}),
    ):
        with pytest.raises(EncodeError):
            encode(obj)


def test_encode_of_unencodable_objects_raises_encode_error() -> None:
    with pytest.raises(EncodeError):
        encode(object())
    with pytest.raises(EncodeError):
        encode(v2.ToolCallUpdate(tool_call_id="a", raw_input=object()))
    deep: Any = 1
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(EncodeError):
        encode(v2.ToolCallUpdate(tool_call_id="a", raw_input=deep))
    # A dict input that deep is refused by the decoder, as its text would be: what the codec
    # reads, it writes (its depth limit, issue 27).
    with pytest.raises(DecodeError, match="nesting is too deep"):
        decode({"toolCallId": "a", "rawInput": deep}, v2.ToolCallUpdate)


def test_encode_error_is_a_value_error() -> None:
    assert issubclass(EncodeError, ValueError)
    assert issubclass(DecodeError, ValueError)
