"""A v2 agent's edits reach a v1 editor as real v1 diffs (issue 26 item 3; D27 as amended).

When a v2 diff carries a ``git_patch`` and its file lies under the session's ``cwd`` or
``additionalDirectories``, the bridge rebuilds ``oldText``/``newText`` from the file on disk and
the patch: forward when the file still holds the old text, in reverse when the agent already
wrote it; only when the patch applies exactly, the file is a regular UTF-8 text file within the
size cap, and its resolved path stays under a resolved root. Everything else is today's text
(a line per change and the fenced patch), the loss saying why.

The first test runs ``acp-toolcalls bridge`` with a scripted v2 agent and a raw v1 editor (every
message it receives checked against the v1 schema); the rest drive the sans-I/O pieces: the
exact applier (``convert._patches``), the bridge with a reader, and the edge's ``DiskFiles``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tests.proxy.test_connection_core as connection
from acp_toolcalls import V2ToV1Bridge, encode, v1
from acp_toolcalls.convert import apply_section, git_patch, read_patch
from acp_toolcalls.proxy import DEFAULT_DISK_DIFF_BYTES, DiskFiles
from tests.interop.sessions import bounded
from tests.proxy.test_session_surface import SID, V1_EDITOR, Agent, Editor, request, setup, update

OLD = "def greet():\n    print('hi')\n\n\ndef main():\n    greet()\n    return 0\n"
NEW = "def greet(name):\n    print(f'hi {name}')\n\n\ndef main():\n    greet('you')\n    return 0\n"


def diff_update(
    path: str, patch: str, *, operation: str = "modify", **extra: Any
) -> dict[str, Any]:
    change = {"operation": operation, "path": path, "fileType": "text", **extra}
    diff = {"type": "diff", "changes": [change], "patch": {"format": "git_patch", "text": patch}}
    return {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "edit-1",
        "title": "Edit greet.py",
        "kind": "edit",
        "status": "completed",
        "content": [diff],
    }


# --------------------------------------------------------------------------------------------
# Over real subprocesses: a v1 editor, the bridge, a scripted v2 agent


def _session(tmp_path: Path, *options: str) -> tuple[list[dict[str, Any]], str]:
    """A v1 editor opens a session in ``tmp_path/work`` and gets the v2 agent's edit of
    ``greet.py`` there, sent after the agent wrote the file; the editor's session updates."""
    work = tmp_path / "work"
    work.mkdir()
    target = work / "greet.py"
    target.write_text(NEW, encoding="utf-8")  # the agent wrote it before sending the diff
    patch = git_patch(str(target), OLD, NEW)
    steps = [
        *setup(2),
        {"await": {"method": "session/prompt"}, "as": "prompt"},
        {"send": {"jsonrpc": "2.0", "id": {"$id": "prompt"}, "result": {"messageId": "u1"}}},
        update(diff_update(str(target), patch)),
        update({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}),
    ]
    agent = Agent(tmp_path, steps)

    async def scenario() -> tuple[list[dict[str, Any]], str]:
        editor = await Editor.start(1, agent, "--agent-version", "2", *options)
        await editor.send(request(0, "initialize", V1_EDITOR))
        await editor.answer_to(0)
        await editor.send(request(1, "session/new", {"cwd": str(work), "mcpServers": []}))
        assert (await editor.answer_to(1))["result"]["sessionId"] == SID
        prompt = [{"type": "text", "text": "greet by name"}]
        await editor.send(request(2, "session/prompt", {"sessionId": SID, "prompt": prompt}))
        assert (await editor.answer_to(2))["result"]["stopReason"] == "end_turn"
        _code, err, received = await editor.finish()  # every message v1-schema-checked
        return received, err

    received, err = bounded(scenario())
    updates = [m["params"]["update"] for m in received if m.get("method") == "session/update"]
    return [u for u in updates if u.get("toolCallId") == "edit-1"], err


def test_an_edit_through_the_bridge_reaches_a_v1_editor_as_a_v1_diff(tmp_path: Path) -> None:
    calls, _err = _session(tmp_path)
    [call] = calls
    path = str(tmp_path / "work" / "greet.py")
    assert call["content"] == [{"type": "diff", "path": path, "oldText": OLD, "newText": NEW}]


def test_no_disk_diffs_keeps_the_fenced_patch(tmp_path: Path) -> None:
    calls, _err = _session(tmp_path, "--no-disk-diffs", "--verbose")
    [call] = calls
    [item] = call["content"]
    assert item["type"] == "content" and "```diff" in item["content"]["text"]
    # (the loss names why, on stderr with --verbose)
    assert "reading files from disk is off" in _err


# --------------------------------------------------------------------------------------------
# The exact applier


def test_git_patches_apply_exactly_forward_and_in_reverse() -> None:
    cases = [
        (OLD, NEW),
        ("a\nb\nc\n", "a\nb\nc\nd\n"),  # appended at the end: no trailing context
        ("a\nb\n", "z\na\nb\n"),  # inserted at the start
        ("x\r\ny\r\n", "x\r\nY\r\n"),  # CRLF lines
        ("one\ntwo", "one\ntwo\n"),  # the no-newline marker
        ("".join(f"{n}\n" for n in range(40)), "".join(f"{n}\n" for n in range(40) if n % 9)),
    ]
    for old, new in cases:
        [section] = read_patch(git_patch("/w/f", old, new)) or []
        assert apply_section(old, section) == new
        assert apply_section(new, section, reverse=True) == old
        # the other side holds the other text: applied the wrong way, it does not apply
        assert apply_section(new, section) is None
        assert apply_section(old, section, reverse=True) is None


def test_a_patch_that_does_not_match_exactly_is_refused() -> None:
    [section] = read_patch(git_patch("/w/f", OLD, NEW)) or []
    assert apply_section(OLD.replace("return 0", "return  0"), section) is None  # a context line
    assert apply_section(OLD.replace("print('hi')", "print('ho')"), section) is None  # removed
    assert apply_section("# header\n" + OLD, section) is None  # shifted: no offset, no fuzz
    assert apply_section(OLD.rstrip("\n"), section) is None  # the last newline missing
    patch = git_patch("/w/f", OLD, NEW)
    assert read_patch(patch.replace("@@ -1,", "@@ -1")) is None  # counts that do not add up
    assert read_patch(patch.replace("\n \n", "\n\n", 1)) is None  # a blank line in a hunk


# --------------------------------------------------------------------------------------------
# The bridge, with the edge's reader


def _bridge(root: Path, reader: Any = None) -> V2ToV1Bridge:
    bridge = V2ToV1Bridge(read_file=DiskFiles() if reader is None else reader)
    bridge.set_roots(SID, str(root), [])
    return bridge


def _convert(bridge: V2ToV1Bridge, body: dict[str, Any]) -> tuple[list[Any], list[str]]:
    message = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": SID}}
    message["params"]["update"] = body  # type: ignore[index]
    out = bridge.convert(message)
    [sent] = out.messages
    encode(sent)  # (the suite's guard checks it against the v1 schema)
    return list(sent.params.update.content), [str(loss) for loss in out.losses]


def _text(items: list[Any]) -> str:
    [item] = items
    assert isinstance(item, v1.Content) and isinstance(item.content, v1.TextContent)
    return item.content.text


def test_forward_and_reverse_both_give_old_and_new(tmp_path: Path) -> None:
    target = tmp_path / "greet.py"
    patch = git_patch(str(target), OLD, NEW)
    for on_disk in (OLD, NEW):  # sent before the agent writes the file, and after
        target.write_text(on_disk, encoding="utf-8")
        items, losses = _convert(_bridge(tmp_path), diff_update(str(target), patch))
        assert items == [v1.Diff(path=str(target), old_text=OLD, new_text=NEW)]
        assert losses == []


@pytest.mark.parametrize(
    ("case", "why"),
    [
        ("fuzz", "does not apply to it exactly"),
        ("outside", "outside the session's directories"),
        ("dotdot", "not normal"),
        ("symlink", "resolves outside the session's directories"),
        ("too-big", "larger than 64 bytes"),
        ("latin-1", "not UTF-8 text"),
        ("nul", "binary (it holds a NUL byte)"),
        ("fifo", "not a regular file"),
        ("missing", "does not exist"),
        ("no-roots", "directories are not known"),
        ("off", "reading files from disk is off"),
    ],
)
def test_what_cannot_be_rebuilt_is_todays_text_and_the_loss_says_why(
    tmp_path: Path, case: str, why: str
) -> None:
    root = tmp_path / "work"
    root.mkdir()
    target = root / "greet.py"
    target.write_text(OLD, encoding="utf-8")
    outside = tmp_path / "secret.py"
    outside.write_text(OLD, encoding="utf-8")
    path = str(target)
    bridge = _bridge(root)
    if case == "fuzz":
        target.write_text(OLD.replace("return 0", "return 1"), encoding="utf-8")
    elif case == "outside":
        path = str(outside)
    elif case == "dotdot":
        path = f"{root}/../secret.py"
    elif case == "symlink":
        path = str(root / "link.py")
        os.symlink(outside, path)
    elif case == "too-big":
        bridge = _bridge(root, DiskFiles(max_bytes=64))
    elif case == "latin-1":
        target.write_bytes(OLD.replace("hi", "h\xe9").encode("latin-1"))
    elif case == "nul":
        target.write_bytes(OLD.encode("utf-16"))
    elif case == "fifo":
        if not hasattr(os, "mkfifo"):
            pytest.skip("no FIFOs here")
        path = str(root / "pipe.py")
        os.mkfifo(path)  # nobody writes to it: opening it for reading would block
    elif case == "missing":
        path = str(root / "gone.py")
    elif case == "no-roots":
        bridge = V2ToV1Bridge(read_file=DiskFiles())
    elif case == "off":
        bridge = V2ToV1Bridge()
        bridge.set_roots(SID, str(root))
    patch = git_patch(path, OLD, NEW)
    items, losses = _convert(bridge, diff_update(path, patch))
    text = _text(items)
    assert text.startswith(f"Modified {path}\n\n```diff\n") and patch in text  # today's text
    [loss] = losses
    assert "no mechanical mapping" in loss and why in loss, loss


def test_a_loss_of_a_permission_subjects_diff_is_at_the_subjects_path(tmp_path: Path) -> None:
    """A permission request about a call the editor shows, whose subject sets a diff: what the
    diff loses is at ``$.params.subject.toolCall.content[0]``. It was at
    ``$.params.update.content[0]``, a path the request does not have (the report's check of
    what the editor got could not find the diff there)."""
    target = tmp_path / "greet.py"
    target.write_text(OLD, encoding="utf-8")
    bridge = V2ToV1Bridge()  # reading off: every such diff is a loss
    bridge.set_roots(SID, str(tmp_path), [])
    body = diff_update(str(target), git_patch(str(target), OLD, NEW))
    message = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": SID}}
    first = bridge.convert({**message, "params": {"sessionId": SID, "update": body}})
    assert [loss.path for loss in first.losses] == ["$.params.update.content[0]"]
    subject = {k: v for k, v in body.items() if k != "sessionUpdate"}
    params = {
        "sessionId": SID,
        "title": "Edit greet.py?",
        "subject": {"type": "tool_call", "toolCall": subject},
        "options": [{"optionId": "y", "name": "Yes", "kind": "allow_once"}],
    }
    asked = bridge.convert(
        {"jsonrpc": "2.0", "id": 4, "method": "session/request_permission", "params": params}
    )
    paths = [loss.path for loss in asked.losses]
    assert [path for path in paths if "content" in path] == ["$.params.subject.toolCall.content[0]"]


def test_a_symbolic_link_inside_the_roots_is_followed_and_one_swapped_in_refused(
    tmp_path: Path,
) -> None:
    target = tmp_path / "real.py"
    target.write_text(OLD, encoding="utf-8")
    link = tmp_path / "alias.py"
    os.symlink(target, link)
    patch = git_patch(str(link), OLD, NEW)
    items, _losses = _convert(_bridge(tmp_path), diff_update(str(link), patch))
    assert items == [v1.Diff(path=str(link), old_text=OLD, new_text=NEW)]
    # A root given through a link resolves too: the file is under its real directory.
    alias_root = tmp_path.parent / f"{tmp_path.name}-alias"
    os.symlink(tmp_path, alias_root)
    try:
        via = alias_root / "real.py"
        patch = git_patch(str(via), OLD, NEW)
        items, _losses = _convert(_bridge(alias_root), diff_update(str(via), patch))
        assert items == [v1.Diff(path=str(via), old_text=OLD, new_text=NEW)]
    finally:
        alias_root.unlink()


def test_the_size_cap_is_the_files_bytes(tmp_path: Path) -> None:
    target = tmp_path / "greet.py"
    target.write_text(OLD, encoding="utf-8")
    size = len(OLD.encode())
    assert DEFAULT_DISK_DIFF_BYTES == 1 << 20
    assert DiskFiles(max_bytes=size)(str(target), (str(tmp_path),)) == OLD.encode()
    assert "larger than" in str(DiskFiles(max_bytes=size - 1)(str(target), (str(tmp_path),)))


def test_delete_add_and_move_are_rebuilt_and_said(tmp_path: Path) -> None:
    root = str(tmp_path)
    gone, added = f"{root}/gone.py", f"{root}/new.py"
    moved_from, moved_to = f"{root}/a.py", f"{root}/b.py"
    Path(moved_to).write_text(NEW, encoding="utf-8")  # moved and edited already
    patch = (
        git_patch(gone, OLD, "").replace(f"--- {gone}\n+++ {gone}", f"--- {gone}\n+++ /dev/null")
        + git_patch(added, None, "x = 1\n")
        + git_patch(moved_to, OLD, NEW)
        .replace(f"--- {moved_to}", f"--- {moved_from}")
        .replace(
            f"diff --git {moved_to} {moved_to}\n",
            f"diff --git {moved_from} {moved_to}\nsimilarity index 60%\n"
            f"rename from {moved_from}\nrename to {moved_to}\n",
        )
    )
    changes = [
        {"operation": "delete", "path": gone},
        {"operation": "add", "path": added, "fileType": "text"},
        {"operation": "move", "oldPath": moved_from, "path": moved_to},
    ]
    body = diff_update(gone, patch)
    body["content"][0]["changes"] = changes
    items, losses = _convert(_bridge(tmp_path), body)
    assert items == [
        v1.Content(content=v1.TextContent(text=f"Deleted {gone}")),
        v1.Diff(path=gone, old_text=OLD, new_text=""),
        v1.Diff(path=added, new_text="x = 1\n"),
        v1.Content(content=v1.TextContent(text=f"Moved {moved_from} -> {moved_to}")),
        v1.Diff(path=moved_to, old_text=OLD, new_text=NEW),
    ]
    assert len(losses) == 2 and all("v1 has no deletion, move or copy" in x for x in losses)


def test_a_diff_partly_rebuilt_keeps_the_rest_as_text(tmp_path: Path) -> None:
    root = tmp_path / "work"
    root.mkdir()
    inside, outside = root / "in.py", tmp_path / "out.py"
    for file in (inside, outside):
        file.write_text(OLD, encoding="utf-8")
    patch = git_patch(str(inside), OLD, NEW) + git_patch(str(outside), OLD, NEW)
    body = diff_update(str(inside), patch)
    body["content"][0]["changes"].append({"operation": "modify", "path": str(outside)})
    items, losses = _convert(_bridge(root), body)
    assert items[0] == v1.Diff(path=str(inside), old_text=OLD, new_text=NEW)
    rest = items[1].content.text
    assert rest.startswith(f"Modified {outside}\n\n```diff\n")
    assert git_patch(str(outside), OLD, NEW) in rest and str(inside) not in rest
    [loss] = losses
    assert "outside the session's directories" in loss


def test_diffs_without_a_git_patch_or_of_a_new_file_are_as_before(tmp_path: Path) -> None:
    calls: list[Any] = []

    def reader(path: str, roots: tuple[str, ...]) -> bytes | str:
        calls.append(path)
        return b""

    bridge = _bridge(tmp_path, reader)
    added = str(tmp_path / "new.py")
    items, losses = _convert(
        bridge, diff_update(added, git_patch(added, None, "x\n"), operation="add")
    )
    assert items == [v1.Diff(path=added, new_text="x\n")] and losses == []
    body = diff_update(added, "")
    del body["content"][0]["patch"]
    items, _losses = _convert(bridge, body)
    assert _text(items) == f"Modified {added}"
    assert calls == []  # no file was read for either


def test_the_core_reads_no_file_itself() -> None:
    """The sans-I/O modules name no file API: reading is the reader's (``proxy._files``)."""
    import acp_toolcalls.bridge._disk_diffs as core
    import acp_toolcalls.convert._patches as patches

    for module in (core, patches):
        source = Path(module.__file__ or "").read_text(encoding="utf-8")
        for name in ("open(", "os.stat", "os.path.realpath", ".read_bytes(", ".read_text("):
            assert name not in source, (module.__name__, name)


# --------------------------------------------------------------------------------------------
# Properties of the applier

_LINES = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "a b\n", "\n", "x\r\n", "\tz\n"]))
_TEXTS = st.builds(
    lambda lines, tail: "".join(lines) + tail, _LINES, st.sampled_from(["", "end", "a"])
)


@settings(max_examples=300, deadline=None)
@given(old=_TEXTS, new=_TEXTS)
def test_every_git_patch_applies_exactly_one_way_to_each_side(old: str, new: str) -> None:
    patch = git_patch("/w/f", old, new)
    if not patch:
        return  # the same text: Git writes nothing
    [section] = read_patch(patch) or []
    assert apply_section(old, section) == new
    assert apply_section(new, section, reverse=True) == old
    # which side a file holds is never ambiguous for these (the bridge refuses it if it is)
    assert apply_section(new, section) is None or apply_section(old, section, reverse=True) is None


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="@-+ \\\n,01a/dg", max_size=120), file=_TEXTS)
def test_any_text_is_read_or_refused_and_never_raises(text: str, file: str) -> None:
    for candidate in (text, "diff --git /w/f /w/f\n--- /w/f\n+++ /w/f\n" + text):
        sections = read_patch(candidate)
        for section in sections or []:
            for reverse in (False, True):
                result = apply_section(file, section, reverse=reverse)
                assert result is None or isinstance(result, str)


# --------------------------------------------------------------------------------------------
# The proxy's core tells the bridge each session's directories


def _edit(path: Path) -> dict[str, Any]:
    return connection.update(diff_update(str(path), git_patch(str(path), OLD, NEW)))


def test_the_roots_come_from_session_new_load_and_resume(tmp_path: Path) -> None:
    work, extra, other = tmp_path / "work", tmp_path / "extra", tmp_path / "other"
    for directory in (work, extra, other):
        directory.mkdir()
        (directory / "greet.py").write_text(NEW, encoding="utf-8")  # written already
    wire = connection.Wire(agent_version=2, read_file=DiskFiles())
    wire.client(connection.V1_INIT)
    wire.agent(connection.result(wire.last_agent()["id"], connection.V2_AGENT_INIT))
    params = {"cwd": str(work), "additionalDirectories": [str(extra)], "mcpServers": []}
    wire.client(connection.request(1, "session/new", params))
    wire.agent(connection.result(wire.last_agent()["id"], {"sessionId": SID}))
    for directory in (work, extra, other):
        wire.clear()
        wire.agent(_edit(directory / "greet.py"))
        [item] = wire.client_updates()[-1]["content"]
        assert (item["type"] == "diff") is (directory is not other), item
    # A load's replay comes before its answer: its directories count from the request on.
    params = {"sessionId": SID, "cwd": str(other), "mcpServers": []}
    wire.client(connection.request(2, "session/load", params))
    asked = wire.last_agent()
    wire.clear()
    wire.agent(_edit(other / "greet.py"))
    [item] = wire.client_updates()[-1]["content"]
    assert item == {"type": "diff", "path": str(other / "greet.py"), "oldText": OLD, "newText": NEW}
    wire.agent(connection.result(asked["id"], {}))
    wire.agent(_edit(work / "greet.py"))  # `work` is no longer one of its directories
    [item] = wire.client_updates()[-1]["content"]
    assert item["type"] == "content"


def test_texts_read_from_disk_count_toward_the_line_limit(tmp_path: Path) -> None:
    """The store counts the v2 item's bytes; what the disk adds is counted too, so a call's
    v1 line stays under ``max_message_bytes`` (items left out, reported)."""
    big_old = "".join(f"line {n}\n" for n in range(6_000))  # about 65 kB
    big_new = big_old.replace("line 1500\n", "line 1500!\n")
    target = tmp_path / "big.txt"
    target.write_text(big_old, encoding="utf-8")
    bridge = V2ToV1Bridge(read_file=DiskFiles(), max_message_bytes=100_000)
    bridge.set_roots(SID, str(tmp_path))
    body = diff_update(str(target), git_patch(str(target), big_old, big_new))
    params = {"sessionId": SID, "update": body}
    out = bridge.convert({"jsonrpc": "2.0", "method": "session/update", "params": params})
    [sent] = out.messages
    assert len(encode(sent)) <= 100_000
    assert not any(isinstance(item, v1.Diff) for item in sent.params.update.content)
    assert any("so that the line stays under 100000 bytes" in str(x) for x in out.losses)
