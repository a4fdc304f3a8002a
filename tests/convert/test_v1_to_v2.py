"""The stateless v1 -> v2 tool-call mapping (D46 (field mapping to diff conversion, v1 to v2
bridge); D7, D8, D9, D19, D26, D32, D38).

Inputs are decoded from JSON with ``acp_toolcalls.decode`` so that ``null`` and omitted reach the
mapping exactly as they do on the wire. Every v2 object a test encodes is checked against the v2
schema by the autouse guard in conftest.py; the property tests also check whole messages with
the ``schema_valid`` fixture.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_toolcalls import UNSET, decode, encode, v1, v2
from acp_toolcalls.convert import (
    ConversionError,
    Loss,
    LossReport,
    content_to_v2,
    diff_to_v2,
    git_patch,
    tool_call_to_v2,
    tool_call_update_to_v2,
)
from acp_toolcalls.models import V1_TOOL_CALL_FIELDS

Json = Any
SchemaCheck = Callable[..., None]  # the `schema_valid` fixture of conftest.py


def examples(fraction: float) -> int:
    """A share of the loaded hypothesis profile's example count."""
    profile = settings.default
    assert profile is not None  # hypothesis always has a profile loaded
    return max(10, math.ceil(profile.max_examples * fraction))


def v1_call(**fields: Json) -> v1.ToolCall:
    data = json.dumps({"sessionUpdate": "tool_call", **fields})
    return decode(data, v1.ToolCall).value


def v1_update(**fields: Json) -> v1.ToolCallUpdate:
    return decode(json.dumps(fields), v1.ToolCallUpdate).value


def v1_item(item: Json) -> v1.ToolCallContent:
    # A one-item update is the simplest way to decode a content item through the real reader.
    content = v1_update(toolCallId="x", content=[item]).content
    assert isinstance(content, list) and len(content) == 1, "the item did not decode"
    return content[0]


def as_json(obj: Any) -> Json:
    return json.loads(encode(obj))


def paths(report: LossReport) -> list[str]:
    return [loss.path for loss in report]


REF_PATCH = (
    "diff --git /path /path\n--- /path\n+++ /path\n@@ -1 +1 @@\n-old contents\n"
    "\\ No newline at end of file\n+new contents\n\\ No newline at end of file\n"
)
ADD_PATCH = (
    "diff --git /repo/new.txt /repo/new.txt\nnew file mode 100644\n--- /dev/null\n"
    "+++ /repo/new.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n"
)


# ============================================================================================
# Loss, LossReport, ConversionError


def test_loss_report_is_an_immutable_sequence_of_losses() -> None:
    a, b = Loss("$.content[2]", "dropped"), Loss("$.locations[0].line", "line 0")
    report = LossReport([a, b])
    assert report.losses == (a, b)
    assert list(report) == [a, b]
    assert len(report) == 2
    assert report
    assert str(report) == "$.content[2]: dropped\n$.locations[0].line: line 0"
    assert report == LossReport((a, b))
    assert hash(report) == hash(LossReport((a, b)))
    assert report + LossReport([a]) == LossReport([a, b, a])
    with pytest.raises(AttributeError):
        report._losses = ()
    with pytest.raises(AttributeError):
        a.path = "$"  # type: ignore[misc]  # a frozen attribute, deliberately


def test_empty_loss_report_is_false() -> None:
    report = LossReport()
    assert not report
    assert len(report) == 0
    assert str(report) == ""


def test_conversion_error_is_a_value_error_with_path_and_reason() -> None:
    error = ConversionError("$.content[0]", "no v2 equivalent")
    assert isinstance(error, ValueError)
    assert (error.path, error.reason) == ("$.content[0]", "no v2 equivalent")
    assert str(error) == "no v2 equivalent at $.content[0]"


# ============================================================================================
# git_patch (D46 (diff conversion))


def test_git_patch_reference_vector_from_the_removed_rust_converter() -> None:
    assert git_patch("/path", "old contents", "new contents") == REF_PATCH


def test_git_patch_add_vector() -> None:
    assert git_patch("/repo/new.txt", None, "a\nb\n") == ADD_PATCH


@pytest.mark.parametrize(
    ("path", "written"),
    [
        ("/plain/path.txt", "/plain/path.txt"),
        ("/with space/x", "/with space/x"),  # Git does not quote spaces
        ('/a"b', '"/a\\"b"'),
        ("/a\\b", '"/a\\\\b"'),
        ("/a\tb", '"/a\\tb"'),
        ("/a\nb", '"/a\\nb"'),
        ("/a\rb", '"/a\\rb"'),
        ("/a\x07\x08\x0b\x0cb", '"/a\\a\\b\\v\\fb"'),
        ("/a\x01b", '"/a\\001b"'),
        ("/a\x1bb", '"/a\\033b"'),
        ("/a\x7fb", '"/a\\177b"'),
        ("/caf\u00e9", '"/caf\\303\\251"'),
        ("/\U0001f600", '"/\\360\\237\\230\\200"'),
    ],
)
def test_git_patch_quotes_paths_as_git_does(path: str, written: str) -> None:
    assert git_patch(path, "a\n", "b\n") == (
        f"diff --git {written} {written}\n--- {written}\n+++ {written}\n@@ -1 +1 @@\n-a\n+b\n"
    )
    assert git_patch(path, None, "b\n").splitlines()[:4] == [
        f"diff --git {written} {written}",
        "new file mode 100644",
        "--- /dev/null",
        f"+++ {written}",
    ]


@given(st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from('"\\\x7f\t')))
def test_a_path_is_written_as_gits_quoting_table_says(path: str) -> None:
    # _git_path returns a path with no byte to escape as it is without its table (issue 19).
    from acp_toolcalls.convert._diffs import _QUOTE, _git_path

    raw = path.encode("utf-8", "surrogatepass")
    quoted = "".join(_QUOTE[b] for b in raw)
    assert _git_path(path) == (path if quoted == path else f'"{quoted}"')


@pytest.mark.parametrize(
    ("old", "new", "hunks"),
    [
        # only the old side lacks the final newline
        ("a\nb", "a\nb\n", "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"),
        # only the new side lacks it
        ("a\nb\n", "a\nb", "@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n"),
        # both lack it and the last line is shared context: one marker after it
        ("x\nend", "y\nend", "@@ -1,2 +1,2 @@\n-x\n+y\n end\n\\ No newline at end of file\n"),
        # both lack it on different last lines
        (
            "a",
            "a\nb",
            "@@ -1 +1,2 @@\n-a\n\\ No newline at end of file\n+a\n+b\n"
            "\\ No newline at end of file\n",
        ),
    ],
)
def test_git_patch_marks_a_missing_final_newline_on_each_side(
    old: str, new: str, hunks: str
) -> None:
    assert git_patch("/f", old, new) == f"diff --git /f /f\n--- /f\n+++ /f\n{hunks}"


def test_git_patch_of_an_empty_old_text_is_a_modify_from_zero_lines() -> None:
    assert git_patch("/f", "", "a\n") == "diff --git /f /f\n--- /f\n+++ /f\n@@ -0,0 +1 @@\n+a\n"
    assert git_patch("/f", "", "a") == (
        "diff --git /f /f\n--- /f\n+++ /f\n@@ -0,0 +1 @@\n+a\n\\ No newline at end of file\n"
    )


def test_git_patch_emptying_a_file() -> None:
    assert git_patch("/f", "a\nb\n", "") == (
        "diff --git /f /f\n--- /f\n+++ /f\n@@ -1,2 +0,0 @@\n-a\n-b\n"
    )


def test_git_patch_of_a_new_empty_file_has_headers_only() -> None:
    assert git_patch("/f", None, "") == (
        "diff --git /f /f\nnew file mode 100644\n--- /dev/null\n+++ /f\n"
    )


def test_git_patch_of_identical_texts_is_empty() -> None:
    # Git writes nothing for an unchanged file (and rejects a section without hunks).
    assert git_patch("/f", "same\n", "same\n") == ""
    assert git_patch("/f", "", "") == ""


def test_git_patch_uses_three_lines_of_context_and_separate_hunks() -> None:
    old = "".join(f"line {n}\n" for n in range(1, 21))
    new = old.replace("line 2\n", "LINE 2\n").replace("line 18\n", "LINE 18\n")
    assert git_patch("/f", old, new) == (
        "diff --git /f /f\n--- /f\n+++ /f\n"
        "@@ -1,5 +1,5 @@\n line 1\n-line 2\n+LINE 2\n line 3\n line 4\n line 5\n"
        "@@ -15,6 +15,6 @@\n line 15\n line 16\n line 17\n-line 18\n+LINE 18\n line 19\n"
        " line 20\n"
    )


def test_git_patch_splits_lines_at_newline_only() -> None:
    # CR, form feed and other str.splitlines() separators are line content in Git.
    assert git_patch("/f", "a\r\nb\x0cc\n", "a\r\nb\x0cd\n") == (
        "diff --git /f /f\n--- /f\n+++ /f\n@@ -1,2 +1,2 @@\n a\r\n-b\x0cc\n+b\x0cd\n"
    )


_LINE_TEXTS = st.lists(st.sampled_from(["a", "b", "c\n", "", "d\n", "\n", "e\r"]), max_size=8)


@settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow])
@given(_LINE_TEXTS.map("".join), _LINE_TEXTS.map("".join), st.booleans())
def test_git_patch_hunks_are_difflibs(old: str, new: str, added: bool) -> None:
    # When the sides share no line git_patch writes the one hunk itself (issue 19): the same
    # text difflib makes, which it asks for otherwise.
    import difflib

    from acp_toolcalls.convert._diffs import _lines

    before, after = _lines("" if added else old), _lines(new)
    hunks = difflib.unified_diff(before, after, n=3, lineterm="\n")
    body = "".join(
        line if line.endswith("\n") else f"{line}\n\\ No newline at end of file\n"
        for line in list(hunks)[2:]
    )
    patch = git_patch("/f", None if added else old, new)
    if patch == "":
        assert not added and old == new
    else:
        assert patch[patch.index("+++ /f\n") + 7 :] == body


# --- applying the produced patch ------------------------------------------------------------

_HUNK_HEADER = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_NO_NEWLINE = "\\ No newline at end of file"


def _split(text: str) -> list[str]:
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def apply_patch(patch: str, old: str | None) -> str:
    """Apply a one-file ``git_patch`` to ``old``, checking every hunk header on the way."""
    if patch == "":
        assert old is not None, "only an unchanged existing file has an empty patch"
        return old
    assert patch.endswith("\n")
    lines = patch[:-1].split("\n")
    first_hunk = next((i for i, line in enumerate(lines) if line.startswith("@@")), len(lines))
    head = lines[:first_hunk]
    assert head[0].startswith("diff --git ")
    if old is None:
        assert head[1:3] == ["new file mode 100644", "--- /dev/null"]
    else:
        assert head[1].startswith("--- ") and head[1] != "--- /dev/null"
    src, out, pos, i = _split(old or ""), [], 0, first_hunk
    while i < len(lines):
        match = _HUNK_HEADER.fullmatch(lines[i])
        assert match, lines[i]
        assert "1" not in (match[2], match[4]), "Git omits a count of 1"
        old_start, new_start = int(match[1]), int(match[3])
        old_count = 1 if match[2] is None else int(match[2])
        new_count = 1 if match[4] is None else int(match[4])
        i += 1
        body: list[tuple[str, str]] = []
        while i < len(lines) and not lines[i].startswith("@@"):
            if lines[i] == _NO_NEWLINE:
                tag, text = body[-1]
                body[-1] = (tag, text[:-1])
            else:
                body.append((lines[i][0], lines[i][1:] + "\n"))
            i += 1
        start = old_start if old_count == 0 else old_start - 1  # -0,0 / -k,0: after line k
        assert start >= pos
        out += src[pos:start]
        pos = start
        assert new_start == (len(out) if new_count == 0 else len(out) + 1)
        seen_old = seen_new = 0
        for tag, text in body:
            assert tag in " -+"
            if tag in " -":
                assert src[pos] == text
                pos += 1
                seen_old += 1
            if tag in " +":
                out.append(text)
                seen_new += 1
        assert (seen_old, seen_new) == (old_count, new_count)
    return "".join(out + src[pos:])


LINE = st.sampled_from(["a", "b", "c", "", " x", "\u00e9", "a\rb", "\t", "\\ no"])
TEXTS = st.one_of(
    st.tuples(st.lists(LINE, max_size=25), st.booleans()).map(
        lambda pair: "\n".join(pair[0]) + ("\n" if pair[1] and pair[0] else "")
    ),
    st.text(st.characters(blacklist_categories=["Cs"]), max_size=40),
)


@settings(max_examples=examples(1.0))
@given(old=st.none() | TEXTS, new=TEXTS, path=st.text(min_size=1, max_size=8))
def test_applying_git_patch_to_old_gives_new(old: str | None, new: str, path: str) -> None:
    assert apply_patch(git_patch(path, old, new), old) == new


# ============================================================================================
# diff_to_v2 (D46 (diff conversion), D26)


def _diff(**fields: Json) -> v1.Diff:
    item = v1_item({"type": "diff", **fields})
    assert isinstance(item, v1.Diff)
    return item


def test_diff_reference_vector() -> None:
    item = _diff(path="/path", oldText="old contents", newText="new contents")
    assert as_json(diff_to_v2(item)) == {
        "type": "diff",
        "changes": [{"operation": "modify", "path": "/path", "fileType": "text"}],
        "patch": {"format": "git_patch", "text": REF_PATCH},
    }


@pytest.mark.parametrize("old", [{}, {"oldText": None}], ids=["omitted", "null"])
def test_diff_without_old_text_is_an_add(old: dict[str, Json]) -> None:
    out = diff_to_v2(_diff(path="/repo/new.txt", newText="a\nb\n", **old))
    assert as_json(out) == {
        "type": "diff",
        "changes": [{"operation": "add", "path": "/repo/new.txt", "fileType": "text"}],
        "patch": {"format": "git_patch", "text": ADD_PATCH},
    }


def test_diff_with_empty_old_text_is_a_modify_of_an_empty_file() -> None:
    out = diff_to_v2(_diff(path="/f", oldText="", newText="x\n"))
    assert isinstance(out.changes[0], v2.ModifyDiffChange)
    assert isinstance(out.patch, v2.DiffPatch)
    assert out.patch.text == "diff --git /f /f\n--- /f\n+++ /f\n@@ -0,0 +1 @@\n+x\n"


def test_diff_to_empty_new_text_stays_a_modify() -> None:
    out = diff_to_v2(_diff(path="/f", oldText="x\n", newText=""))  # v1 cannot delete
    assert as_json(out)["changes"] == [{"operation": "modify", "path": "/f", "fileType": "text"}]


def test_diff_of_identical_texts_omits_the_patch() -> None:
    out = diff_to_v2(_diff(path="/f", oldText="same", newText="same"))
    assert out.patch is UNSET
    assert as_json(out) == {
        "type": "diff",
        "changes": [{"operation": "modify", "path": "/f", "fileType": "text"}],
    }


def test_diff_adding_an_empty_file_keeps_its_header_only_patch() -> None:
    out = diff_to_v2(_diff(path="/f", newText=""))
    assert isinstance(out.changes[0], v2.AddDiffChange)
    assert isinstance(out.patch, v2.DiffPatch)
    assert out.patch.text == "diff --git /f /f\nnew file mode 100644\n--- /dev/null\n+++ /f\n"


@pytest.mark.parametrize("meta", [{"k": [1, {"x": None}]}, {}, None])
def test_diff_meta_is_copied(meta: Json) -> None:
    item = _diff(path="/f", oldText="a", newText="b", _meta=meta)
    out = diff_to_v2(item)
    assert as_json(out)["_meta"] == meta
    if meta is not None:
        assert out.meta is not item.meta  # a copy, not the sender's object


# ============================================================================================
# content_to_v2 (D46 (content mapping), D38)

BLOCKS = [
    {"type": "text", "text": "hi", "_meta": {"m": 1}},
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
        "size": 0,
    },
    {"type": "resource", "resource": {"uri": "file:///a", "text": "x", "mimeType": None}},
    {"type": "resource", "resource": {"uri": "file:///b", "blob": "aGk=", "_meta": {"k": 2}}},
]


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: str(b["type"]))
def test_content_blocks_are_copied_unchanged(block: Json) -> None:
    item = {"type": "content", "content": block, "_meta": {"item": True}}
    out, losses = content_to_v2(v1_item(item))
    assert not losses
    assert as_json(out) == item


@pytest.mark.parametrize("priority", [0, 1, 0.25])
def test_priority_in_range_is_kept(priority: float) -> None:
    block = {"type": "text", "text": "t", "annotations": {"priority": priority}}
    out, losses = content_to_v2(v1_item({"type": "content", "content": block}))
    assert not losses
    assert as_json(out)["content"]["annotations"] == {"priority": priority}


@pytest.mark.parametrize("priority", [1.5, -0.1, 1e300])
def test_priority_outside_0_1_is_dropped_and_reported(priority: float) -> None:
    block = {"type": "text", "text": "t", "annotations": {"priority": priority, "audience": []}}
    out, losses = content_to_v2(v1_item({"type": "content", "content": block}), path="$.content[3]")
    assert as_json(out) == {
        "type": "content",
        "content": {"type": "text", "text": "t", "annotations": {"audience": []}},
    }
    assert paths(losses) == ["$.content[3].content.annotations.priority"]


def test_negative_resource_link_size_is_dropped_and_reported() -> None:
    block = {"type": "resource_link", "name": "n", "uri": "file:///r", "size": -1}
    out, losses = content_to_v2(v1_item({"type": "content", "content": block}))
    assert as_json(out)["content"] == {"type": "resource_link", "name": "n", "uri": "file:///r"}
    assert paths(losses) == ["$.content.size"]
    assert "negative" in losses.losses[0].reason


def test_diff_item_goes_through_diff_to_v2() -> None:
    item = {"type": "diff", "path": "/path", "oldText": "old contents", "newText": "new contents"}
    out, losses = content_to_v2(v1_item(item))
    assert not losses
    assert out == diff_to_v2(_diff(**{k: v for k, v in item.items() if k != "type"}))


def test_terminal_item_is_dropped_and_reported_in_lossy_mode() -> None:
    out, losses = content_to_v2(
        v1_item({"type": "terminal", "terminalId": "term_1"}), path="$.content[1]"
    )
    assert out is None
    assert paths(losses) == ["$.content[1]"]
    assert "client-owned v1 terminal" in losses.losses[0].reason


def test_terminal_item_raises_in_strict_mode() -> None:
    with pytest.raises(ConversionError) as caught:
        content_to_v2(
            v1_item({"type": "terminal", "terminalId": "term_1"}), path="$.content[1]", strict=True
        )
    assert caught.value.path == "$.content[1]"


def test_unknown_keys_of_items_are_dropped_and_reported_at_every_level() -> None:
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
    out, losses = content_to_v2(v1_item(item), strict=True)  # dropping unknown keys is the rule
    assert as_json(out) == {
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
    diff, losses = content_to_v2(v1_item({"type": "diff", "path": "/f", "newText": "", "zz": 0}))
    assert "zz" not in as_json(diff)
    assert paths(losses) == ["$.zz"]


# ============================================================================================
# tool_call_to_v2 (D46 (field mapping), D9)


def test_c1_default_values_of_a_repeated_create_are_omitted() -> None:
    tc = v1_call(
        toolCallId="c1", title="Edit", kind="other", status="pending", content=[], locations=[]
    )
    out, losses = tool_call_to_v2(tc, repeated=True)  # D9: a repeated create merges
    assert type(out) is v2.ToolCallUpdate
    assert as_json(out) == {"toolCallId": "c1", "title": "Edit"}
    assert not losses


def test_the_first_create_keeps_every_field_the_agent_set() -> None:
    """D9 amended: real v1 clients print an absent status as "undefined"; what the agent set
    on the first `tool_call` reaches the v2 side."""
    tc = v1_call(toolCallId="c1", title="Edit", kind="other", status="pending")
    out, losses = tool_call_to_v2(tc)
    assert as_json(out) == {
        "toolCallId": "c1",
        "title": "Edit",
        "kind": "other",
        "status": "pending",
    }
    assert not losses


def test_c5_full_create() -> None:
    tc = v1_call(
        toolCallId="tc_1",
        title="editing files",
        kind="edit",
        status="in_progress",
        content=[
            {"type": "diff", "path": "/path", "oldText": "old contents", "newText": "new contents"}
        ],
        locations=[{"path": "/path", "line": 42}],
        rawInput={"foo": "bar"},
        rawOutput={"ok": True},
    )
    out, losses = tool_call_to_v2(tc)
    assert not losses
    assert as_json(out) == {
        "toolCallId": "tc_1",
        "title": "editing files",
        "kind": "edit",
        "status": "in_progress",
        "content": [
            {
                "type": "diff",
                "changes": [{"operation": "modify", "path": "/path", "fileType": "text"}],
                "patch": {"format": "git_patch", "text": REF_PATCH},
            }
        ],
        "locations": [{"path": "/path", "line": 42}],
        "rawInput": {"foo": "bar"},
        "rawOutput": {"ok": True},
    }


def test_create_omits_nulls_and_always_applies_the_title() -> None:
    tc = v1_call(toolCallId="c", title="", name=None, rawInput=None, rawOutput=None, _meta=None)
    out, _ = tool_call_to_v2(tc)
    assert as_json(out) == {"toolCallId": "c", "title": ""}


def test_create_copies_name_raw_values_and_meta() -> None:
    tc = v1_call(
        toolCallId="c", title="T", name="bash", rawInput=[1], rawOutput="out", _meta={"k": 1}
    )
    out, _ = tool_call_to_v2(tc)
    assert as_json(out) == {
        "toolCallId": "c",
        "title": "T",
        "name": "bash",
        "rawInput": [1],
        "rawOutput": "out",
        "_meta": {"k": 1},
    }
    assert out.meta is not tc.meta


def test_create_with_empty_meta_object_copies_it() -> None:
    # `{}` is a value, not the default (`null`/omitted); on v2 it is a no-op on a known id.
    out, _ = tool_call_to_v2(v1_call(toolCallId="c", title="T", _meta={}))
    assert as_json(out) == {"toolCallId": "c", "title": "T", "_meta": {}}


@pytest.mark.parametrize(("field", "value"), [("kind", "_review"), ("status", "cancelled")])
def test_create_copies_unknown_enum_strings_verbatim(field: str, value: str) -> None:
    out, losses = tool_call_to_v2(v1_call(toolCallId="c", title="T", **{field: value}))
    assert as_json(out)[field] == value
    assert not losses  # forwarded, not lost (D32)


def test_c2_repeated_create_leaves_content_unchanged() -> None:
    # The second create carries no content, so the patch cannot clear the diff sent in between.
    out, _ = tool_call_to_v2(
        v1_call(toolCallId="c1", title="Edit main.py", kind="edit", rawInput={"path": "main.py"})
    )
    assert out.content is UNSET
    assert out.locations is UNSET
    assert out.status is UNSET
    assert as_json(out) == {
        "toolCallId": "c1",
        "title": "Edit main.py",
        "kind": "edit",
        "rawInput": {"path": "main.py"},
    }


def test_create_with_only_terminal_content_replaces_with_empty_content_in_lossy_mode() -> None:
    tc = v1_call(toolCallId="c", title="T", content=[{"type": "terminal", "terminalId": "t"}])
    out, losses = tool_call_to_v2(tc)
    assert out.content == []
    assert paths(losses) == ["$.content[0]"]
    with pytest.raises(ConversionError) as caught:
        tool_call_to_v2(tc, strict=True)
    assert caught.value.path == "$.content[0]"


def test_create_unknown_fields_are_dropped_and_reported() -> None:
    out, losses = tool_call_to_v2(v1_call(toolCallId="c", title="T", zzVendor={"a": 1}))
    assert as_json(out) == {"toolCallId": "c", "title": "T"}
    assert paths(losses) == ["$.zzVendor"]
    assert losses.losses[0].code == "unknown-key"


# ============================================================================================
# tool_call_update_to_v2 (D46 (field mapping), D7, D8, D32)


def test_c3_nulls_are_unchanged() -> None:
    out, losses = tool_call_update_to_v2(
        v1_update(toolCallId="c1", title=None, content=None, status="completed")
    )
    assert type(out) is v2.ToolCallUpdate
    assert as_json(out) == {"toolCallId": "c1", "status": "completed"}
    assert not losses


@pytest.mark.parametrize("field", [f.key for f in V1_TOOL_CALL_FIELDS])
def test_update_null_is_omitted_for_every_field(field: str) -> None:
    out, _ = tool_call_update_to_v2(v1_update(toolCallId="c", **{field: None}))
    assert as_json(out) == {"toolCallId": "c"}


def test_update_empty_collections_stay_empty() -> None:
    out, _ = tool_call_update_to_v2(v1_update(toolCallId="c", content=[], locations=[]))
    assert as_json(out) == {"toolCallId": "c", "content": [], "locations": []}


def test_update_copies_default_looking_values() -> None:
    update = v1_update(toolCallId="c", kind="other", status="pending", title="", name="")
    out, _ = tool_call_update_to_v2(update)
    assert as_json(out) == {
        "toolCallId": "c",
        "kind": "other",
        "status": "pending",
        "title": "",
        "name": "",
    }


@pytest.mark.parametrize(
    ("field", "value"), [("status", "cancelled"), ("status", "paused"), ("kind", "_custom")]
)
def test_update_copies_unknown_enum_strings_verbatim(field: str, value: str) -> None:
    out, losses = tool_call_update_to_v2(v1_update(toolCallId="c", **{field: value}))
    assert as_json(out) == {"toolCallId": "c", field: value}
    assert not losses


def test_c4_location_line_0_is_dropped_and_reported() -> None:
    update = v1_update(
        toolCallId="c",
        locations=[
            {"path": "/a", "line": 0},
            {"path": "/b", "line": 1, "_meta": {"m": 1}},
            {"path": "/c", "line": None},
            {"path": "/d"},
        ],
    )
    out, losses = tool_call_update_to_v2(update, strict=True)  # D7 is the mapping, not a loss
    assert as_json(out)["locations"] == [
        {"path": "/a"},
        {"path": "/b", "line": 1, "_meta": {"m": 1}},
        {"path": "/c", "line": None},
        {"path": "/d"},
    ]
    assert paths(losses) == ["$.locations[0].line"]


def test_update_copies_values_and_meta() -> None:
    meta = {"vendor": {"x": 1}, "gone": None}
    update = v1_update(
        toolCallId="c",
        title="T",
        name="grep",
        rawInput={"q": "x"},
        rawOutput=0,
        _meta=meta,
        content=[{"type": "content", "content": {"type": "text", "text": "found"}}],
    )
    out, losses = tool_call_update_to_v2(update)
    assert not losses
    assert as_json(out) == {
        "toolCallId": "c",
        "title": "T",
        "name": "grep",
        "content": [{"type": "content", "content": {"type": "text", "text": "found"}}],
        "rawInput": {"q": "x"},
        "rawOutput": 0,
        "_meta": meta,  # v1 `_meta` is an object; v2 then merges it by key
    }
    assert out.meta is not update.meta


def test_update_whose_items_are_all_dropped_becomes_an_empty_replacement() -> None:
    update = v1_update(
        toolCallId="c",
        content=[
            {"type": "terminal", "terminalId": "t1"},
            {"type": "terminal", "terminalId": "t2"},
        ],
    )
    out, losses = tool_call_update_to_v2(update)
    assert out.content == []
    assert paths(losses) == ["$.content[0]", "$.content[1]"]
    with pytest.raises(ConversionError):
        tool_call_update_to_v2(update, strict=True)


def test_update_keeps_item_order_and_paths_around_a_dropped_terminal() -> None:
    update = v1_update(
        toolCallId="c",
        content=[
            {"type": "content", "content": {"type": "text", "text": "1"}},
            {"type": "terminal", "terminalId": "t"},
            {"type": "diff", "path": "/f", "newText": "x", "zz": 1},
        ],
    )
    out, losses = tool_call_update_to_v2(update)
    assert [item["type"] for item in as_json(out)["content"]] == ["content", "diff"]
    assert paths(losses) == ["$.content[1]", "$.content[2].zz"]


def test_session_update_and_permission_tool_call_forms_are_accepted() -> None:
    session = decode(
        json.dumps({"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "failed"}),
        v1.SessionToolCallUpdate,
    ).value
    out, _ = tool_call_update_to_v2(session)
    assert type(out) is v2.ToolCallUpdate  # never the session-update subclass
    assert as_json(out) == {"toolCallId": "c", "status": "failed"}

    request = decode(
        json.dumps(
            {
                "sessionId": "s",
                "toolCall": {"toolCallId": "call_1", "title": "Read file", "zz": 1},
                "options": [{"optionId": "a", "name": "Allow", "kind": "allow_once"}],
            }
        ),
        v1.RequestPermissionRequest,
    ).value
    out, losses = tool_call_update_to_v2(request.tool_call)
    assert as_json(out) == {"toolCallId": "call_1", "title": "Read file"}
    assert paths(losses) == ["$.zz"]


def test_converters_never_share_lists_with_the_input() -> None:
    update = v1_update(
        toolCallId="c",
        content=[
            {
                "type": "content",
                "content": {"type": "text", "text": "t", "annotations": {"audience": ["user"]}},
            }
        ],
    )
    out, _ = tool_call_update_to_v2(update)
    assert isinstance(out.content, list) and isinstance(update.content, list)
    assert out.content is not update.content
    source, converted = update.content[0], out.content[0]
    assert isinstance(source, v1.Content) and isinstance(converted, v2.Content)
    assert isinstance(source.content, v1.TextContent)
    assert isinstance(converted.content, v2.TextContent)
    assert isinstance(source.content.annotations, v1.Annotations)
    assert isinstance(converted.content.annotations, v2.Annotations)
    assert converted.content.annotations.audience is not source.content.annotations.audience


# ============================================================================================
# Property: every conversion of valid v1 input is schema-valid v2, and never clears

TEXT = st.text(st.characters(blacklist_categories=["Cs"]), max_size=8)
EXTRAS = st.dictionaries(TEXT.map(lambda s: "zz" + s), st.integers() | TEXT, max_size=1)
META = st.none() | st.dictionaries(TEXT, st.none() | st.integers() | TEXT, max_size=2)
RAW = st.none() | st.integers() | TEXT | st.lists(st.integers(), max_size=2)


def obj(required: dict[str, Any], optional: dict[str, Any]) -> st.SearchStrategy[dict[str, Json]]:
    base = st.fixed_dictionaries(required, optional={**optional, "_meta": META})
    return st.tuples(base, EXTRAS).map(lambda pair: {**pair[1], **pair[0]})


def nullable(strategy: st.SearchStrategy[Json]) -> st.SearchStrategy[Json]:
    return st.none() | strategy


def tagged(tag: str, strategy: st.SearchStrategy[dict[str, Json]]) -> Any:
    return strategy.map(lambda value: {"type": tag, **value})


ANNOTATIONS = obj(
    {},
    {
        "audience": nullable(st.lists(st.sampled_from(["user", "assistant"]), max_size=2)),
        "lastModified": nullable(TEXT),
        "priority": nullable(st.floats(-2, 2) | st.sampled_from([0.0, 1.0])),
    },
)
BLOCK_COMMON = {"annotations": nullable(ANNOTATIONS)}
RESOURCE = obj({"uri": TEXT, "text": TEXT}, {"mimeType": nullable(TEXT)}) | obj(
    {"uri": TEXT, "blob": TEXT}, {"mimeType": nullable(TEXT)}
)
BLOCK = st.one_of(
    tagged("text", obj({"text": TEXT}, BLOCK_COMMON)),
    tagged("image", obj({"data": TEXT, "mimeType": TEXT}, {"uri": nullable(TEXT), **BLOCK_COMMON})),
    tagged("audio", obj({"data": TEXT, "mimeType": TEXT}, BLOCK_COMMON)),
    tagged(
        "resource_link",
        obj(
            {"name": TEXT, "uri": TEXT},
            {
                "title": nullable(TEXT),
                "description": nullable(TEXT),
                "mimeType": nullable(TEXT),
                "size": nullable(st.integers(-(2**63), 2**63 - 1)),
                **BLOCK_COMMON,
            },
        ),
    ),
    tagged("resource", obj({"resource": RESOURCE}, BLOCK_COMMON)),
)
ITEM = st.one_of(
    tagged("content", obj({"content": BLOCK}, {})),
    tagged("diff", obj({"path": TEXT, "newText": TEXT}, {"oldText": nullable(TEXT)})),
    tagged("terminal", obj({"terminalId": TEXT}, {})),
)
LOCATION = obj({"path": TEXT}, {"line": nullable(st.integers(0, 2**32 - 1) | st.just(0))})
KIND = st.sampled_from([*v1.KNOWN_KINDS, "_custom", "cancelled"])
STATUS = st.sampled_from([*v1.KNOWN_STATUSES, "cancelled", "paused", "_x"])
TOOL_CALL = obj(
    {"toolCallId": TEXT, "title": TEXT},
    {
        "name": nullable(TEXT),
        "kind": KIND,
        "status": STATUS,
        "content": st.lists(ITEM, max_size=3),
        "locations": st.lists(LOCATION, max_size=2),
        "rawInput": RAW,
        "rawOutput": RAW,
    },
).map(lambda tc: {"sessionUpdate": "tool_call", **tc})
TOOL_CALL_UPDATE = obj(
    {"toolCallId": TEXT},
    {
        "title": nullable(TEXT),
        "name": nullable(TEXT),
        "kind": nullable(KIND),
        "status": nullable(STATUS),
        "content": nullable(st.lists(ITEM, max_size=3)),
        "locations": nullable(st.lists(LOCATION, max_size=2)),
        "rawInput": RAW,
        "rawOutput": RAW,
    },
).map(lambda u: {"sessionUpdate": "tool_call_update", **u})


def _envelope(update: Json) -> Json:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": {"sessionUpdate": "tool_call_update", **update}},
    }


@settings(max_examples=examples(1.0), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(message=TOOL_CALL | TOOL_CALL_UPDATE)
def test_every_conversion_is_schema_valid_v2_and_never_clears(
    message: Json, schema_valid: SchemaCheck
) -> None:
    create = message["sessionUpdate"] == "tool_call"
    tp: type[Any] = v1.ToolCall if create else v1.SessionToolCallUpdate
    tc = decode(json.dumps(message), tp).value
    convert = tool_call_to_v2 if create else tool_call_update_to_v2

    out, losses = convert(tc)
    data = as_json(out)  # the encode guard checks it against $defs.ToolCallUpdate as well
    schema_valid(_envelope(data), "v2")

    assert None not in data.values(), "a v1 conversion never produces a v2 clear"
    assert data["toolCallId"] == message["toolCallId"]
    if create:
        assert data["title"] == message["title"]
        merged = as_json(tool_call_to_v2(tc, repeated=True)[0])  # D9: a repeat merges
        assert merged.get("kind") != "other" and merged.get("status") != "pending"
        assert merged.get("locations") != []
        defaults = {"kind": "other", "status": "pending", "locations": [], "content": []}
        for key in data.keys() - merged.keys():  # what a repeat leaves out is a default
            assert data[key] == defaults[key]
    for key in ("kind", "status", "name", "title", "rawInput", "rawOutput"):
        if message.get(key) is not None:  # the first sight keeps every field set
            assert data[key] == message[key]  # unknown enum strings included (D32)
    for loss in losses:
        assert loss.path.startswith("$")

    terminals = [
        f"$.content[{i}]"
        for i, item in enumerate(message.get("content") or [])
        if item["type"] == "terminal"
    ]
    assert [p for p in paths(losses) if p in terminals] == terminals
    if terminals:
        with pytest.raises(ConversionError) as caught:
            convert(tc, strict=True)
        assert caught.value.path == terminals[0]
    else:
        assert convert(tc, strict=True) == (out, losses)
