"""The stateless v2 -> v1 mapping and the v1 -> v2 permission/session-update additions
(D46 (field mapping to session-update mapping), the C vectors; D4, D10, D19, D27-D30, D36, D37,
D39).

Inputs are decoded from JSON with ``acp_toolcalls.decode`` so that ``null`` and omitted reach
the mapping exactly as they do on the wire. Every v1/v2 object or message a test encodes is
checked against its schema by the autouse guard in conftest.py; the property tests also check
whole messages with the ``schema_valid`` fixture at once.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_toolcalls import decode, encode, v1, v2
from acp_toolcalls.codec import to_builtins
from acp_toolcalls.convert import (
    ConversionError,
    LossReport,
    content_to_v1,
    diff_summary,
    diff_to_v2,
    display_title,
    git_patch,
    permission_request_to_v1,
    permission_request_to_v2,
    permission_response_to_v1,
    permission_response_to_v2,
    session_update_to_v1,
    session_update_to_v2,
    synthetic_tool_call_id,
    tool_call_to_v1,
    tool_call_update_to_v1,
)

Json = Any
SchemaCheck = Callable[..., None]  # the `schema_valid` fixture of conftest.py


def examples(fraction: float) -> int:
    """A share of the loaded hypothesis profile's example count."""
    profile = settings.default
    assert profile is not None  # hypothesis always has a profile loaded
    return max(10, math.ceil(profile.max_examples * fraction))


def as_json(obj: Any) -> Json:
    return json.loads(encode(obj))


def paths(report: LossReport) -> list[str]:
    return [loss.path for loss in report]


def v2_update(**fields: Json) -> v2.ToolCallUpdate:
    return decode(json.dumps(fields), v2.ToolCallUpdate).value


def v2_item(item: Json) -> v2.ToolCallContent:
    content = v2_update(toolCallId="x", content=[item]).content
    assert isinstance(content, list) and len(content) == 1, "the item did not decode"
    return content[0]


# `decode` is annotated `tp: type[T]`, which a union alias is not: it reads one all the same.
def v2_session(update: Json) -> v2.SessionUpdate:
    return decode(json.dumps(update), cast(Any, v2.SessionUpdate)).value


def v1_session(update: Json) -> v1.SessionUpdate:
    return decode(json.dumps(update), cast(Any, v1.SessionUpdate)).value


def v1_message(update: Any) -> Json:
    """``update`` inside a v1 ``session/update`` notification, encoded (and so schema-checked)."""
    notification = v1.SessionNotification(session_id="s", update=update)
    return as_json(v1.SessionUpdateMessage(params=notification))["params"]["update"]


def v2_message(update: Any) -> Json:
    notification = v2.UpdateSessionNotification(session_id="s", update=update)
    return as_json(v2.SessionUpdateMessage(params=notification))["params"]["update"]


def text_item(text: str, **extra: Json) -> Json:
    return {"type": "content", "content": {"type": "text", "text": text}, **extra}


ADD_PATCH = (
    "diff --git /r/n.txt /r/n.txt\nnew file mode 100644\n--- /dev/null\n+++ /r/n.txt\n"
    "@@ -0,0 +1,2 @@\n+a\n+b\n"
)


# ============================================================================================
# tool_call_update_to_v1 (D46 (field mapping))


def test_values_v1_has_are_copied_exactly() -> None:
    fields = {
        "toolCallId": "c",
        "title": "Edit",
        "name": "write_file",
        "kind": "edit",
        "status": "completed",
        "content": [text_item("done", _meta={"k": None})],
        "locations": [{"path": "/a", "line": 3, "_meta": {"m": 1}}, {"path": "/b", "line": None}],
        "rawInput": {"path": "/a"},
        "rawOutput": [1, 2],
        "_meta": {"vendor": {"x": None}},  # a nested null is a value, not a key removal
    }
    out, losses = tool_call_update_to_v1(v2_update(**fields))
    assert type(out) is v1.ToolCallUpdate
    assert not losses
    assert as_json(out) == fields
    assert tool_call_update_to_v1(v2_update(**fields), strict=True) == (out, losses)


def test_c7_clears_cancelled_and_capabilities() -> None:
    update = v2_session(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "a",
            "title": None,
            "kind": None,
            "status": "cancelled",
            "content": None,
            "rawOutput": None,
            "capabilities": {"cancel": {}},
        }
    )
    out, losses = session_update_to_v1(update)
    assert v1_message(out) == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "a",
        "kind": "other",
        "status": "failed",
        "content": [],
    }
    assert paths(losses) == ["$.title", "$.status", "$.rawOutput", "$.capabilities"]
    with pytest.raises(ConversionError) as caught:
        session_update_to_v1(update, strict=True)
    assert caught.value.path == "$.title"


@pytest.mark.parametrize(
    ("field", "value", "sent"),
    [
        ("status", "paused", "in_progress"),
        ("status", "_weird", "in_progress"),
        ("status", "cancelled", "failed"),
        ("kind", "_review", "other"),
        ("kind", "cancelled", "other"),
    ],
)
def test_c8_substituted_enum_values(field: str, value: str, sent: str) -> None:
    out, losses = tool_call_update_to_v1(v2_update(toolCallId="a", **{field: value}))
    assert as_json(out) == {"toolCallId": "a", field: sent}
    assert paths(losses) == [f"$.{field}"]
    assert repr(value) in losses.losses[0].reason
    with pytest.raises(ConversionError) as caught:
        tool_call_update_to_v1(v2_update(toolCallId="a", **{field: value}), strict=True)
    assert caught.value.path == f"$.{field}"


@pytest.mark.parametrize("status", [*v1.KNOWN_STATUSES])
def test_known_statuses_are_copied(status: str) -> None:
    out, losses = tool_call_update_to_v1(v2_update(toolCallId="a", status=status), strict=True)
    assert as_json(out) == {"toolCallId": "a", "status": status}
    assert not losses


def test_enum_members_become_plain_v1_strings() -> None:
    update = v2.ToolCallUpdate(
        tool_call_id="a", kind=v2.ToolKind.EDIT, status=v2.ToolCallStatus.CANCELLED
    )
    out, _ = tool_call_update_to_v1(update)
    assert (type(out.kind), type(out.status)) == (str, str)
    assert (out.kind, out.status) == ("edit", "failed")


def test_kind_and_status_null_are_other_and_pending_exactly() -> None:
    out, losses = tool_call_update_to_v1(v2_update(toolCallId="a", kind=None, status=None))
    assert as_json(out) == {"toolCallId": "a", "kind": "other", "status": "pending"}
    assert not losses  # D4: the reset value, not a loss
    tool_call_update_to_v1(v2_update(toolCallId="a", kind=None, status=None), strict=True)


@pytest.mark.parametrize("value", [None, []])
def test_collection_clears_are_empty_arrays(value: Json) -> None:
    update = v2_update(toolCallId="a", content=value, locations=value)
    out, losses = tool_call_update_to_v1(update, strict=True)
    assert as_json(out) == {"toolCallId": "a", "content": [], "locations": []}
    assert not losses


@pytest.mark.parametrize("key", ["title", "name", "rawInput", "rawOutput", "_meta"])
def test_scalar_and_raw_clears_are_omitted_and_reported(key: str) -> None:
    out, losses = tool_call_update_to_v1(v2_update(toolCallId="a", **{key: None}))
    assert as_json(out) == {"toolCallId": "a"}
    assert paths(losses) == [f"$.{key}"]
    assert "keeps the old value" in losses.losses[0].reason
    with pytest.raises(ConversionError) as caught:
        tool_call_update_to_v1(v2_update(toolCallId="a", **{key: None}), strict=True)
    assert caught.value.path == f"$.{key}"


@pytest.mark.parametrize("value", [{"cancel": {}}, {}, None, {"cancel": {"_meta": {"x": 1}}}])
def test_capabilities_are_dropped_and_reported_in_both_modes(value: Json) -> None:
    for strict in (False, True):
        out, losses = tool_call_update_to_v1(
            v2_update(toolCallId="a", capabilities=value), strict=strict
        )
        assert as_json(out) == {"toolCallId": "a"}
        assert paths(losses) == ["$.capabilities"]
        assert "per-tool-call controls" in losses.losses[0].reason


def test_meta_null_keys_are_left_out_and_reported() -> None:
    update = v2_update(toolCallId="a", _meta={"keep": 1, "gone": None, "odd key": None})
    out, losses = tool_call_update_to_v1(update)
    assert as_json(out) == {"toolCallId": "a", "_meta": {"keep": 1}}
    assert paths(losses) == ["$._meta.gone", '$._meta["odd key"]']
    with pytest.raises(ConversionError) as caught:
        tool_call_update_to_v1(update, strict=True)
    assert caught.value.path == "$._meta.gone"
    out, _ = tool_call_update_to_v1(v2_update(toolCallId="a", _meta={"z": None}))
    assert as_json(out) == {"toolCallId": "a", "_meta": {}}


def test_meta_is_a_copy() -> None:
    update = v2_update(toolCallId="a", _meta={"k": 1})
    out, _ = tool_call_update_to_v1(update)
    assert out.meta == update.meta and out.meta is not update.meta


def test_unknown_fields_are_dropped_and_reported_in_both_modes() -> None:
    update = v2_update(
        toolCallId="a",
        status="completed",
        zzTop=1,
        locations=[{"path": "/a", "zzLoc": 2}],
        content=[text_item("t", zzItem=3)],
    )
    out, losses = tool_call_update_to_v1(update, strict=True)
    assert as_json(out) == {
        "toolCallId": "a",
        "status": "completed",
        "content": [text_item("t")],
        "locations": [{"path": "/a"}],
    }
    assert sorted(paths(losses)) == ["$.content[0].zzItem", "$.locations[0].zzLoc", "$.zzTop"]
    assert all(loss.code == "unknown-key" for loss in losses)


def test_a_session_tool_call_update_becomes_a_plain_v1_update() -> None:
    update = v2_session({"sessionUpdate": "tool_call_update", "toolCallId": "a", "title": "T"})
    out, _ = tool_call_update_to_v1(cast(v2.SessionToolCallUpdate, update))
    assert type(out) is v1.ToolCallUpdate


# ============================================================================================
# content_to_v1 (D46 (content mapping)): content blocks

BLOCKS = [
    {"type": "text", "text": "hi", "_meta": {"m": None}},
    {
        "type": "text",
        "text": "t",
        "annotations": {
            "audience": ["user", "assistant"],
            "lastModified": "2025-01-12T15:00:58Z",
            "priority": 0.5,
            "_meta": {"a": 1},
        },
    },
    {"type": "image", "data": "aGk=", "mimeType": "image/png", "uri": "file:///i.png"},
    {"type": "audio", "data": "aGk=", "mimeType": "audio/wav", "annotations": None},
    {
        "type": "resource_link",
        "name": "n",
        "uri": "file:///r",
        "title": "T",
        "description": None,
        "mimeType": "text/plain",
        "size": 2**63 - 1,
    },
    {"type": "resource", "resource": {"uri": "file:///a", "text": "x", "mimeType": None}},
    {"type": "resource", "resource": {"uri": "file:///b", "blob": "aGk=", "_meta": {"k": 2}}},
]


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: str(b["type"]))
def test_content_blocks_are_copied_unchanged(block: Json) -> None:
    item = {"type": "content", "content": block, "_meta": {"item": True}}
    out, losses = content_to_v1(v2_item(item), strict=True)
    assert not losses
    assert [as_json(o) for o in out] == [item]


def test_resource_link_icons_are_dropped() -> None:
    block = {"type": "resource_link", "name": "n", "uri": "u", "icons": [{"src": "data:,x"}]}
    out, losses = content_to_v1(v2_item({"type": "content", "content": block}), path="$.c[1]")
    assert as_json(out[0])["content"] == {"type": "resource_link", "name": "n", "uri": "u"}
    assert paths(losses) == ["$.c[1].content.icons"]
    with pytest.raises(ConversionError) as caught:
        content_to_v1(v2_item({"type": "content", "content": block}), strict=True)
    assert caught.value.path == "$.content.icons"


@pytest.mark.parametrize("icons", [None, []])
def test_empty_icons_carry_nothing_and_are_not_a_loss(icons: Json) -> None:
    block = {"type": "resource_link", "name": "n", "uri": "u", "icons": icons}
    out, losses = content_to_v1(v2_item({"type": "content", "content": block}), strict=True)
    assert as_json(out[0])["content"] == {"type": "resource_link", "name": "n", "uri": "u"}
    assert not losses


def test_unknown_audience_roles_are_removed() -> None:
    block = {"type": "text", "text": "t", "annotations": {"audience": ["user", "_bot", "x"]}}
    out, losses = content_to_v1(v2_item({"type": "content", "content": block}))
    assert as_json(out[0])["content"]["annotations"] == {"audience": ["user"]}
    assert paths(losses) == [
        "$.content.annotations.audience[1]",
        "$.content.annotations.audience[2]",
    ]
    with pytest.raises(ConversionError) as caught:
        content_to_v1(v2_item({"type": "content", "content": block}), strict=True)
    assert caught.value.path == "$.content.annotations.audience[1]"


def test_a_size_past_int64_is_dropped() -> None:
    block = {"type": "resource_link", "name": "n", "uri": "u", "size": 2**63}
    out, losses = content_to_v1(v2_item({"type": "content", "content": block}))
    assert "size" not in as_json(out[0])["content"]
    assert paths(losses) == ["$.content.size"]
    with pytest.raises(ConversionError):
        content_to_v1(v2_item({"type": "content", "content": block}), strict=True)


def test_unknown_block_drops_the_item() -> None:
    item = v2_item({"type": "content", "content": {"type": "_chart", "data": [1]}})
    out, losses = content_to_v1(item, path="$.content[4]")
    assert out == []
    assert paths(losses) == ["$.content[4]"]  # the path names what was dropped
    with pytest.raises(ConversionError):
        content_to_v1(item, strict=True)


def test_unknown_item_is_dropped() -> None:
    item = v2_item({"type": "_widget", "title": "Tests"})
    assert isinstance(item, v2.UnknownToolCallContent)
    out, losses = content_to_v1(item)
    assert out == []
    assert paths(losses) == ["$"]
    with pytest.raises(ConversionError):
        content_to_v1(item, strict=True)


def test_terminal_reference_is_a_text_item_naming_the_terminal() -> None:
    item = v2_item({"type": "terminal", "terminalId": "term_1", "_meta": {"k": 1}})
    out, losses = content_to_v1(item, path="$.content[0]")
    assert [as_json(o) for o in out] == [
        text_item("[terminal term_1: output not available]", _meta={"k": 1})
    ]
    assert paths(losses) == ["$.content[0]"]
    assert "stateful bridge" in losses.losses[0].reason
    with pytest.raises(ConversionError):
        content_to_v1(item, strict=True)


def test_unknown_keys_of_nested_objects_are_dropped_and_reported() -> None:
    item = {
        "type": "content",
        "zzItem": 1,
        "content": {
            "type": "resource",
            "zzBlock": 2,
            "resource": {"uri": "file:///a", "text": "x", "zz res": 3},
            "annotations": {"priority": 0.5, "zzAnn": 4},
        },
    }
    out, losses = content_to_v1(v2_item(item), strict=True)
    assert as_json(out[0]) == {
        "type": "content",
        "content": {
            "type": "resource",
            "resource": {"uri": "file:///a", "text": "x"},
            "annotations": {"priority": 0.5},
        },
    }
    assert sorted(paths(losses)) == [
        "$.content.annotations.zzAnn",
        '$.content.resource["zz res"]',
        "$.content.zzBlock",
        "$.zzItem",
    ]


# ============================================================================================
# content_to_v1: diffs (D46 (diff conversion), D27)


def v2_diff(**fields: Json) -> v2.Diff:
    item = v2_item({"type": "diff", **fields})
    assert isinstance(item, v2.Diff)
    return item


def add_change(path: str = "/r/n.txt", **extra: Json) -> Json:
    return {"operation": "add", "path": path, **extra}


def test_c18_pure_add_becomes_a_v1_diff() -> None:
    diff = v2_diff(
        changes=[add_change(fileType="text")],
        patch={"format": "git_patch", "text": ADD_PATCH},
        _meta={"m": 1},
    )
    out, losses = content_to_v1(diff, strict=True)  # exact: strict accepts it
    assert not losses
    assert [as_json(o) for o in out] == [
        {"type": "diff", "path": "/r/n.txt", "newText": "a\nb\n", "_meta": {"m": 1}}
    ]


@pytest.mark.parametrize(
    ("patch", "text"),
    [
        ("--- /dev/null\n+++ /f\n@@ -0,0 +1 @@\n+only\n", "only\n"),
        ("--- /dev/null\n+++ /f\n@@ -0,0 +1 @@\n+x\n\\ No newline at end of file\n", "x"),
        ("diff --git /f /f\nnew file mode 100644\n--- /dev/null\n+++ /f\n", ""),
        ("diff --git a/f b/f\nnew file mode 100644\nindex 0000000..e69de29\n", ""),  # Git's own
        (
            "diff --git /f /f\nnew file mode 100755\n--- /dev/null\n+++ /f\n@@ -0,0 +1,1 @@\n+x\n",
            "x\n",
        ),
        ("--- /dev/null\n+++ /f\n@@ -0,0 +1,2 @@\n+a\r\n+\x0c\n", "a\r\n\x0c\n"),
        ("--- /dev/null\n+++ /f\n@@ -0,0 +1,2 @@\n++++ x\n+--- y\n", "+++ x\n--- y\n"),
    ],
)
def test_pure_add_forms(patch: str, text: str) -> None:
    for file_type in ({}, {"fileType": "text"}, {"fileType": None}):
        diff = v2_diff(
            changes=[add_change("/f", **file_type)], patch={"format": "git_patch", "text": patch}
        )
        out, losses = content_to_v1(diff, strict=True)
        assert not losses
        assert as_json(out[0]) == {"type": "diff", "path": "/f", "newText": text}


NOT_PURE_ADD = {
    "modify": ([{"operation": "modify", "path": "/f"}], "--- /f\n+++ /f\n@@ -1 +1 @@\n-a\n+b\n"),
    "two changes": ([add_change("/f"), add_change("/g")], ADD_PATCH),
    "binary": ([add_change("/f", fileType="binary")], ADD_PATCH),
    "custom file type": ([add_change("/f", fileType="_socket")], ADD_PATCH),
    "context line": ([add_change("/f")], "--- /dev/null\n+++ /f\n@@ -0,0 +1,2 @@\n+a\n b\n"),
    "count mismatch": ([add_change("/f")], "--- /dev/null\n+++ /f\n@@ -0,0 +1,3 @@\n+a\n+b\n"),
    "two hunks": (
        [add_change("/f")],
        "--- /dev/null\n+++ /f\n@@ -0,0 +1 @@\n+a\n@@ -0,0 +1 @@\n+b\n",
    ),
    "second section": ([add_change("/f")], ADD_PATCH + ADD_PATCH),
    "new side /dev/null": ([add_change("/f")], "--- /dev/null\n+++ /dev/null\n"),
    "old side not /dev/null": ([add_change("/f")], "--- /f\n+++ /f\n@@ -0,0 +1 @@\n+a\n"),
    "no trailing newline": ([add_change("/f")], ADD_PATCH[:-1]),
    "not a new file": ([add_change("/f")], "diff --git /f /f\n"),
    "empty patch": ([add_change("/f")], ""),
    "rename lines": ([add_change("/f")], "diff --git /f /f\nrename from /e\nrename to /f\n"),
}


@pytest.mark.parametrize(("changes", "patch"), NOT_PURE_ADD.values(), ids=NOT_PURE_ADD.keys())
def test_everything_else_is_a_text_item_with_the_patch(changes: Json, patch: str) -> None:
    diff = v2_diff(changes=changes, patch={"format": "git_patch", "text": patch}, _meta={"d": 1})
    out, losses = content_to_v1(diff, path="$.content[2]")
    assert len(out) == 1
    data = as_json(out[0])
    assert data["type"] == "content" and data["_meta"] == {"d": 1}
    assert data["content"]["text"] == diff_summary(diff)
    assert paths(losses) == ["$.content[2]"]
    assert "no mechanical mapping" in losses.losses[0].reason
    with pytest.raises(ConversionError) as caught:
        content_to_v1(diff, path="$.content[2]", strict=True)
    assert caught.value.path == "$.content[2]"


def test_a_diff_without_a_git_patch_is_never_a_v1_diff() -> None:
    for patch in ({}, {"patch": None}, {"patch": {"format": "_hunks", "text": ADD_PATCH}}):
        out, _ = content_to_v1(v2_diff(changes=[add_change(fileType="text")], **patch))
        assert as_json(out[0])["type"] == "content"


def test_c17_a_move_without_patch_is_one_summary_line() -> None:
    diff = v2_diff(
        changes=[{"operation": "move", "oldPath": "/r/a.rs", "path": "/r/b.rs", "fileType": "text"}]
    )
    out, _ = content_to_v1(diff)
    assert [as_json(o) for o in out] == [text_item("Moved /r/a.rs -> /r/b.rs")]


def test_summary_line_per_change() -> None:
    diff = v2_diff(
        changes=[
            {"operation": "add", "path": "/a"},
            {"operation": "delete", "path": "/d", "fileType": "text"},
            {"operation": "modify", "path": "/m", "fileType": "binary", "mimeType": "image/png"},
            {"operation": "move", "oldPath": "/o", "path": "/n", "fileType": "symlink"},
            {"operation": "copy", "oldPath": "/s", "path": "/t", "fileType": None},
            {"operation": "_chmod", "path": "/x", "fileType": "directory", "mode": "755"},
            {"operation": "_touch"},
            {"operation": "modify", "path": "/c", "fileType": "_custom"},
        ]
    )
    assert diff_summary(diff) == (
        "Added /a\nDeleted /d\nModified /m (binary)\nMoved /o -> /n (symlink)\n"
        "Copied /s -> /t\n_chmod /x (directory)\n_touch\nModified /c (_custom)"
    )


def test_patch_is_fenced_after_a_blank_line() -> None:
    diff = v2_diff(
        changes=[{"operation": "modify", "path": "/f"}],
        patch={"format": "git_patch", "text": "--- /f\n+++ /f\n"},
    )
    assert diff_summary(diff) == "Modified /f\n\n```diff\n--- /f\n+++ /f\n```"
    other = v2_diff(changes=[], patch={"format": "_hunks", "text": "@@ x"})
    assert diff_summary(other) == "```\n@@ x\n```"  # no info string; no summary, no blank line


@pytest.mark.parametrize(
    ("body", "fence"),
    [
        ("plain", "```"),
        ("has `one` and ``two``", "```"),
        ("has ``` three", "````"),
        ("has ```` four and ``` three", "`````"),
        ("````````", "`````````"),
    ],
)
def test_the_fence_is_longer_than_any_backtick_run_inside(body: str, fence: str) -> None:
    text = f"--- /f\n+++ /f\n@@ -1 +1 @@\n-a\n+{body}\n"
    diff = v2_diff(
        changes=[{"operation": "modify", "path": "/f"}],
        patch={"format": "git_patch", "text": text},
    )
    summary = diff_summary(diff)
    assert summary == f"Modified /f\n\n{fence}diff\n{text}{fence}"
    # Nothing inside can close the block: every line inside is shorter than the fence.
    inside = summary.split("\n")[3:-1]
    assert all(not line.startswith(fence) for line in inside)


def test_an_empty_diff_is_dropped() -> None:
    out, losses = content_to_v1(v2_diff(changes=[]))
    assert out == []
    assert paths(losses) == ["$"]
    with pytest.raises(ConversionError):
        content_to_v1(v2_diff(changes=[]), strict=True)


def test_pure_add_extras_v1_cannot_hold_are_reported() -> None:
    diff = v2_diff(
        changes=[add_change("/f", mimeType="text/x-python", _meta={"c": 1}, zzChange=1)],
        patch={"format": "git_patch", "text": ADD_PATCH, "_meta": {"p": 1}, "zzPatch": 2},
        zzDiff=3,
    )
    out, losses = content_to_v1(diff)
    assert as_json(out[0]) == {"type": "diff", "path": "/f", "newText": "a\nb\n"}
    assert sorted(paths(losses)) == [
        "$.changes[0]._meta",
        "$.changes[0].mimeType",
        "$.changes[0].zzChange",
        "$.patch._meta",
        "$.patch.zzPatch",
        "$.zzDiff",
    ]
    with pytest.raises(ConversionError):
        content_to_v1(diff, strict=True)


TEXTS = st.one_of(
    st.lists(
        st.sampled_from(["a", "", " x", "+y", "\\ no", "a\rb", "```", "\u00e9"]), max_size=6
    ).map("\n".join),
    st.text(st.characters(blacklist_categories=["Cs"]), max_size=30),
)


@settings(max_examples=examples(0.5))
@given(
    path=st.text(st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=8),
    text=TEXTS,
    meta=st.none() | st.just({"k": [1]}),
)
def test_pure_add_round_trip_v1_v2_v1(path: str, text: str, meta: Json) -> None:
    original = {"type": "diff", "path": path, "newText": text}
    if meta is not None:
        original["_meta"] = meta
    item = decode(json.dumps(original), v1.Diff).value
    out, losses = content_to_v1(diff_to_v2(item), strict=True)
    assert not losses
    assert [as_json(o) for o in out] == [original]


# ============================================================================================
# tool_call_to_v1 (first sight, D10)


@pytest.mark.parametrize(
    ("fields", "fallback", "title"),
    [
        ({"title": "Read", "name": "read_file", "kind": "read"}, "Approve?", "Read"),
        ({"title": "", "name": "read_file", "kind": "read"}, "Approve?", "read_file"),
        ({"title": None, "name": "", "kind": "read"}, "Approve?", "Approve?"),
        ({"kind": "switch_mode"}, None, "Switch mode"),
        ({"kind": "execute"}, "", "Execute"),
        ({"kind": "other"}, None, "Tool call"),
        ({"kind": "_review"}, None, "Tool call"),
        ({"kind": None}, None, "Tool call"),
        ({}, None, "Tool call"),
    ],
)
def test_d10_title_chain(fields: Json, fallback: str | None, title: str) -> None:
    out, _ = tool_call_to_v1(v2_update(toolCallId="x", **fields), title_fallback=fallback)
    assert out.title == title
    assert display_title(fields.get("title"), fields.get("name"), fields.get("kind"), fallback) == (
        title
    )


def test_c11_an_id_alone_is_a_tool_call_titled_tool_call() -> None:
    out, losses = tool_call_to_v1(v2_update(toolCallId="y", content=[text_item("A")]))
    assert v1_message(out) == {
        "sessionUpdate": "tool_call",
        "toolCallId": "y",
        "title": "Tool call",
        "kind": "other",  # always there on a first sight (D9 amended)
        "status": "pending",
        "content": [text_item("A")],
    }
    assert not losses


def test_a_create_leaves_out_empty_values_and_clears_without_loss() -> None:
    update = v2_update(
        toolCallId="x",
        title="T",
        name=None,
        kind="other",
        status="pending",
        content=[],
        locations=None,
        rawInput=None,
        rawOutput=None,
        capabilities=None,
        _meta={"gone": None},
    )
    out, losses = tool_call_to_v1(update, strict=True)
    assert v1_message(out) == {
        "sessionUpdate": "tool_call",
        "toolCallId": "x",
        "title": "T",
        "kind": "other",  # real v1 clients print an absent status as "undefined"
        "status": "pending",
    }
    assert not losses  # on a call nobody has seen, a clear is the default


def test_a_create_copies_values_and_substitutes_like_an_update() -> None:
    update = v2_update(
        toolCallId="x",
        name="bash",
        kind="execute",
        status="cancelled",
        locations=[{"path": "/w", "line": 1}],
        rawInput={"cmd": "ls"},
        rawOutput="out",
        capabilities={"cancel": {}},
        _meta={"k": 1, "z": None},
    )
    out, losses = tool_call_to_v1(update)
    assert type(out) is v1.ToolCall
    assert v1_message(out) == {
        "sessionUpdate": "tool_call",
        "toolCallId": "x",
        "title": "bash",
        "name": "bash",
        "kind": "execute",
        "status": "failed",
        "locations": [{"path": "/w", "line": 1}],
        "rawInput": {"cmd": "ls"},
        "rawOutput": "out",
        "_meta": {"k": 1},
    }
    assert paths(losses) == ["$.status", "$.capabilities"]
    with pytest.raises(ConversionError) as caught:
        tool_call_to_v1(update, strict=True)
    assert caught.value.path == "$.status"


def test_a_create_of_an_unknown_kind_is_reported_and_left_at_other() -> None:
    out, losses = tool_call_to_v1(v2_update(toolCallId="x", kind="_review"))
    assert out.kind == "other"
    assert paths(losses) == ["$.kind"]


# ============================================================================================
# permission_request_to_v1 (D46 (permission mapping), D28, D29)

ALLOW = {"optionId": "a", "name": "Allow", "kind": "allow_once"}
REJECT = {"optionId": "r", "name": "Reject", "kind": "reject_once", "_meta": {"o": 1}}


def v2_request(**fields: Json) -> v2.RequestPermissionRequest:
    body = {"sessionId": "s", "title": "Approve?", "options": [ALLOW, REJECT], **fields}
    return decode(json.dumps(body), v2.RequestPermissionRequest).value


def v1_request_json(req: v1.RequestPermissionRequest | None) -> Json:
    assert req is not None
    return as_json(v1.PermissionRequestMessage(id=1, params=req))["params"]


def test_c13_the_prompt_title_and_description_are_shown_in_the_tool_call() -> None:
    req = v2_request(
        title="Approve file edit?",
        description="Allow edits to src/main.rs?",
        subject={"type": "tool_call", "toolCall": {"toolCallId": "call_001"}},
        options=[
            ALLOW,
            REJECT,
            {"optionId": "p", "name": "Allow for project", "kind": "_allow_project"},
        ],
    )
    out, losses = permission_request_to_v1(req)
    assert v1_request_json(out) == {
        "sessionId": "s",
        "toolCall": {
            "toolCallId": "call_001",
            "title": "Approve file edit?",
            "content": [text_item("Allow edits to src/main.rs?")],
        },
        "options": [ALLOW, REJECT],
    }
    assert paths(losses) == ["$.title", "$.options[2]"]
    assert "cannot restore" in losses.losses[0].reason  # no `shown`: a stateless caller
    with pytest.raises(ConversionError) as caught:
        permission_request_to_v1(req, strict=True)
    assert caught.value.path == "$.title"


def test_an_unknown_key_of_a_subject_shown_as_the_client_shows_it_is_reported() -> None:
    """A tracking caller's ``shown`` content stands in for the subject's: the subject, copied
    without its content, keeps its unknown keys, which are reported (found by the bridges'
    fuzz test: the copy dropped them without a report)."""
    subject = {"toolCallId": "c1", "title": "Approve?", "content": [], "operation": "_x"}
    req = v2_request(subject={"type": "tool_call", "toolCall": subject})
    shown = [{"type": "content", "content": {"type": "text", "text": "rm -rf build"}}]
    _, losses = permission_request_to_v1(req, shown=shown)
    assert "$.subject.toolCall.operation" in paths(losses)


def test_the_prompt_title_replaces_the_calls_title_in_the_request() -> None:
    """D28 amended: a v1 client renders the prompt from `toolCall`, so the user must see the
    prompt there, not the call's title ("Read README.md" for `rm -rf ~`)."""
    subject = {"type": "tool_call", "toolCall": {"toolCallId": "c", "title": "Edit main.py"}}
    out, losses = permission_request_to_v1(v2_request(title="Approve?", subject=subject))
    assert out is not None and out.tool_call.title == "Approve?"
    assert paths(losses) == ["$.title"]
    with pytest.raises(ConversionError):
        permission_request_to_v1(v2_request(title="Approve?", subject=subject), strict=True)


def test_a_prompt_title_equal_to_the_call_title_is_exact() -> None:
    subject = {"type": "tool_call", "toolCall": {"toolCallId": "c", "title": "Edit"}}
    out, losses = permission_request_to_v1(v2_request(title="Edit", subject=subject), strict=True)
    assert not losses
    assert v1_request_json(out)["toolCall"] == {"toolCallId": "c", "title": "Edit"}


def test_a_known_calls_content_follows_the_prompt() -> None:
    subject = {"type": "tool_call", "toolCall": {"toolCallId": "c", "status": "pending"}}
    shown = [_text("the diff")]
    out, losses = permission_request_to_v1(
        v2_request(title="Approve?", description="It edits main.py", subject=subject),
        shown=shown,
    )
    assert v1_request_json(out)["toolCall"] == {
        "toolCallId": "c",
        "title": "Approve?",
        "status": "pending",
        "content": [text_item("It edits main.py"), text_item("the diff")],
    }
    assert paths(losses) == ["$.title"]
    assert "restores" in losses.losses[0].reason


def test_without_a_description_the_change_approved_is_still_in_the_request() -> None:
    """Issue 26 item 2 (D28, amended 2026-12-06): codex's "Make edits?" has no description;
    the v1 request still carries the call's content (the diff), as the client shows it."""
    subject = {"type": "tool_call", "toolCall": {"toolCallId": "c", "status": "pending"}}
    out, _ = permission_request_to_v1(
        v2_request(title="Approve?", subject=subject), shown=[_text("the diff")]
    )
    assert v1_request_json(out)["toolCall"]["content"] == [text_item("the diff")]


def test_a_subjects_own_content_is_shown_without_a_tracking_caller() -> None:
    item = {"type": "content", "content": {"type": "text", "text": "the change"}}
    subject = {"type": "tool_call", "toolCall": {"toolCallId": "c", "content": [item]}}
    out, _ = permission_request_to_v1(v2_request(title="Make edits?", subject=subject))
    assert v1_request_json(out)["toolCall"]["content"] == [text_item("the change")]


def test_the_subject_is_mapped_like_an_update() -> None:
    subject = {
        "type": "tool_call",
        "toolCall": {
            "toolCallId": "c",
            "title": "Approve?",
            "status": "cancelled",
            "rawInput": None,
            "content": [text_item("x")],
        },
        "_meta": {"s": 1},
    }
    out, losses = permission_request_to_v1(v2_request(subject=subject, _meta={"r": 1}))
    assert v1_request_json(out) == {
        "sessionId": "s",
        "toolCall": {
            "toolCallId": "c",
            "title": "Approve?",
            "status": "failed",
            "content": [text_item("x")],
        },
        "options": [ALLOW, REJECT],
        "_meta": {"r": 1},
    }
    assert paths(losses) == [
        "$.subject._meta",
        "$.subject.toolCall.status",
        "$.subject.toolCall.rawInput",
    ]


def test_command_subject_gets_a_synthetic_execute_call() -> None:
    subject = {"type": "command", "command": "cargo test", "cwd": "/w", "terminalId": "t1"}
    req = v2_request(title="Run tests?", description="It is slow", subject=subject)
    out, losses = permission_request_to_v1(req, request_id=7)
    assert v1_request_json(out)["toolCall"] == {
        "toolCallId": "_acp_permission_7",
        "title": "Run tests?",
        "kind": "execute",
        "status": "pending",
        "content": [
            text_item("It is slow"),
            text_item("```\n$ cargo test\n```\nWorking directory: /w"),
        ],
        "rawInput": {"command": "cargo test", "cwd": "/w"},
    }
    assert paths(losses) == ["$.subject.terminalId", "$.subject"]
    assert "synthetic tool call" in losses.losses[1].reason
    with pytest.raises(ConversionError) as caught:
        permission_request_to_v1(req, strict=True)
    assert caught.value.path == "$.subject"


def test_command_subject_naming_a_call_uses_its_id() -> None:
    subject = {"type": "command", "command": "ls", "cwd": "/w", "toolCallId": "call_9"}
    out, _ = permission_request_to_v1(v2_request(subject=subject), request_id=7)
    assert out is not None and out.tool_call.tool_call_id == "call_9"
    assert out.tool_call.kind == "execute"


def test_command_subject_for_a_call_the_client_shows_shows_the_command_in_it() -> None:
    subject = {"type": "command", "command": "rm -rf ~", "cwd": "/w", "toolCallId": "call_9"}
    req = v2_request(title="Run `rm -rf ~`?", description="Cleans up", subject=subject)
    out, losses = permission_request_to_v1(req, shown=[_text("README text")])
    assert v1_request_json(out)["toolCall"] == {
        "toolCallId": "call_9",
        "title": "Run `rm -rf ~`?",
        "content": [
            text_item("Cleans up"),
            text_item("```\n$ rm -rf ~\n```\nWorking directory: /w"),
            text_item("README text"),
        ],
    }
    assert paths(losses) == ["$.subject", "$.title"]


def _text(value: str) -> v1.Content:
    return v1.Content(content=v1.TextContent(text=value))


@pytest.mark.parametrize(
    "subject",
    [{}, {"subject": None}, {"subject": {"type": "_elicit", "url": "https://x"}}],
    ids=["absent", "null", "unknown"],
)
def test_subjectless_and_unknown_subjects_get_a_synthetic_call(subject: Json) -> None:
    req = v2_request(title="Continue?", description="The agent wants to go on.", **subject)
    out, losses = permission_request_to_v1(req, request_id="r-1")
    assert v1_request_json(out)["toolCall"] == {
        "toolCallId": "_acp_permission_r-1",
        "title": "Continue?",
        "kind": "other",
        "status": "pending",
        "content": [text_item("The agent wants to go on.")],  # the bridge owns this card
    }
    assert paths(losses) == ["$.subject"]
    with pytest.raises(ConversionError):
        permission_request_to_v1(req, strict=True)


def test_synthetic_id_without_a_request_id_is_a_digest_of_the_request() -> None:
    a, b = v2_request(title="One?"), v2_request(title="Two?")
    assert synthetic_tool_call_id(a) == synthetic_tool_call_id(v2_request(title="One?"))
    assert synthetic_tool_call_id(a) != synthetic_tool_call_id(b)
    assert synthetic_tool_call_id(a).startswith("_acp_permission_")
    assert len(synthetic_tool_call_id(a)) == len("_acp_permission_") + 16
    out, _ = permission_request_to_v1(a)
    assert out is not None and out.tool_call.tool_call_id == synthetic_tool_call_id(a)
    assert synthetic_tool_call_id(a, 12) == "_acp_permission_12"


def test_no_option_left_means_not_sent() -> None:
    subject = {"type": "tool_call", "toolCall": {"toolCallId": "c", "title": "Approve?"}}
    odd = {"optionId": "p", "name": "Later", "kind": "_defer"}
    out, losses = permission_request_to_v1(v2_request(subject=subject, options=[odd]))
    assert out is None
    assert paths(losses) == ["$.options[0]", "$.options"]
    assert "cancelled" in losses.losses[-1].reason
    with pytest.raises(ConversionError) as caught:
        permission_request_to_v1(v2_request(subject=subject, options=[odd]), strict=True)
    assert caught.value.path == "$.options[0]"


def test_a_reject_option_of_an_unknown_kind_never_leaves_only_allow() -> None:
    subject = {"type": "tool_call", "toolCall": {"toolCallId": "c", "title": "Approve?"}}
    deny = {"optionId": "n", "name": "No, and explain", "kind": "_reject_with_reason"}
    out, losses = permission_request_to_v1(v2_request(subject=subject, options=[ALLOW, deny]))
    assert out is None  # not sent: the agent is answered `cancelled`
    assert paths(losses) == ["$.options[1]", "$.options", "$.options"]
    assert "no reject option is left" in losses.losses[1].reason
    kept, _ = permission_request_to_v1(v2_request(subject=subject, options=[ALLOW, REJECT, deny]))
    assert kept is not None and [o.option_id for o in kept.options] == ["a", "r"]


def test_a_repeated_option_id_keeps_the_first() -> None:
    subject = {"type": "tool_call", "toolCall": {"toolCallId": "c", "title": "Approve?"}}
    twin = {"optionId": "a", "name": "Reject", "kind": "reject_once"}
    out, losses = permission_request_to_v1(v2_request(subject=subject, options=[ALLOW, twin]))
    assert v1_request_json(out)["options"] == [ALLOW]
    assert paths(losses) == ["$.options[1]"]
    assert "duplicate option id 'a'" in losses.losses[0].reason


def test_options_are_copied_with_meta_and_without_unknown_keys() -> None:
    subject = {"type": "tool_call", "toolCall": {"toolCallId": "c", "title": "Approve?"}}
    option = {**ALLOW, "zzOpt": 1, "_meta": {"m": None}}
    out, losses = permission_request_to_v1(v2_request(subject=subject, options=[option]))
    assert v1_request_json(out)["options"] == [{**ALLOW, "_meta": {"m": None}}]
    assert paths(losses) == ["$.options[0].zzOpt"]


# ============================================================================================
# Permission responses (D46 (permission mapping))


def v2_response(outcome: Json, **fields: Json) -> v2.RequestPermissionResponse:
    body = {"outcome": outcome, **fields}
    return decode(json.dumps(body), v2.RequestPermissionResponse).value


def test_v1_responses_map_one_to_one() -> None:
    selected = decode(
        json.dumps({"outcome": {"outcome": "selected", "optionId": "a", "_meta": {"k": 1}}}),
        v1.RequestPermissionResponse,
    ).value
    assert as_json(permission_response_to_v2(selected)) == {
        "outcome": {"outcome": "selected", "optionId": "a", "_meta": {"k": 1}}
    }
    cancelled = decode(
        json.dumps({"outcome": {"outcome": "cancelled"}, "_meta": {"r": 2}}),
        v1.RequestPermissionResponse,
    ).value
    assert as_json(permission_response_to_v2(cancelled)) == {
        "outcome": {"outcome": "cancelled"},
        "_meta": {"r": 2},
    }


def test_v2_selected_response_is_copied() -> None:
    resp = v2_response({"outcome": "selected", "optionId": "a", "_meta": {"k": 1}}, _meta={"r": 1})
    out, losses = permission_response_to_v1(resp, strict=True)
    assert as_json(out) == {
        "outcome": {"outcome": "selected", "optionId": "a", "_meta": {"k": 1}},
        "_meta": {"r": 1},
    }
    assert not losses


def test_v2_cancelled_response_loses_its_meta() -> None:
    out, losses = permission_response_to_v1(
        v2_response({"outcome": "cancelled", "_meta": {"k": 1}})
    )
    assert as_json(out) == {"outcome": {"outcome": "cancelled"}}
    assert paths(losses) == ["$.outcome._meta"]


@pytest.mark.parametrize("strict", [False, True])
def test_c16_unknown_outcome_is_cancelled_never_approval(strict: bool) -> None:
    resp = v2_response({"outcome": "_defer", "reason": "needs-review", "retryAfterSeconds": 30})
    out, losses = permission_response_to_v1(resp, strict=strict)  # never raises: an answer
    assert as_json(out) == {"outcome": {"outcome": "cancelled"}}
    assert paths(losses) == ["$.outcome"]


# ============================================================================================
# session_update_to_v1 (D46 (session-update mapping), D30)


def test_tool_call_update_becomes_a_v1_tool_call_update() -> None:
    update = v2_session(
        {"sessionUpdate": "tool_call_update", "toolCallId": "a", "status": "paused"}
    )
    out, losses = session_update_to_v1(update)
    assert type(out) is v1.SessionToolCallUpdate
    assert v1_message(out) == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "a",
        "status": "in_progress",
    }
    assert paths(losses) == ["$.status"]


def test_c20_a_content_chunk_cannot_be_converted_statelessly() -> None:
    chunk = v2_session(
        {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "a", "content": text_item("A")}
    )
    out, losses = session_update_to_v1(chunk)
    assert out is None
    assert paths(losses) == ["$"]
    assert "cannot be represented by a stateless v2-to-v1 adapter" in losses.losses[0].reason
    with pytest.raises(ConversionError) as caught:
        session_update_to_v1(chunk, strict=True)
    assert "stateless v2-to-v1 adapter" in caught.value.reason


@pytest.mark.parametrize(
    "update",
    [
        {"sessionUpdate": "terminal_update", "terminalId": "t", "command": "ls"},
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": "aGk="},
    ],
    ids=["terminal_update", "terminal_output_chunk"],
)
def test_terminal_updates_are_dropped(update: Json) -> None:
    out, losses = session_update_to_v1(v2_session(update))
    assert out is None
    assert paths(losses) == ["$"] and update["sessionUpdate"] in losses.losses[0].reason
    with pytest.raises(ConversionError):
        session_update_to_v1(v2_session(update), strict=True)


V2_ONLY = [
    {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
    {"sessionUpdate": "agent_message", "messageId": "m", "content": []},
    {"sessionUpdate": "user_message", "messageId": "m"},
    {"sessionUpdate": "agent_thought", "messageId": "m"},
    {"sessionUpdate": "plan_removed", "planId": "p"},
    {"sessionUpdate": "_x"},
    {"sessionUpdate": "_status_badge", "label": "Indexing", "progress": 0.5},
    {"sessionUpdate": "tool_call", "toolCallId": "a", "title": "t"},  # v1-only: D17
    {"sessionUpdate": "current_mode_update", "currentModeId": "ask"},
    {"sessionUpdate": "notice", "severity": "info", "title": "Hi"},
    {"sessionUpdate": "compaction_update", "compactionId": "c", "status": "in_progress"},
    {
        "sessionUpdate": "compaction_summary_chunk",
        "compactionId": "c",
        "content": {"type": "text", "text": "s"},
    },
]


@pytest.mark.parametrize("update", V2_ONLY, ids=lambda u: str(u["sessionUpdate"]))
def test_c19_updates_without_a_v1_form_are_dropped_never_forwarded_raw(update: Json) -> None:
    out, losses = session_update_to_v1(v2_session(update))
    assert out is None
    assert paths(losses) == ["$"]
    with pytest.raises(ConversionError):
        session_update_to_v1(v2_session(update), strict=True)


def test_notices_and_compaction_go_to_clients_that_advertised_them() -> None:
    notice = {"sessionUpdate": "notice", "severity": "warning", "title": "Slow", "zz": 1}
    out, losses = session_update_to_v1(v2_session(notice), notices=True)
    assert v1_message(out) == {"sessionUpdate": "notice", "severity": "warning", "title": "Slow"}
    assert paths(losses) == ["$.zz"]
    compaction = {
        "sessionUpdate": "compaction_update",
        "compactionId": "c",
        "status": "completed",
        "summary": [
            {"type": "text", "text": "s", "annotations": {"audience": ["_bot"]}},
            {"type": "_chart"},
        ],
    }
    out, losses = session_update_to_v1(v2_session(compaction), compaction=True)
    assert v1_message(out) == {
        "sessionUpdate": "compaction_update",
        "compactionId": "c",
        "status": "completed",
        "summary": [{"type": "text", "text": "s", "annotations": {"audience": []}}],
    }
    assert paths(losses) == ["$.summary[0].annotations.audience[0]", "$.summary[1]"]
    chunk = {
        "sessionUpdate": "compaction_summary_chunk",
        "compactionId": "c",
        "content": {"type": "text", "text": "s"},
    }
    out, losses = session_update_to_v1(v2_session(chunk), compaction=True)
    assert v1_message(out) == chunk and not losses


@pytest.mark.parametrize(
    "tag", ["user_message_chunk", "agent_message_chunk", "agent_thought_chunk"]
)
def test_message_chunks_keep_their_variant(tag: str) -> None:
    update = {
        "sessionUpdate": tag,
        "messageId": "m1",
        "content": {"type": "resource_link", "name": "n", "uri": "u", "icons": [{"src": "x"}]},
        "_meta": {"k": None},
        "zzChunk": 1,
    }
    out, losses = session_update_to_v1(v2_session(update))
    assert isinstance(out, v1.OpaqueSessionUpdate)
    assert v1_message(out) == {
        "sessionUpdate": tag,
        "messageId": "m1",
        "content": {"type": "resource_link", "name": "n", "uri": "u"},
        "_meta": {"k": None},
    }
    assert sorted(paths(losses)) == ["$.content.icons", "$.zzChunk"]
    with pytest.raises(ConversionError):
        session_update_to_v1(v2_session(update), strict=True)


@pytest.mark.parametrize(
    "content",
    [{"type": "_chart"}, {"type": "text"}, None, "text"],
    ids=["unknown", "invalid", "null", "string"],
)
def test_a_message_chunk_v1_cannot_hold_is_dropped(content: Json) -> None:
    update = {"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": content}
    out, losses = session_update_to_v1(v2_session(update))
    assert out is None
    assert paths(losses) == ["$"] and "$.content" in losses.losses[0].reason
    with pytest.raises(ConversionError):
        session_update_to_v1(v2_session(update), strict=True)


def test_plan_update_becomes_the_v1_plan() -> None:
    update = {
        "sessionUpdate": "plan_update",
        "plan": {
            "type": "items",
            "planId": "p1",
            "entries": [
                {"content": "a", "priority": "high", "status": "completed"},
                {"content": "b", "priority": "_urgent", "status": "_blocked"},
                {"content": "c", "priority": "low", "status": "cancelled"},
            ],
        },
        "_meta": {"m": 1},
    }
    out, losses = session_update_to_v1(v2_session(update))
    assert v1_message(out) == {
        "sessionUpdate": "plan",
        "entries": [
            {"content": "a", "priority": "high", "status": "completed"},
            {"content": "b", "priority": "medium", "status": "pending"},
        ],
        "_meta": {"m": 1},
    }
    assert paths(losses) == [
        "$.plan.planId",
        "$.plan.entries[1].status",
        "$.plan.entries[1].priority",
        "$.plan.entries[2]",
    ]
    other = {"sessionUpdate": "plan_update", "plan": {"type": "_doc", "planId": "p", "url": "x"}}
    out, losses = session_update_to_v1(v2_session(other))
    assert out is None and paths(losses) == ["$"]


def test_available_commands_into_the_v1_shape() -> None:
    update = {
        "sessionUpdate": "available_commands_update",
        "availableCommands": [
            {
                "type": "command",
                "name": "plan",
                "description": "Plan",
                "input": {"type": "text", "hint": "goal"},
            },
            {"type": "command", "name": "web", "description": "Web", "input": {"type": "_form"}},
            {"type": "_macro", "name": "m", "description": "Macro"},
            {"type": "command", "name": "x", "description": "X", "input": None},
        ],
    }
    out, losses = session_update_to_v1(v2_session(update))
    assert v1_message(out) == {
        "sessionUpdate": "available_commands_update",
        "availableCommands": [
            {"name": "plan", "description": "Plan", "input": {"hint": "goal"}},
            {"name": "web", "description": "Web"},
            {"name": "x", "description": "X", "input": None},
        ],
    }
    assert paths(losses) == ["$.availableCommands[1].input", "$.availableCommands[2]"]


CONFIG_V2 = {
    "sessionUpdate": "config_option_update",
    "configOptions": [
        {
            "type": "select",
            "configId": "model",
            "name": "Model",
            "currentValue": "fast",
            "options": [
                {
                    "groupId": "g",
                    "name": "Group",
                    "options": [{"value": "fast", "name": "Fast"}],
                }
            ],
        },
        {"type": "boolean", "configId": "yolo", "name": "YOLO", "currentValue": False},
    ],
}
CONFIG_V1 = {
    "sessionUpdate": "config_option_update",
    "configOptions": [
        {
            "type": "select",
            "id": "model",
            "name": "Model",
            "currentValue": "fast",
            "options": [
                {"group": "g", "name": "Group", "options": [{"value": "fast", "name": "Fast"}]}
            ],
        },
        {"type": "boolean", "id": "yolo", "name": "YOLO", "currentValue": False},
    ],
}


def test_config_options_into_the_v1_shape_and_back() -> None:
    out, losses = session_update_to_v1(v2_session(CONFIG_V2))
    assert v1_message(out) == CONFIG_V1 and not losses
    back, losses = session_update_to_v2(v1_session(CONFIG_V1))
    assert v2_message(back) == CONFIG_V2 and not losses
    unknown = {
        "sessionUpdate": "config_option_update",
        "configOptions": [{"type": "_slider", "configId": "t", "name": "T", "min": 0}],
    }
    out, losses = session_update_to_v1(v2_session(unknown))
    assert v1_message(out) == {"sessionUpdate": "config_option_update", "configOptions": []}
    assert paths(losses) == ["$.configOptions[0]"]


@pytest.mark.parametrize(
    "update",
    [
        {
            "sessionUpdate": "session_info_update",
            "title": None,
            "updatedAt": "2025-01-01T00:00:00Z",
        },
        {
            "sessionUpdate": "usage_update",
            "used": 5,
            "size": 10,
            "cost": {"amount": 1.5, "currency": "USD"},
        },
    ],
    ids=["session_info_update", "usage_update"],
)
def test_shared_variants_are_copied(update: Json) -> None:
    out, losses = session_update_to_v1(v2_session(update), strict=True)
    assert v1_message(out) == update and not losses
    back, losses = session_update_to_v2(v1_session(update), strict=True)
    assert v2_message(back) == update and not losses


def test_an_invalid_payload_is_dropped_not_forwarded() -> None:
    out, losses = session_update_to_v1(v2_session({"sessionUpdate": "usage_update", "used": 1}))
    assert out is None
    assert "UsageUpdate" in losses.losses[0].reason
    with pytest.raises(ConversionError):
        session_update_to_v1(v2_session({"sessionUpdate": "usage_update", "used": 1}), strict=True)


# ============================================================================================
# v1 -> v2: session_update_to_v2 and permission_request_to_v2 (D46 (permission mapping,
# session-update mapping), D5, D37)


def test_v1_tool_calls_become_v2_tool_call_updates() -> None:
    c1 = v1_session(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "c1",
            "title": "Edit",
            "kind": "other",
            "status": "pending",
            "content": [],
            "locations": [],
        }
    )
    out, losses = session_update_to_v2(c1, repeated=True)  # a repeat merges (D9)
    assert type(out) is v2.SessionToolCallUpdate
    assert v2_message(out) == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "title": "Edit",
    }
    assert not losses
    first, _ = session_update_to_v2(c1)  # the first keeps what the agent set
    assert v2_message(first)["status"] == "pending" and v2_message(first)["kind"] == "other"
    c3 = v1_session(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c1",
            "title": None,
            "content": None,
            "status": "completed",
        }
    )
    out, _ = session_update_to_v2(c3)
    assert v2_message(out) == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "status": "completed",
    }
    terminal = v1_session(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c1",
            "content": [{"type": "terminal", "terminalId": "t"}],
        }
    )
    out, losses = session_update_to_v2(terminal)
    assert v2_message(out)["content"] == [] and paths(losses) == ["$.content[0]"]
    with pytest.raises(ConversionError):
        session_update_to_v2(terminal, strict=True)


def test_v1_message_chunks_need_a_message_id() -> None:
    chunk = {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": "hi", "annotations": {"priority": 7}},
    }
    out, losses = session_update_to_v2(v1_session(chunk))
    assert out is None and paths(losses) == ["$.content.annotations.priority", "$"]
    with pytest.raises(ConversionError) as caught:
        session_update_to_v2(v1_session(chunk), strict=True)
    assert caught.value.path == "$" and "messageId" in caught.value.reason
    out, _ = session_update_to_v2(v1_session(chunk), message_id="m7")
    assert v2_message(out) == {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": "hi", "annotations": {}},
        "messageId": "m7",
    }
    out, losses = session_update_to_v2(v1_session({**chunk, "messageId": "own"}), message_id="m7")
    assert v2_message(out)["messageId"] == "own"


def test_v1_plan_becomes_a_plan_update_and_round_trips() -> None:
    plan = {
        "sessionUpdate": "plan",
        "entries": [{"content": "a", "priority": "high", "status": "in_progress"}],
        "_meta": {"m": 1},
    }
    out, losses = session_update_to_v2(v1_session(plan), strict=True)
    assert v2_message(out) == {
        "sessionUpdate": "plan_update",
        "plan": {"type": "items", "planId": "plan", "entries": plan["entries"]},
        "_meta": {"m": 1},
    }
    assert not losses
    assert out is not None
    back, losses = session_update_to_v1(out)
    assert v1_message(back) == plan
    assert paths(losses) == ["$.plan.planId"]


def test_v1_commands_into_the_v2_shape_and_back() -> None:
    update = {
        "sessionUpdate": "available_commands_update",
        "availableCommands": [
            {"name": "plan", "description": "Plan", "input": {"hint": "goal"}},
            {"name": "x", "description": "X"},
        ],
    }
    out, losses = session_update_to_v2(v1_session(update), strict=True)
    assert v2_message(out) == {
        "sessionUpdate": "available_commands_update",
        "availableCommands": [
            {
                "type": "command",
                "name": "plan",
                "description": "Plan",
                "input": {"type": "text", "hint": "goal"},
            },
            {"type": "command", "name": "x", "description": "X"},
        ],
    }
    assert out is not None
    back, losses = session_update_to_v1(out, strict=True)
    assert v1_message(back) == update and not losses


@pytest.mark.parametrize(
    "update",
    [
        {"sessionUpdate": "current_mode_update", "currentModeId": "ask"},
        {"sessionUpdate": "_vendor", "x": 1},
        {"sessionUpdate": "usage_update", "used": 1},  # invalid: dropped, not forwarded
    ],
    ids=["current_mode_update", "unknown", "invalid"],
)
def test_v1_updates_without_a_v2_form_are_dropped(update: Json) -> None:
    out, losses = session_update_to_v2(v1_session(update))
    assert out is None and losses
    with pytest.raises(ConversionError):
        session_update_to_v2(v1_session(update), strict=True)


@pytest.mark.parametrize(
    "update",
    [
        {"sessionUpdate": "notice", "severity": "info", "title": "Hi", "description": None},
        {
            "sessionUpdate": "compaction_update",
            "compactionId": "c",
            "status": "failed",
            "error": "x",
        },
        {
            "sessionUpdate": "compaction_summary_chunk",
            "compactionId": "c",
            "content": {"type": "text", "text": "s"},
        },
    ],
    ids=lambda u: str(u["sessionUpdate"]),
)
def test_v1_notices_and_compaction_are_copied(update: Json) -> None:
    out, losses = session_update_to_v2(v1_session(update), strict=True)
    assert v2_message(out) == update and not losses


def v1_request(**fields: Json) -> v1.RequestPermissionRequest:
    body = {
        "sessionId": "s",
        "toolCall": {"toolCallId": "call_1", "title": "Read file"},
        "options": [ALLOW],
        **fields,
    }
    return decode(json.dumps(body), v1.RequestPermissionRequest).value


def v2_request_json(req: v2.RequestPermissionRequest | None) -> Json:
    assert req is not None
    return as_json(v2.PermissionRequestMessage(id=1, params=req))["params"]


def test_c14_v1_request_to_v2() -> None:
    out, losses = permission_request_to_v2(v1_request(_meta={"r": 1}), strict=True)
    assert v2_request_json(out) == {
        "sessionId": "s",
        "title": "Read file",
        "subject": {
            "type": "tool_call",
            "toolCall": {"toolCallId": "call_1", "title": "Read file"},
        },
        "options": [ALLOW],
        "_meta": {"r": 1},
    }
    assert not losses


@pytest.mark.parametrize(
    "title", [{}, {"title": None}, {"title": ""}], ids=["absent", "null", "empty"]
)
def test_c15_untitled_v1_request(title: Json) -> None:
    req = v1_request(toolCall={"toolCallId": "call_2", **title})
    out, losses = permission_request_to_v2(req)
    assert out is not None and out.title == "Permission required"
    assert paths(losses) == ["$.toolCall.title"]
    with pytest.raises(ConversionError) as caught:
        permission_request_to_v2(req, strict=True)
    assert caught.value.path == "$.toolCall.title"
    out, _ = permission_request_to_v2(req, stored_title="Read main.py")
    assert out is not None and out.title == "Read main.py"
    v2_request_json(out)


def test_v1_request_keeps_prompt_text_in_content_and_forwards_unknown_option_kinds() -> None:
    req = v1_request(
        toolCall={
            "toolCallId": "c",
            "title": "Edit",
            "content": [text_item("Allow edits?")],
            "zz": 1,
        },
        options=[{"optionId": "p", "name": "Project", "kind": "_allow_project", "zzOpt": 2}],
    )
    out, losses = permission_request_to_v2(req)
    data = v2_request_json(out)
    assert data["subject"]["toolCall"]["content"] == [text_item("Allow edits?")]
    assert data["options"] == [{"optionId": "p", "name": "Project", "kind": "_allow_project"}]
    assert paths(losses) == ["$.toolCall.zz", "$.options[0].zzOpt"]


def test_v1_request_without_options_is_not_sent() -> None:
    out, losses = permission_request_to_v2(v1_request(options=[]))
    assert out is None and paths(losses) == ["$.options"]
    with pytest.raises(ConversionError):
        permission_request_to_v2(v1_request(options=[]), strict=True)


# ============================================================================================
# Properties: v2 tool-call updates to v1

TEXT = st.text(st.characters(blacklist_categories=["Cs"]), max_size=8)
NAME = st.text(st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=6)
SCALAR = st.integers() | TEXT | st.booleans()
VALUE = st.recursive(SCALAR, lambda inner: st.lists(inner, max_size=2), max_leaves=4)
EXTRAS = st.dictionaries(TEXT.map(lambda s: "zz" + s), SCALAR, max_size=1)
ITEM_META = st.none() | st.dictionaries(TEXT, st.none() | SCALAR, max_size=2)  # scoped: anything


def obj(
    required: dict[str, Any], optional: dict[str, Any], *, full: bool
) -> st.SearchStrategy[dict[str, Json]]:
    base = st.fixed_dictionaries(required, optional={**optional, "_meta": ITEM_META})
    if not full:
        return base
    return st.tuples(base, EXTRAS).map(lambda pair: {**pair[1], **pair[0]})


def nullable(strategy: st.SearchStrategy[Json]) -> st.SearchStrategy[Json]:
    return st.none() | strategy


def tagged(key: str, tag: str, strategy: st.SearchStrategy[dict[str, Json]]) -> Any:
    return strategy.map(lambda value: {key: tag, **value})


def content_items(full: bool) -> st.SearchStrategy[Json]:
    """v2 tool-call content items: the subset v1 represents exactly, or anything."""
    roles = ["user", "assistant", "_bot"] if full else ["user", "assistant"]
    # Lossy features are required fields here, so that hypothesis meets them often.
    audience = st.lists(st.sampled_from(roles), max_size=3)
    annotations = obj(
        {"audience": audience} if full else {},
        {
            **({} if full else {"audience": nullable(audience)}),
            "lastModified": nullable(TEXT),
            "priority": nullable(st.sampled_from([0.0, 0.5, 1.0])),
        },
        full=full,
    )
    common = {"annotations": annotations | st.none()}
    link: dict[str, Any] = {
        "title": nullable(TEXT),
        "description": nullable(TEXT),
        "mimeType": nullable(TEXT),
        "size": nullable(
            st.integers(0, 2**63 - 1) | (st.integers(2**63, 2**64) if full else st.nothing())
        ),
        **common,
    }
    if full:
        icon = st.fixed_dictionaries({"src": TEXT})
        link["icons"] = st.lists(icon, min_size=1, max_size=2) | st.sampled_from([[], None])
    resource = obj({"uri": TEXT, "text": TEXT}, {}, full=full) | obj(
        {"uri": TEXT, "blob": TEXT}, {"mimeType": nullable(TEXT)}, full=full
    )
    blocks = [
        tagged("type", "text", obj({"text": TEXT}, common, full=full)),
        tagged(
            "type",
            "image",
            obj({"data": TEXT, "mimeType": TEXT}, {"uri": nullable(TEXT), **common}, full=full),
        ),
        tagged("type", "audio", obj({"data": TEXT, "mimeType": TEXT}, common, full=full)),
        tagged("type", "resource_link", obj({"name": TEXT, "uri": TEXT}, link, full=full)),
        tagged("type", "resource", obj({"resource": resource}, common, full=full)),
    ]
    if full:
        blocks += [blocks[3], st.fixed_dictionaries({"type": st.just("_chart"), "data": VALUE})]
    # v1 has no place for these on a pure add: only in the full set.
    add_extras = st.fixed_dictionaries(
        {}, optional={"mimeType": nullable(TEXT), "_meta": ITEM_META} if full else {}
    )
    patch_extras = st.fixed_dictionaries({}, optional={"_meta": ITEM_META} if full else {})
    pure_add = st.builds(
        lambda path, text, file_type, change, patch, meta: {
            "type": "diff",
            "changes": [{"operation": "add", "path": path, **file_type, **change}],
            "patch": {"format": "git_patch", "text": git_patch(path, None, text), **patch},
            **meta,
        },
        NAME,
        TEXTS,
        st.sampled_from([{}, {"fileType": "text"}, {"fileType": None}]),
        add_extras,
        patch_extras,
        st.sampled_from([{}, {"_meta": {"d": 1}}, {"_meta": None}]),
    )
    content = tagged("type", "content", obj({"content": st.one_of(blocks)}, {}, full=full))
    items = [content, content, content, pure_add]  # blocks have the most fields: more often
    if full:
        change = st.one_of(
            tagged(
                "operation",
                "add",
                obj(
                    {"path": NAME},
                    {"fileType": nullable(TEXT), "mimeType": nullable(TEXT)},
                    full=True,
                ),
            ),
            tagged(
                "operation", "modify", obj({"path": NAME}, {"fileType": nullable(TEXT)}, full=True)
            ),
            tagged("operation", "delete", obj({"path": NAME}, {}, full=True)),
            tagged("operation", "move", obj({"oldPath": NAME, "path": NAME}, {}, full=True)),
            tagged("operation", "copy", obj({"oldPath": NAME, "path": NAME}, {}, full=True)),
            st.fixed_dictionaries({"operation": st.just("_chmod")}, optional={"path": NAME}),
        )
        patch = obj(
            {
                "format": st.sampled_from(["git_patch", "_hunks"]),
                "text": TEXTS | st.just("```x````"),
            },
            {},
            full=True,
        )
        items += [
            tagged(
                "type",
                "diff",
                obj(
                    {"changes": st.lists(change, max_size=2)}, {"patch": nullable(patch)}, full=True
                ),
            ),
            tagged("type", "terminal", obj({"terminalId": NAME}, {}, full=True)),
            st.fixed_dictionaries({"type": st.just("_widget"), "x": VALUE}),
        ]
    return st.one_of(items)


def tool_call_updates(full: bool) -> st.SearchStrategy[Json]:
    """v2 ``tool_call_update`` values: the subset v1 represents exactly, or anything."""
    location = obj({"path": TEXT}, {"line": nullable(st.integers(1, 2**32 - 1))}, full=full)
    kinds = [*v1.KNOWN_KINDS, *(["_review", "paused"] if full else [])]
    statuses = [*v1.KNOWN_STATUSES, *(["cancelled", "paused", "_x"] if full else [])]
    raw = (st.none() | VALUE) if full else VALUE
    meta_values = (st.none() | SCALAR) if full else SCALAR
    tool_meta = st.dictionaries(TEXT, meta_values, max_size=2)
    optional: dict[str, Any] = {
        "title": nullable(TEXT) if full else TEXT,
        "name": nullable(TEXT) if full else TEXT,
        "kind": nullable(st.sampled_from(kinds)),
        "status": nullable(st.sampled_from(statuses)),
        "content": nullable(st.lists(content_items(full), max_size=3)),
        "locations": nullable(st.lists(location, max_size=2)),
        "rawInput": raw,
        "rawOutput": raw,
        "_meta": (st.none() | tool_meta) if full else tool_meta,
    }
    if full:
        optional["capabilities"] = nullable(st.sampled_from([{}, {"cancel": {}}]))
    base = st.fixed_dictionaries({"toolCallId": TEXT}, optional=optional)
    if full:
        base = st.tuples(base, EXTRAS).map(lambda pair: {**pair[1], **pair[0]})
    return base.map(lambda u: {"sessionUpdate": "tool_call_update", **u})


def _decoded(update: Json) -> tuple[v2.SessionToolCallUpdate, Json]:
    """The update as the model, and the model's own JSON (what the mapping really received)."""
    model = decode(json.dumps(update), v2.SessionToolCallUpdate).value
    return model, to_builtins(model)


def _wire_path(key: str, path: str = "$") -> str:
    return f"{path}.{key}" if key.isidentifier() else f"{path}[{json.dumps(key)}]"


def _covered(path: str, report: LossReport) -> bool:
    return any(
        loss.path == path or loss.path.startswith((path + ".", path + "[")) for loss in report
    )


def _without_empty_icons(item: Json) -> Json:
    block = item.get("content")
    if isinstance(block, dict) and block.get("icons") in (None, []) and "icons" in block:
        block = {key: value for key, value in block.items() if key != "icons"}
        return {**item, "content": block}
    return item


_EXACT: dict[str, Callable[[Json], Json]] = {
    # Per top-level key: the v1 value an exact mapping gives, or _NOT_EXACT (keys not listed:
    # always _NOT_EXACT); an inexact one must be reported.
    "title": lambda v: v,
    "name": lambda v: v,
    "rawInput": lambda v: v,
    "rawOutput": lambda v: v,
    "kind": lambda v: "other" if v is None else v if v in v1.KNOWN_KINDS else _NOT_EXACT,
    "status": lambda v: "pending" if v is None else v if v in v1.KNOWN_STATUSES else _NOT_EXACT,
    "_meta": lambda v: v if isinstance(v, dict) and None not in v.values() else _NOT_EXACT,
}
_NOT_EXACT: object = object()


def _excused(path: str, report: LossReport) -> bool:
    """A loss names ``path`` or an object that contains it."""
    return any(
        path == loss.path or path.startswith((loss.path + ".", loss.path + "[")) for loss in report
    )


def assert_changes_reported(given: Json, out: Json, path: str, report: LossReport) -> None:
    """Wherever ``out`` differs from ``given``, a loss names that place (or contains it)."""
    if _excused(path, report):
        return
    if isinstance(given, dict) and isinstance(out, dict):
        for key in {**given, **out}:
            where = _wire_path(key, path)
            if key in given and key in out:
                assert_changes_reported(given[key], out[key], where, report)
            else:
                assert _excused(where, report), (where, list(report))
    elif isinstance(given, list) and isinstance(out, list) and len(given) == len(out):
        for index, (a, b) in enumerate(zip(given, out, strict=True)):
            assert_changes_reported(a, b, f"{path}[{index}]", report)
    elif isinstance(given, list) and isinstance(out, list):
        assert _covered(path, report), (path, list(report))  # elements removed, each named
    else:
        assert given == out, (path, given, out)


def assert_item_mapped(item: Json, converted: list[Json], report: LossReport, path: str) -> None:
    """A content item is mapped exactly (one v1 item) except where the report says, or the
    report names the item itself (dropped or replaced)."""
    if _excused(path, report):
        return
    assert len(converted) == 1, item
    (out,) = converted
    if item["type"] == "diff":  # a pure add: the v1 diff holds the whole file
        (change,) = item["changes"]
        assert out["type"] == "diff"
        assert out["path"] == change["path"]
        assert git_patch(out["path"], None, out["newText"]) == item["patch"]["text"]
        assert out.get("_meta") == item.get("_meta")
        held = {"operation", "path", "fileType"}  # what the v1 diff says (a text file added)
        for where, fields, known in (
            (f"{path}.changes[0]", change, held),
            (f"{path}.patch", item["patch"], {"format", "text"}),
            (path, item, {"type", "changes", "patch", "_meta"}),
        ):
            for key in fields.keys() - known:
                if fields[key] is not None:  # `null`: nothing to carry
                    assert _excused(_wire_path(key, where), report), key
        return
    assert_changes_reported(_without_empty_icons(item), out, path, report)


def assert_nothing_silently_lost(
    model: v2.ToolCallUpdate, given: Json, out: Json, report: LossReport
) -> None:
    """Every input field or item is in the v1 output exactly as the mapping says, or the report
    names it (its path or a path inside it)."""
    for key, value in given.items():
        if key in ("sessionUpdate", "toolCallId"):
            continue
        path = _wire_path(key)
        if key in ("content", "locations"):
            items = value or []
            assert isinstance(out[key], list) and (items or out[key] == [])  # a clear is []
            if key == "locations":
                for index, location in enumerate(items):
                    assert_changes_reported(
                        location, out[key][index], f"$.locations[{index}]", report
                    )
                continue
            produced: list[Json] = []
            for index, item in enumerate(items):
                item_path = f"$.content[{index}]"
                converted, _ = content_to_v1((model.content or [])[index], path=item_path)
                converted_json = [to_builtins(c) for c in converted]
                assert_item_mapped(item, converted_json, report, item_path)
                produced += converted_json
            assert produced == out[key]
            continue
        if key == "_meta" and isinstance(value, dict):  # null keys left out, the rest kept
            assert_changes_reported(value, out["_meta"], path, report)
            continue
        exact = _EXACT.get(key, lambda v: _NOT_EXACT)
        expected = _NOT_EXACT if value is None and key in _NULL_IS_LOSS else exact(value)
        if expected is _NOT_EXACT:
            assert _covered(path, report), (key, value, list(report))
        else:
            assert out.get(key) == expected, key


_NULL_IS_LOSS = frozenset({"title", "name", "rawInput", "rawOutput", "_meta"})


@settings(max_examples=examples(2.0), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    items=st.lists(content_items(full=True), min_size=1, max_size=4),
    exact=content_items(full=False),
)
def test_any_item_converts_to_valid_v1_and_reports_every_drop(
    items: list[Json], exact: Json, schema_valid: SchemaCheck
) -> None:
    for given_item, representable in [*((item, False) for item in items), (exact, True)]:
        model = v2_item(given_item)
        converted, losses = content_to_v1(model, path="$.content[0]")
        update = v1.SessionToolCallUpdate(tool_call_id="x", content=converted)
        message = as_json(
            v1.SessionUpdateMessage(params=v1.SessionNotification(session_id="s", update=update))
        )
        schema_valid(message, "v1")
        mapped = message["params"]["update"]["content"]
        assert_item_mapped(to_builtins(model), mapped, losses, "$.content[0]")
        if representable:
            assert not losses, list(losses)
        try:
            strict = content_to_v1(model, path="$.content[0]", strict=True)
        except ConversionError:
            assert losses and not representable
        else:
            assert strict == (converted, losses)


@settings(max_examples=examples(1.0), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(update=tool_call_updates(full=False))
def test_the_representable_subset_converts_exactly(update: Json, schema_valid: SchemaCheck) -> None:
    model, given_json = _decoded(update)
    out, losses = session_update_to_v1(model)
    assert out is not None
    message = as_json(
        v1.SessionUpdateMessage(params=v1.SessionNotification(session_id="s", update=out))
    )
    schema_valid(message, "v1")
    assert not losses, list(losses)
    assert session_update_to_v1(model, strict=True) == (out, losses)
    assert_nothing_silently_lost(model, given_json, message["params"]["update"], losses)


@settings(max_examples=examples(1.0), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(update=tool_call_updates(full=True))
def test_any_update_converts_to_valid_v1_and_reports_every_drop(
    update: Json, schema_valid: SchemaCheck
) -> None:
    model, given_json = _decoded(update)
    out, losses = session_update_to_v1(model)
    assert out is not None
    message = as_json(
        v1.SessionUpdateMessage(params=v1.SessionNotification(session_id="s", update=out))
    )
    schema_valid(message, "v1")
    assert_nothing_silently_lost(model, given_json, message["params"]["update"], losses)
    for loss in losses:
        assert loss.path.startswith("$")
    try:
        strict = session_update_to_v1(model, strict=True)
    except ConversionError as error:
        assert losses, "strict mode raised where lossy mode lost nothing"
        assert error.path in paths(losses) or _covered(error.path, losses)
    else:
        assert strict == (out, losses)  # only the every-mode drops (D19, D36) were reported


@settings(max_examples=examples(0.5), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(update=tool_call_updates(full=True), fallback=st.none() | TEXT)
def test_a_first_sight_is_always_a_valid_titled_v1_tool_call(
    update: Json, fallback: str | None, schema_valid: SchemaCheck
) -> None:
    model, _ = _decoded(update)
    out, _ = tool_call_to_v1(model, title_fallback=fallback)
    message = as_json(
        v1.SessionUpdateMessage(params=v1.SessionNotification(session_id="s", update=out))
    )
    schema_valid(message, "v1")
    assert out.title, "v1 needs a title and D10 never gives an empty one"
    data = message["params"]["update"]
    assert isinstance(data["kind"], str) and isinstance(data["status"], str)  # always there
    assert data.get("content") != [] and data.get("locations") != [] and data.get("_meta") != {}
    assert all(data[key] is not None for key in ("rawInput", "rawOutput", "name") if key in data)
