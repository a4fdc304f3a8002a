"""ToolCallStore: the reducer rules (D46: upsert to terminals, client store, v1 store, evidence)."""

from __future__ import annotations

import json
from base64 import b64encode
from typing import Any, cast

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_toolcalls import DecodeError, encode, v2
from acp_toolcalls.codec import EncodeError
from acp_toolcalls.events import (
    ContentAppended,
    DiagnosticReported,
    LimitReached,
    TerminalCleared,
    TerminalCreated,
    TerminalOutputAppended,
    TerminalPatched,
    ToolCallCleared,
    ToolCallCreated,
    ToolCallEndedLocally,
    ToolCallEvicted,
    ToolCallPatched,
    ToolCallReopened,
)
from acp_toolcalls.store import Limits, ToolCallStore

SID = "sess_1"


def update(tool_call_id: str = "a", session_id: str = SID, **fields: Any) -> bytes:
    body = {"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id, **fields}
    return notification(body, session_id)


def chunk(item: dict[str, Any], tool_call_id: str = "a", **extra: Any) -> bytes:
    body = {
        "sessionUpdate": "tool_call_content_chunk",
        "toolCallId": tool_call_id,
        "content": item,
        **extra,
    }
    return notification(body)


def notification(body: dict[str, Any], session_id: str = SID) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": session_id, "update": body},
        }
    ).encode()


def text(value: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": value}}


def permission(subject: dict[str, Any] | None, *, protocol: str = "v2", **params: Any) -> bytes:
    if protocol == "v2":
        body: dict[str, Any] = {
            "sessionId": SID,
            "title": "Allow the edit?",
            "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}],
            **params,
        }
        if subject is not None:
            body["subject"] = subject
    else:
        body = {
            "sessionId": SID,
            "toolCall": subject,
            "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}],
        }
    return json.dumps(
        {"jsonrpc": "2.0", "id": 7, "method": "session/request_permission", "params": body}
    ).encode()


def doc(store: ToolCallStore, session_id: str = SID) -> dict[str, Any]:
    document = json.loads(encode(store.document()))
    return document["sessions"][session_id]


def call(store: ToolCallStore, tool_call_id: str = "a") -> dict[str, Any]:
    snapshot = store.snapshot(SID, tool_call_id)
    plain: dict[str, Any] = json.loads(encode(snapshot))  # schema-checked by conftest
    return plain


def b64(data: bytes) -> str:
    return b64encode(data).decode()


# --------------------------------------------------------------------------------------------
# Upsert and patch rules


def test_first_update_creates_with_defaults_and_reports_it() -> None:
    store = ToolCallStore()
    events = store.apply(update(title="Read file", kind="read"))
    assert events == [
        ToolCallCreated(SID, "a"),
        ToolCallPatched(SID, "a", ("title", "kind")),
    ]
    view = store.view(SID, "a")
    assert (view.title, view.kind, view.status, view.is_final) == (
        "Read file",
        "read",
        "pending",
        False,
    )
    assert call(store) == {"toolCallId": "a", "title": "Read file", "kind": "read"}


def test_update_before_any_create_is_not_an_error() -> None:
    # Zed invented a failed "Tool call not found" entry here (field evidence 10.1).
    store = ToolCallStore()
    store.apply(update(status="in_progress"))
    view = store.view(SID, "a")
    assert view.status == "in_progress"
    assert view.title == "Tool call"  # D10 fallback, nothing fabricated


def test_omitted_null_and_value_stay_distinct() -> None:
    store = ToolCallStore()
    store.apply(update(title="T", kind="edit", status="in_progress", rawInput={"p": 1}))
    events = store.apply(update(kind=None, rawInput=None))
    assert events == [ToolCallCleared(SID, "a", ("kind", "rawInput"))]
    assert call(store) == {
        "toolCallId": "a",
        "title": "T",
        "kind": None,
        "status": "in_progress",
        "rawInput": None,
    }
    view = store.view(SID, "a")
    assert view.kind == "other"  # D4: null reads as `other`
    assert view.raw_input is None
    store.apply(update(status=None))
    assert store.view(SID, "a").status == "pending"  # D4


def test_null_title_falls_back_to_name_then_kind_label() -> None:
    store = ToolCallStore()
    store.apply(update(title="T", name="read_file", kind="read"))
    store.apply(update(title=None))
    assert store.view(SID, "a").title == "read_file"
    store.apply(update(name=None))
    assert store.view(SID, "a").title == "Read"
    store.apply(update(kind="_custom"))
    assert store.view(SID, "a").title == "Tool call"
    assert store.view(SID, "a").kind == "_custom"


def test_wrong_typed_value_is_omitted_never_a_clear() -> None:
    # D11: the official SDK turns these into None, which a three-state reducer reads as a clear.
    store = ToolCallStore()
    store.apply(update(title="Keep", status="in_progress", content=[text("x")]))
    events = store.apply(update(title=42, status=7, content="x", _meta=False))
    assert [e for e in events if not isinstance(e, DiagnosticReported)] == []
    assert {e.path for e in events if isinstance(e, DiagnosticReported)} == {
        "$.params.update.title",
        "$.params.update.status",
        "$.params.update.content",
        "$.params.update._meta",
    }
    assert call(store)["title"] == "Keep"
    assert call(store)["status"] == "in_progress"
    assert len(call(store)["content"]) == 1


def test_collections_replace_whole_and_keep_empty_vs_null() -> None:
    store = ToolCallStore()
    store.apply(update(content=[text("1"), text("2")], locations=[{"path": "/a"}]))
    store.apply(update(content=[text("3")]))
    assert [c["content"]["text"] for c in call(store)["content"]] == ["3"]
    events = store.apply(update(content=[], locations=None))
    assert events == [ToolCallCleared(SID, "a", ("content", "locations"))]
    assert call(store)["content"] == []
    assert call(store)["locations"] is None  # D2: stored as received
    assert store.view(SID, "a").content == []
    assert store.view(SID, "a").locations == []


def test_invalid_items_are_dropped_and_an_all_invalid_array_still_replaces() -> None:
    store = ToolCallStore()
    store.apply(update(content=[text("keep me")]))
    events = store.apply(update(content=[{"type": "content"}, 5]))
    assert call(store)["content"] == []
    assert len([e for e in events if isinstance(e, DiagnosticReported)]) == 2


# --------------------------------------------------------------------------------------------
# Chunks


def test_chunk_on_unseen_id_creates_then_appends() -> None:
    store = ToolCallStore()
    events = store.apply(chunk(text("hello")))
    assert events == [ToolCallCreated(SID, "a"), ContentAppended(SID, "a", 0)]
    assert call(store)["content"] == [text("hello")]


@pytest.mark.parametrize("initial", [None, []])
def test_chunk_on_null_or_empty_content_starts_a_list(initial: Any) -> None:
    store = ToolCallStore()
    store.apply(update(content=initial))
    store.apply(chunk(text("x")))
    assert call(store)["content"] == [text("x")]


def test_replacement_replaces_chunks_and_later_chunks_append_to_it() -> None:
    store = ToolCallStore()
    for i in range(3):
        store.apply(chunk(text(f"c{i}")))
    store.apply(update(content=[text("R")]))
    events = store.apply(chunk(text("after")))
    assert events == [ContentAppended(SID, "a", 1)]
    assert call(store)["content"] == [text("R"), text("after")]


def test_chunk_meta_is_chunk_scoped() -> None:
    store = ToolCallStore()
    store.apply(update(_meta={"k": 1}))
    store.apply(chunk(text("x"), _meta={"chunk": True}))
    assert call(store)["_meta"] == {"k": 1}


def test_chunk_with_an_invalid_item_is_dropped_whole_and_nothing_changes() -> None:
    store = ToolCallStore()
    store.apply(update(title="T", content=[text("x")]))
    with pytest.raises(DecodeError) as raised:
        store.apply(chunk({"type": "content", "content": {"type": "text"}}))
    assert raised.value.path.startswith("$.params.update.content")
    assert call(store)["content"] == [text("x")]


def test_chunk_keeps_the_caller_update_unaliased() -> None:
    # Appending must not mutate the list of the update object the caller passed in.
    store = ToolCallStore()
    items: list[v2.ToolCallContent] = [v2.Content(content=v2.TextContent(text="mine"))]
    message = v2.SessionUpdateMessage(
        params=v2.UpdateSessionNotification(
            session_id=SID, update=v2.SessionToolCallUpdate(tool_call_id="a", content=items)
        )
    )
    store.apply(message)
    store.apply(chunk(text("x")))
    assert len(items) == 1


def test_unknown_content_variant_is_kept_verbatim() -> None:
    store = ToolCallStore()
    odd = {"type": "_chart", "series": [1, 2], "nested": {"a": None}}
    store.apply(update(content=[odd, text("t")]))
    store.apply(chunk({"type": "_other", "x": 1}))
    assert call(store)["content"] == [odd, text("t"), {"type": "_other", "x": 1}]


# --------------------------------------------------------------------------------------------
# _meta and unknown fields


def test_meta_patches_by_top_level_key() -> None:
    store = ToolCallStore()
    store.apply(update(_meta={"a": 1, "b": {"x": 1}, "c": 3}))
    store.apply(update(_meta={"a": None, "b": {"y": 2}}))
    assert call(store)["_meta"] == {"b": {"y": 2}, "c": 3}  # nested objects replaced
    events = store.apply(update(_meta={}))
    assert events == [ToolCallPatched(SID, "a", ("_meta",))]
    assert call(store)["_meta"] == {"b": {"y": 2}, "c": 3}
    store.apply(update(_meta=None))
    assert call(store)["_meta"] is None
    store.apply(update(_meta={"d": None, "e": 5}))
    assert call(store)["_meta"] == {"e": 5}


def test_meta_empty_object_on_new_id_creates_an_empty_map() -> None:
    store = ToolCallStore()
    store.apply(update(_meta={}))
    assert call(store) == {"toolCallId": "a", "_meta": {}}


@pytest.mark.encodes_invalid  # `futureField` is not in the v2 schema: kept for a newer peer
def test_unknown_extra_fields_are_kept_and_patched() -> None:
    store = ToolCallStore()
    events = store.apply(update(title="T", futureField={"v": 1}))
    assert events[-1] == ToolCallPatched(SID, "a", ("title", "futureField"))
    store.apply(update(futureField=None))
    assert call(store) == {"toolCallId": "a", "title": "T", "futureField": None}
    document = doc(store)
    assert document["toolCalls"][0]["futureField"] is None


# --------------------------------------------------------------------------------------------
# Permission requests


def test_permission_subject_is_an_upsert_and_prompt_text_never_lands() -> None:
    # codex-acp put prompt text into toolCall.content and wiped the diff (D46 (evidence:
    # prompt text)).
    store = ToolCallStore()
    diff = {
        "type": "diff",
        "changes": [{"operation": "modify", "path": "/r/a.py"}],
    }
    store.apply(update(title="Edit a.py", kind="edit", content=[diff]))
    store.apply(
        permission(
            {"type": "tool_call", "toolCall": {"toolCallId": "a", "status": "pending"}},
            description="It will change a.py",
        )
    )
    snapshot = call(store)
    assert snapshot["title"] == "Edit a.py"
    assert snapshot["content"] == [diff]
    assert snapshot["status"] == "pending"


def test_permission_subject_before_the_call_creates_it() -> None:
    store = ToolCallStore()
    events = store.apply(
        permission({"type": "tool_call", "toolCall": {"toolCallId": "p", "kind": "execute"}})
    )
    assert events[0] == ToolCallCreated(SID, "p")
    assert store.view(SID, "p").title == "Execute"


def test_a_subjects_sessionupdate_key_is_ignored_so_the_snapshot_still_replays() -> None:
    # Found by tests/fuzz (the V2ToV1Bridge target, long profile): kept as an unknown key, it
    # overrode the tag when the exported state was replayed as a `tool_call_update` (D35).
    store = ToolCallStore()
    subject = {"toolCallId": "p", "title": "T", "sessionUpdate": "_x", "zz": 1}
    events = store.apply(permission({"type": "tool_call", "toolCall": subject}))
    assert events[0] == DiagnosticReported(
        SID,
        "$.params.subject.toolCall.sessionUpdate",
        cast(DiagnosticReported, events[0]).reason,
        "ignored",
    )
    assert call(store, "p") == {"toolCallId": "p", "title": "T", "zz": 1}
    replayed = ToolCallStore()
    replayed.apply(notification({"sessionUpdate": "tool_call_update", **call(store, "p")}))
    assert replayed.document() == store.document()


@pytest.mark.parametrize(
    "subject",
    [
        None,
        {"type": "command", "command": "rm -rf build", "cwd": "/r", "toolCallId": "a"},
        {"type": "_future", "x": 1},
    ],
)
def test_other_permission_subjects_change_nothing(subject: Any) -> None:
    store = ToolCallStore()
    store.apply(update(title="T"))
    assert store.apply(permission(subject)) == []
    assert call(store) == {"toolCallId": "a", "title": "T"}


# --------------------------------------------------------------------------------------------
# v1 input


def v1_notification(body: dict[str, Any]) -> bytes:
    return notification(body)


def test_v1_tool_call_then_update_with_nulls_changes_nothing_null() -> None:
    store = ToolCallStore(version="v1")
    store.apply(
        v1_notification(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "a",
                "title": "Edit",
                "kind": "edit",
                "status": "in_progress",
                "content": [text("x")],
                "rawInput": {"p": 1},
            }
        )
    )
    store.apply(
        v1_notification(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "a",
                "title": None,
                "content": None,
                "rawInput": None,
                "status": "completed",
            }
        )
    )
    snapshot = call(store)
    assert snapshot["title"] == "Edit"  # v1 null = unchanged (D8)
    assert snapshot["content"] == [text("x")]
    assert snapshot["rawInput"] == {"p": 1}
    assert snapshot["status"] == "completed"


def test_repeated_v1_tool_call_merges_instead_of_wiping() -> None:
    # A client that replaced lost the diff attached by an intermediate update (D9).
    store = ToolCallStore(version="v1")
    store.apply(v1_notification({"sessionUpdate": "tool_call", "toolCallId": "a", "title": "T"}))
    store.apply(
        v1_notification(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "a",
                "content": [{"type": "diff", "path": "/r/a", "oldText": "a\n", "newText": "b\n"}],
                "status": "in_progress",
            }
        )
    )
    store.apply(
        v1_notification(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "a",
                "title": "T2",
                "kind": "other",
                "status": "pending",
                "content": [],
            }
        )
    )
    snapshot = call(store)
    assert snapshot["title"] == "T2"
    assert snapshot["status"] == "in_progress"
    (diff,) = snapshot["content"]
    assert diff["type"] == "diff"
    assert diff["changes"] == [{"operation": "modify", "path": "/r/a", "fileType": "text"}]
    assert diff["patch"]["format"] == "git_patch"
    assert "-a\n+b\n" in diff["patch"]["text"]


def test_v1_re_create_of_a_finished_call_is_merged_and_warned() -> None:
    store = ToolCallStore(version="v1")
    create = {"sessionUpdate": "tool_call", "toolCallId": "bash:0", "title": "ls"}
    store.apply(v1_notification(create))
    store.apply(
        v1_notification(
            {"sessionUpdate": "tool_call_update", "toolCallId": "bash:0", "status": "completed"}
        )
    )
    events = store.apply(v1_notification({**create, "title": "pwd"}))
    assert ToolCallReopened(SID, "bash:0", "completed", "pending") in events
    assert store.view(SID, "bash:0").title == "pwd"
    assert store.view(SID, "bash:0").status == "completed"


def test_v1_permission_tool_call_is_applied_as_an_update() -> None:
    store = ToolCallStore(version="v1")
    store.apply(
        permission({"toolCallId": "a", "title": "Run ls", "kind": "execute"}, protocol="v1")
    )
    assert store.view(SID, "a").title == "Run ls"
    assert store.view(SID, "a").kind == "execute"


def test_v1_tool_call_on_a_v2_stream_is_ignored_and_reported() -> None:
    store = ToolCallStore()
    events = store.apply(
        notification({"sessionUpdate": "tool_call", "toolCallId": "a", "title": "T"})
    )
    assert [type(e) for e in events] == [DiagnosticReported]
    assert cast(DiagnosticReported, events[0]).kind == "ignored"
    assert store.sessions == {}


def test_v1_mapping_losses_are_reported_at_their_message_path() -> None:
    store = ToolCallStore(version="v1")
    events = store.apply(
        v1_notification(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "a",
                "title": "Run",
                "content": [text("x"), {"type": "terminal", "terminalId": "client-owned"}],
            }
        )
    )
    (loss,) = [e for e in events if isinstance(e, DiagnosticReported)]
    assert (loss.path, loss.kind) == ("$.params.update.content[1]", "lossy")
    assert call(store)["content"] == [text("x")]


# --------------------------------------------------------------------------------------------
# Protocol detection


def initialize(version: int, *, response: bool) -> bytes:
    if response:
        return json.dumps(
            {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": version}}
        ).encode()
    return json.dumps(
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": version}}
    ).encode()


V1_TOOL_CALL = notification({"sessionUpdate": "tool_call", "toolCallId": "a", "title": "T"})


@pytest.mark.parametrize(
    ("preamble", "applied"),
    [
        ([], False),  # no initialize: v2, and a v1 `tool_call` is ignored
        ([initialize(1, response=False)], True),  # a request alone decides
        ([initialize(2, response=False), initialize(1, response=True)], True),  # response wins
        ([initialize(1, response=False), initialize(2, response=True)], False),
    ],
)
def test_auto_protocol_follows_the_initialize_exchange(
    preamble: list[bytes], applied: bool
) -> None:
    store = ToolCallStore(version="auto")
    for line in preamble:
        assert store.apply(line) == []
    store.apply(V1_TOOL_CALL)
    assert (SID in store.sessions) is applied


@pytest.mark.parametrize(
    ("given", "version", "raw"),
    [
        ("v1", "v1", "v1"),
        (1, "v1", "v1"),
        ("v2", "v2", "v2"),
        (2, "v2", "v2"),
        ("auto", "auto", "v2"),
    ],
)
def test_version_names_the_protocol(given: Any, version: str, raw: str) -> None:
    store = ToolCallStore(version=given)
    assert (store.version, store.raw_version) == (version, raw)
    assert ToolCallStore().version == "v2"


@pytest.mark.parametrize("given", ["v3", 3, 0, True, None.__class__, 1.0])
def test_an_unknown_version_is_refused(given: Any) -> None:
    with pytest.raises(ValueError, match="unknown protocol version"):
        ToolCallStore(version=given)


# --------------------------------------------------------------------------------------------
# Terminals


def terminal_update(terminal_id: str = "t", **fields: Any) -> bytes:
    return notification({"sessionUpdate": "terminal_update", "terminalId": terminal_id, **fields})


def output_chunk(data: str, terminal_id: str = "t") -> bytes:
    return notification(
        {"sessionUpdate": "terminal_output_chunk", "terminalId": terminal_id, "data": data}
    )


def terminal_doc(store: ToolCallStore) -> dict[str, Any]:
    (terminal,) = doc(store)["terminals"]
    return terminal


def test_output_chunk_for_unseen_terminal_creates_it() -> None:
    store = ToolCallStore()
    events = store.apply(output_chunk(b64(b"hi")))
    assert events == [TerminalCreated(SID, "t"), TerminalOutputAppended(SID, "t", 2)]
    assert terminal_doc(store) == {"terminalId": "t", "output": {"data": b64(b"hi")}}


def test_chunks_are_decoded_one_by_one_not_concatenated() -> None:
    # "aGk=" + "aGk=" is not valid base64 as one string; decoded apart it is b"hihi".
    store = ToolCallStore()
    store.apply(output_chunk("aGk="))
    store.apply(output_chunk("aGk="))
    assert store.sessions[SID].terminals["t"].output_bytes == b"hihi"


def test_a_chunk_may_split_a_utf8_code_point() -> None:
    store = ToolCallStore()
    data = "é".encode()
    store.apply(output_chunk(b64(data[:1])))
    store.apply(output_chunk(b64(data[1:])))
    assert store.sessions[SID].terminals["t"].output_bytes.decode() == "é"


def test_snapshot_replaces_output_then_chunks_append() -> None:
    store = ToolCallStore()
    store.apply(output_chunk(b64(b"old")))
    events = store.apply(terminal_update(command="make", output={"data": b64(b"new")}))
    assert events == [TerminalPatched(SID, "t", ("command", "output"))]
    store.apply(output_chunk(b64(b"+")))
    assert terminal_doc(store)["output"] == {"data": b64(b"new+")}


def test_output_null_then_nothing_is_null_and_a_chunk_makes_data() -> None:
    store = ToolCallStore()
    store.apply(terminal_update(output={"data": b64(b"x")}))
    events = store.apply(terminal_update(output=None))
    assert events == [TerminalCleared(SID, "t", ("output",))]
    assert terminal_doc(store)["output"] is None
    store.apply(output_chunk(b64(b"y")))
    assert terminal_doc(store)["output"] == {"data": b64(b"y")}


def test_terminal_never_given_output_has_none_in_the_document() -> None:
    store = ToolCallStore()
    store.apply(terminal_update(command="ls", cwd="/r", exitStatus={"exitCode": 0}))
    assert terminal_doc(store) == {
        "terminalId": "t",
        "command": "ls",
        "cwd": "/r",
        "exitStatus": {"exitCode": 0},
    }
    assert store.sessions[SID].terminals["t"].exited


def test_unknown_terminal_keys_are_kept_and_patched_and_the_output_keeps_its_meta() -> None:
    """D19: a terminal's unknown update keys, and the ``_meta`` and unknown keys of an ``output``
    snapshot, were dropped without a word (the export lost them)."""
    store = ToolCallStore()
    events = store.apply(
        terminal_update(
            command="ls",
            futureKey={"a": 1},
            output={"data": b64(b"hi"), "_meta": {"tty": True}, "encoding": "utf-8"},
        )
    )
    assert events[-1] == TerminalPatched(SID, "t", ("command", "output", "futureKey"))
    store.apply(output_chunk(b64(b"!")))  # chunks add bytes; the snapshot's keys stay
    events = store.apply(terminal_update(futureKey=None, other=2))
    assert events == [
        TerminalPatched(SID, "t", ("other",)),
        TerminalCleared(SID, "t", ("futureKey",)),
    ]
    expected_output = {"data": b64(b"hi!"), "_meta": {"tty": True}, "encoding": "utf-8"}
    assert terminal_doc(store) == {
        "terminalId": "t",
        "command": "ls",
        "output": expected_output,
        "futureKey": None,
        "other": 2,
    }
    # The snapshot recreates the terminal on an empty store (D35).
    again = ToolCallStore()
    again.apply(notification(json.loads(encode(store.sessions[SID].terminals["t"].snapshot()))))
    assert terminal_doc(again) == terminal_doc(store)
    # A snapshot without them replaces them; null clears the output and them.
    store.apply(terminal_update(output={"data": b64(b"new")}))
    assert terminal_doc(store)["output"] == {"data": b64(b"new")}
    store.apply(terminal_update(output={"data": b64(b"x"), "_meta": {"m": 1}}))
    store.apply(terminal_update(output=None))
    store.apply(output_chunk(b64(b"y")))
    assert terminal_doc(store)["output"] == {"data": b64(b"y")}


def test_a_terminal_counts_the_bytes_of_its_kept_keys() -> None:
    """The bytes of unknown keys and of the output's ``_meta`` are counted, capped, and given
    back when replaced or cut."""
    store = ToolCallStore(limits=Limits(max_value_bytes=4096, max_terminal_bytes=64))
    terminal = lambda: store.sessions[SID].terminals["t"]  # noqa: E731
    store.apply(terminal_update(command="ls"))
    base = terminal().size
    empty = base - terminal().sizes["command"]
    store.apply(terminal_update(big="x" * 2000, output={"data": b64(b"a"), "_meta": {"k": "v"}}))
    grown = terminal().size
    assert grown > base + 2000 and store.sessions[SID].size >= grown
    store.apply(output_chunk(b64(b"b" * 200)))  # past max_terminal_bytes: the middle goes
    assert terminal().sizes["output"] > len(terminal().output_bytes)  # the _meta is counted
    assert terminal().size == empty + sum(terminal().sizes.values())
    events = store.apply(terminal_update(big="y" * 10_000, output={"data": b64(b"c")}))
    assert any(isinstance(e, LimitReached) and "`big`" in e.detail for e in events)
    assert terminal_doc(store)["big"].startswith("y" * 100)
    assert terminal().sizes["big"] < 4096 + 512 and terminal().sizes["output"] == 1
    assert terminal().size == empty + sum(terminal().sizes.values())


def test_invalid_base64_chunk_is_dropped_and_reported() -> None:
    store = ToolCallStore()
    store.apply(output_chunk(b64(b"ok")))
    events = store.apply(output_chunk("@@not base64"))
    assert [type(e) for e in events] == [DiagnosticReported]
    assert store.sessions[SID].terminals["t"].output_bytes == b"ok"


def test_invalid_base64_snapshot_reads_as_omitted() -> None:
    store = ToolCallStore()
    store.apply(output_chunk(b64(b"ok")))
    events = store.apply(terminal_update(output={"data": "a"}, command="c"))
    assert any(isinstance(e, DiagnosticReported) for e in events)
    assert store.sessions[SID].terminals["t"].output_bytes == b"ok"
    assert terminal_doc(store)["command"] == "c"


def test_terminal_reference_before_terminal_state_is_kept() -> None:
    # Zed dropped a whole update for an unknown terminal id (D46 (evidence: terminals)).
    store = ToolCallStore()
    store.apply(update(title="Run", content=[{"type": "terminal", "terminalId": "t"}]))
    assert call(store)["content"] == [{"type": "terminal", "terminalId": "t"}]
    store.apply(output_chunk(b64(b"later")))
    assert terminal_doc(store)["output"] == {"data": b64(b"later")}


# --------------------------------------------------------------------------------------------
# Status warnings, sweep, open calls, time


def test_reused_id_after_final_status_is_applied_and_warned() -> None:
    store = ToolCallStore()
    store.apply(update(title="bash:0", status="completed"))
    events = store.apply(update(status="in_progress"))
    assert events[-1] == ToolCallReopened(SID, "a", "completed", "in_progress")
    assert store.view(SID, "a").status == "in_progress"
    assert not any(isinstance(e, ToolCallReopened) for e in store.apply(update(title="x")))


def test_unknown_status_counts_as_open_and_sweep_marks_open_calls() -> None:
    store = ToolCallStore()
    store.apply(update("a", status="_waiting"))
    store.apply(update("b", status="completed"))
    store.apply(update("c", status="paused"))
    assert [v.tool_call_id for v in store.open_calls()] == ["a", "c"]
    events = store.sweep(SID, "cancelled", now=5.0)
    # The client's conclusion is an overlay on the view, not protocol state (D14, D15).
    assert events == [
        ToolCallEndedLocally(SID, "a", "cancelled"),
        ToolCallEndedLocally(SID, "c", "cancelled"),
    ]
    assert [v.ended_locally for v in store.views(SID)] == ["cancelled", None, "cancelled"]
    assert [v.status for v in store.views(SID)] == ["_waiting", "completed", "paused"]
    assert [v.tool_call_id for v in store.open_calls()] == ["a", "c"]
    assert store.view(SID, "a").updated_at == 5.0
    with pytest.raises(ValueError):
        store.sweep(SID, "in_progress")


def test_last_update_time_is_the_callers_clock() -> None:
    store = ToolCallStore()
    store.apply(update(title="T"), now=1.5)
    store.apply(chunk(text("x")), now=2.5)
    assert store.view(SID, "a").updated_at == 2.5
    store.apply(update(title="U"))
    assert store.view(SID, "a").updated_at == 2.5


# --------------------------------------------------------------------------------------------
# Sessions, batches, bad input


def test_sessions_are_separate_and_ids_in_first_seen_order() -> None:
    store = ToolCallStore()
    store.apply(update("b", session_id="s2", title="other session"))
    for tool_call_id in ("z", "a", "m"):
        store.apply(update(tool_call_id, title=tool_call_id))
    store.apply(update("a", title="again"))
    assert [tc["toolCallId"] for tc in doc(store)["toolCalls"]] == ["z", "a", "m"]
    assert [tc["toolCallId"] for tc in doc(store, "s2")["toolCalls"]] == ["b"]
    assert doc(store)["terminals"] == []


def test_batch_is_applied_in_order_and_a_bad_element_costs_nothing_else() -> None:
    store = ToolCallStore()
    batch = (
        b"["
        + update(content=[text("R")])
        + b',{"jsonrpc":"2.0","method":"session/update","params":5},'
        + chunk(text("after"))
        + b"]"
    )
    events = store.apply(batch)
    assert [type(e) for e in events] == [
        ToolCallCreated,
        ToolCallPatched,
        DiagnosticReported,
        ContentAppended,
    ]
    assert call(store)["content"] == [text("R"), text("after")]


def test_unreadable_input_raises_and_changes_nothing() -> None:
    store = ToolCallStore()
    store.apply(update(title="T"))
    before = json.dumps(store.document())
    for bad in (b"{", b"[]", b"\xff", b'{"jsonrpc":"2.0","method":"session/update","params":{}}'):
        with pytest.raises(DecodeError):
            store.apply(bad)
    assert json.dumps(store.document()) == before


def test_other_messages_are_ignored() -> None:
    store = ToolCallStore()
    for line in (
        notification(
            {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}
        ),
        b'{"jsonrpc":"2.0","id":1,"result":{}}',
        b'{"jsonrpc":"2.0","method":"_vendor/x","params":{}}',
    ):
        assert store.apply(line) == []
    assert store.sessions == {}


def test_typed_models_and_decoded_values_are_accepted() -> None:
    store = ToolCallStore()
    params = v2.UpdateSessionNotification(
        session_id=SID, update=v2.SessionToolCallUpdate(tool_call_id="a", title="T")
    )
    store.apply(params)
    store.apply(json.loads(update(status="completed")))
    assert call(store) == {"toolCallId": "a", "title": "T", "status": "completed"}
    with pytest.raises(TypeError):
        store.apply(3.5)


# --------------------------------------------------------------------------------------------
# Caps


def test_content_cap_keeps_head_and_tail_and_reports() -> None:
    store = ToolCallStore(limits=Limits(max_content_items=16))
    events: list[Any] = []
    for i in range(40):
        events += store.apply(chunk(text(str(i))))
    content = [c["content"]["text"] for c in call(store)["content"]]
    assert len(content) <= 16
    assert content[:4] == ["0", "1", "2", "3"]  # the head stays
    assert content[-1] == "39"  # and the tail is the newest
    limits = [e for e in events if isinstance(e, LimitReached)]
    assert limits and all(e.limit == "max_content_items" for e in limits)
    notes = [e for e in events if isinstance(e, DiagnosticReported)]
    assert len(notes) == len(limits) and all(e.kind == "limit" for e in notes)
    assert store.view(SID, "a").dropped_items == 40 - len(content)


def test_terminal_cap_keeps_head_and_tail_bytes() -> None:
    store = ToolCallStore(limits=Limits(max_terminal_bytes=64))
    events: list[Any] = []
    for i in range(100):
        events += store.apply(output_chunk(b64(f"{i:03d}\n".encode())))
    output = store.sessions[SID].terminals["t"].output_bytes
    assert len(output) <= 64
    assert output.startswith(b"000\n001\n")
    assert output.endswith(b"099\n")
    assert any(isinstance(e, LimitReached) for e in events)


def test_tool_call_cap_evicts_finished_calls_first() -> None:
    store = ToolCallStore(limits=Limits(max_tool_calls=8))
    store.apply(update("open-0", status="in_progress"))
    events: list[Any] = []
    for i in range(12):
        events += store.apply(update(f"done-{i}", status="completed"))
    ids = list(store.sessions[SID].tool_calls)
    assert len(ids) <= 8
    assert "open-0" in ids
    evicted = [e.tool_call_id for e in events if isinstance(e, ToolCallEvicted)]
    assert evicted and all(i.startswith("done-") for i in evicted)
    assert any(isinstance(e, LimitReached) for e in events)


def test_many_distinct_ids_stay_bounded() -> None:
    store = ToolCallStore(limits=Limits(max_tool_calls=100))
    for i in range(2_000):
        store.apply(update(f"id-{i}", status="in_progress"))
    assert len(store.sessions[SID].tool_calls) <= 100


# --------------------------------------------------------------------------------------------
# Properties

ITEMS = st.builds(text, st.text(max_size=5))


@settings(max_examples=100)
@given(chunks=st.lists(ITEMS, max_size=6), replacement=st.lists(ITEMS, max_size=3))
def test_chunks_then_replacement_equals_replacement_alone(
    chunks: list[dict[str, Any]], replacement: list[dict[str, Any]]
) -> None:
    streamed = ToolCallStore()
    streamed.apply(update(title="T"))
    for item in chunks:
        streamed.apply(chunk(item))
    streamed.apply(update(content=replacement))
    direct = ToolCallStore()
    direct.apply(update(title="T"))
    direct.apply(update(content=replacement))
    assert streamed.document() == direct.document()


PATCHES = st.fixed_dictionaries(
    {},
    optional={
        "title": st.one_of(st.none(), st.text(max_size=4)),
        "kind": st.one_of(st.none(), st.sampled_from(["read", "edit", "_x"])),
        "status": st.one_of(st.none(), st.sampled_from(["pending", "completed", "paused"])),
        "content": st.one_of(st.none(), st.lists(ITEMS, max_size=2)),
        "rawInput": st.one_of(st.none(), st.integers()),
        "_meta": st.one_of(
            st.none(),
            st.dictionaries(st.sampled_from("abc"), st.one_of(st.none(), st.integers())),
        ),
    },
)
OPS = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "c"]),
        st.one_of(PATCHES.map(lambda p: ("update", p)), ITEMS.map(lambda i: ("chunk", i))),
    ),
    max_size=20,
)


def _line(tool_call_id: str, op: tuple[str, Any]) -> bytes:
    kind, payload = op
    if kind == "update":
        return update(tool_call_id, **payload)
    return chunk(payload, tool_call_id)


@settings(max_examples=100)
@given(ops=OPS, data=st.data())
def test_the_fold_of_one_id_does_not_depend_on_interleaving(ops: Any, data: Any) -> None:
    # Any interleaving that keeps each id's own order gives the same per-id state.
    shuffled = list(ops)
    data.draw(st.randoms()).shuffle(shuffled)
    queues: dict[str, list[Any]] = {}
    for tool_call_id, op in ops:
        queues.setdefault(tool_call_id, []).append(op)
    interleaved = []
    for tool_call_id, _ in shuffled:
        interleaved.append((tool_call_id, queues[tool_call_id].pop(0)))
    first, second = ToolCallStore(), ToolCallStore()
    for tool_call_id, op in ops:
        first.apply(_line(tool_call_id, op))
    for tool_call_id, op in interleaved:
        second.apply(_line(tool_call_id, op))
    for tool_call_id in {t for t, _ in ops}:
        assert call(first, tool_call_id) == call(second, tool_call_id)


@settings(max_examples=100)
@given(ops=OPS)
def test_snapshot_recreates_the_state_on_an_empty_store(ops: Any) -> None:
    store = ToolCallStore()
    for tool_call_id, op in ops:
        store.apply(_line(tool_call_id, op))
    if SID not in store.sessions:
        return
    for tool_call_id in store.sessions[SID].tool_calls:
        snapshot = call(store, tool_call_id)
        fresh = ToolCallStore()
        fresh.apply(update(**snapshot))
        assert call(fresh, tool_call_id) == snapshot


# --------------------------------------------------------------------------------------------
# Issue 16: v1 enums as v1 reads them (D32); the client's own conclusions (D46 (client store), D14,
# D15)


def test_v1_strings_v1_does_not_define_are_not_applied_but_sent_on() -> None:
    store = ToolCallStore(version="v1")
    created = {"sessionUpdate": "tool_call", "toolCallId": "a", "title": "T"}
    store.apply(v1_notification({**created, "kind": "_custom", "status": "cancelled"}))
    view = store.view(SID, "a")
    # v1 enums are closed: an unknown string reads as omitted, the default on a create.
    assert (view.kind, view.status, view.is_final) == ("other", "pending", False)
    assert [v.tool_call_id for v in store.open_calls()] == ["a"]
    # ... and is kept only to be sent on as it came.
    assert (call(store)["kind"], call(store)["status"]) == ("_custom", "cancelled")

    store.apply(v1_notification({**created, "toolCallId": "b", "status": "paused"}))
    assert store.view(SID, "b").status == "pending"
    store.apply(
        v1_notification(
            {"sessionUpdate": "tool_call_update", "toolCallId": "b", "status": "in_progress"}
        )
    )
    store.apply(
        v1_notification(
            {"sessionUpdate": "tool_call_update", "toolCallId": "b", "status": "cancelled"}
        )
    )
    assert store.view(SID, "b").status == "in_progress"  # an update: no change
    assert not store.view(SID, "b").is_final
    # A status v1 defines replaces the kept string.
    store.apply(
        v1_notification(
            {"sessionUpdate": "tool_call_update", "toolCallId": "b", "status": "failed"}
        )
    )
    assert store.view(SID, "b").status == "failed" and call(store, "b")["status"] == "failed"


def test_a_v2_store_applies_any_status_and_kind_as_received() -> None:
    store = ToolCallStore()
    store.apply(update(kind="_custom", status="cancelled"))
    view = store.view(SID, "a")
    assert (view.kind, view.status, view.is_final) == ("_custom", "cancelled", True)


def _request(method: str, params: dict[str, Any], request_id: int = 9) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return json.dumps(message).encode()


def test_session_cancel_and_sweep_are_a_local_overlay_never_protocol_state() -> None:
    store = ToolCallStore()
    store.apply(update("a", status="in_progress", title="A"))
    store.apply(update("b", status="in_progress", title="B"))
    store.apply(update("c", status="completed", title="C"))
    background = [{"type": "tool_call", "toolCallId": "b"}]
    store.apply(
        notification(
            {"sessionUpdate": "state_update", "state": "running", "background": background}
        )
    )
    before = store.document()
    events = store.apply(_request("session/cancel", {"sessionId": SID}), now=3.0)
    # Open calls not listed as background work are marked; finished and background ones not.
    assert events == [ToolCallEndedLocally(SID, "a", "cancelled")]
    assert [v.ended_locally for v in store.views(SID)] == ["cancelled", None, None]
    assert store.view(SID, "a").status == "in_progress"  # what the agent said
    # Never exported: the snapshot, the document and the open calls are unchanged.
    assert store.document() == before
    assert "status" in call(store, "a") and call(store, "a")["status"] == "in_progress"
    assert [v.tool_call_id for v in store.open_calls()] == ["a", "b"]
    # tool_call/cancel marks its one call, background or not.
    store.apply(_request("tool_call/cancel", {"sessionId": SID, "toolCallId": "b"}))
    assert store.view(SID, "b").ended_locally == "cancelled"
    # The agent's next status (a value, or null) replaces the mark (D15: the agent wins).
    store.apply(update("a", status="completed"))
    assert store.view(SID, "a").ended_locally is None
    assert store.view(SID, "a").status == "completed"
    store.apply(update("b", status=None))
    assert store.view(SID, "b").ended_locally is None
    # A title change is not a status: the mark stays.
    store.apply(update("d", status="in_progress"))
    store.sweep(SID, "failed")
    store.apply(update("d", title="D2"))
    assert store.view(SID, "d").ended_locally == "failed"


# --------------------------------------------------------------------------------------------
# document_json (issue 19): the replay --json bytes without the plain values in between


def _mixed_store() -> ToolCallStore:
    store = ToolCallStore(limits=Limits(max_content_items=3))
    lines = [
        update(title="Run", kind="execute", status="in_progress", rawInput={"cmd": "ls", "n": 1.5}),
        chunk({"type": "content", "content": {"type": "text", "text": "é ok"}}),
        chunk({"type": "content", "content": {"type": "text", "text": "x", "x-vendor": [1]}}),
        update(
            "b",
            _meta={"k": None, "j": {"a": [True, None]}},
            **cast(dict[str, Any], {"x-extra": {"deep": 1}}),
        ),
        update("c", status=None, content=None, locations=[]),
        terminal_update(command="ls", output={"data": b64(b"hi\n")}),
        output_chunk(b64(b"more")),
        terminal_update("t2", exitStatus={"exitCode": 0}, output=None),
    ]
    for data in lines:
        store.apply(data)
    for index in range(5):  # past the content cap: the document says what was dropped
        store.apply(chunk({"type": "content", "content": {"type": "text", "text": str(index)}}))
    return store


def test_document_json_is_the_encoded_document() -> None:
    store = _mixed_store()
    expected = encode(store.document())
    assert store.document_json() == expected
    assert store.document_json(decoded_only=True) == expected
    assert ToolCallStore().document_json() == encode(ToolCallStore().document())


def test_document_json_refuses_what_encode_refuses() -> None:
    store = ToolCallStore()
    store.apply(
        v2.UpdateSessionNotification(
            session_id=SID,
            update=v2.SessionToolCallUpdate(tool_call_id="a", raw_input={"x": float("nan")}),
        )
    )
    with pytest.raises(EncodeError):
        encode(store.document())
    with pytest.raises(EncodeError):
        store.document_json()


class _RecordingStore(ToolCallStore):
    """A client's own store: what compiled and interpreted builds both allow."""

    def __init__(self) -> None:
        super().__init__(version="v2")
        self.seen: list[Any] = []

    def apply(self, message: Any, *, now: float | None = None) -> list[Any]:
        events = super().apply(message, now=now)
        self.seen.extend(events)
        return events


def test_a_client_may_subclass_the_store() -> None:
    # The compiled store allows interpreted subclasses (issue 19): without it, the class
    # statement above raised TypeError in the compiled build.
    store = _RecordingStore()
    line = (
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
        b'{"sessionUpdate":"tool_call_update","toolCallId":"c","title":"t"}}}'
    )
    events = store.apply(line)
    assert events and store.seen == events
    assert store.view("s", "c").title == "t"


# --------------------------------------------------------------------------------------------
# The public Structs through msgspec, in either build


def test_limits_and_a_view_decode_and_convert_as_msgspec_types() -> None:
    """In the compiled build (CI's second stage) mypyc wrote ``type`` for every annotation of
    ``Limits`` and ``ToolCallView``, and msgspec refused their fields ("Expected `type`, got
    `int`"): ``bridge --inspect`` hands its limits to the page's process that way."""
    limits = Limits(max_content_items=3, max_store_bytes=None)
    assert msgspec.json.decode(msgspec.json.encode(limits), type=Limits) == limits
    assert msgspec.convert({"max_tool_calls": 5}, Limits) == Limits(max_tool_calls=5)
    with pytest.raises(msgspec.ValidationError, match=r"\$\.max_sessions"):
        msgspec.convert({"max_sessions": "many"}, Limits)
    store = ToolCallStore()
    store.apply(update(title="Read", kind="read", content=[text("hi")], locations=[]))
    view = store.view(SID, "a")
    assert msgspec.convert(msgspec.to_builtins(view), type(view)) == view
