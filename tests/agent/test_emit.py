"""ToolCallEmitter: minimal patches, clears, ids, growing text, turn end, permissions (D46 (sender
obligations))."""

from __future__ import annotations

import base64
import json
import logging
import re
from pathlib import Path
from typing import Any, cast

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_toolcalls import UNSET, ToolCallStore, encode, v1, v2
from acp_toolcalls.agent import (
    SenderError,
    TextThrottle,
    ToolCallEmitter,
    ToolCallIdReused,
    ToolCallNotOpen,
    command_subject,
    diff_content,
    permission_request,
    text_content,
)
from acp_toolcalls.check import validate_message
from acp_toolcalls.models import VersionName

SID = "sess_1"


def wire(messages: list[Any]) -> list[dict[str, Any]]:
    """The messages as JSON values, each encoded (and so schema-checked by the conftest guard)."""
    out: list[dict[str, Any]] = json.loads("[" + b",".join(map(encode, messages)).decode() + "]")
    return out


def updates(messages: list[Any]) -> list[dict[str, Any]]:
    return [m["params"]["update"] for m in wire(messages)]


def store_of(*batches: list[Any], protocol: VersionName = "v2") -> ToolCallStore:
    store = ToolCallStore(version=protocol)
    for batch in batches:
        for message in batch:
            store.apply(encode(message), now=0.0)
    return store


# --------------------------------------------------------------------------------------------
# First report


def test_start_sends_title_and_explicit_pending() -> None:
    emitter = ToolCallEmitter(SID)
    [update] = updates(emitter.start("c1", title="Read a.py", kind="read"))
    assert update == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "title": "Read a.py",
        "kind": "read",
        "status": "pending",
    }


@pytest.mark.parametrize("title", ["", "   "])
def test_start_refuses_an_empty_title(title: str) -> None:
    emitter = ToolCallEmitter(SID)
    with pytest.raises(SenderError, match="title"):
        emitter.start("c1", title=title)
    assert emitter.open_calls() == []  # nothing recorded: the id is still free
    assert updates(emitter.start("c1", title="ok"))[0]["toolCallId"] == "c1"


@pytest.mark.parametrize(
    ("kwargs", "path"),
    [
        ({"kind": "lookup"}, "kind"),
        ({"status": "running"}, "status"),
        ({"locations": [v2.ToolCallLocation(path="src/a.py")]}, "locations[0].path"),
        ({"locations": [v2.ToolCallLocation(path="file:///a.py")]}, "locations[0].path"),
        ({"locations": [v2.ToolCallLocation(path="/a.py", line=0)]}, "locations[0].line"),
        ({"content": [v2.Terminal(terminal_id="")]}, "content[0].terminalId"),
        (
            {"content": [v2.UnknownToolCallContent({"type": "chart", "x": 1})]},
            "content[0].type",
        ),
        ({"raw_input": {"x": float("nan")}}, "rawInput"),
        ({"meta": {1: "x"}}, "_meta"),
    ],
)
def test_values_are_checked_before_anything_is_sent(kwargs: dict[str, Any], path: str) -> None:
    emitter = ToolCallEmitter(SID)
    with pytest.raises(SenderError) as raised:
        emitter.start("c1", title="t", **kwargs)
    assert raised.value.path == path


def test_custom_values_with_an_underscore_and_windows_paths_are_accepted() -> None:
    emitter = ToolCallEmitter(SID)
    [update] = updates(
        emitter.start(
            "c1",
            title="t",
            kind="_lookup",
            locations=[v2.ToolCallLocation(path="C:\\src\\a.py", line=1)],
            content=[v2.UnknownToolCallContent({"type": "_chart", "points": [1, 2]})],
        )
    )
    assert update["kind"] == "_lookup"
    assert update["content"] == [{"type": "_chart", "points": [1, 2]}]


def test_start_of_an_open_id_is_refused() -> None:
    emitter = ToolCallEmitter(SID)
    emitter.start("c1", title="t")
    with pytest.raises(ToolCallIdReused, match="already open"):
        emitter.start("c1", title="t")


# --------------------------------------------------------------------------------------------
# Minimal patches


def test_only_changed_fields_are_sent_and_nothing_when_nothing_changed() -> None:
    emitter = ToolCallEmitter(SID)
    emitter.start("c1", title="Run tests", kind="execute", raw_input={"cmd": "pytest"})
    assert emitter.update("c1", title="Run tests", kind="execute") == []
    assert emitter.update("c1", raw_input={"cmd": "pytest"}) == []
    [update] = updates(emitter.update("c1", title="Run tests", status="in_progress"))
    assert update == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "status": "in_progress",
    }


def test_equal_in_python_but_not_on_the_wire_is_a_change() -> None:
    emitter = ToolCallEmitter(SID)
    emitter.start("c1", title="t", raw_input=1)
    [update] = updates(emitter.update("c1", raw_input=True))  # 1 == True in Python
    assert update["rawInput"] is True
    [update] = updates(emitter.update("c1", raw_input=1.0))
    assert update["rawInput"] == 1.0


def test_none_clears_what_is_there_and_only_that() -> None:
    emitter = ToolCallEmitter(SID)
    emitter.start(
        "c1", title="t", kind="edit", locations=[v2.ToolCallLocation(path="/a")], raw_input={}
    )
    assert emitter.update("c1", raw_output=None) == []  # never sent: nothing to clear
    [update] = updates(emitter.update("c1", kind=None, locations=None, raw_input=None))
    assert update == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "kind": None,
        "locations": None,
        "rawInput": None,
    }
    assert emitter.update("c1", kind=None) == []  # already cleared


def test_an_omitted_argument_never_becomes_null() -> None:
    emitter = ToolCallEmitter(SID)
    emitter.start("c1", title="Edit", content=[diff_content("/a.py", "x\n", "y\n")])
    [update] = updates(emitter.finish("c1"))  # the diff stays: `content` is not sent at all
    assert update == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "status": "completed",
    }


def test_content_is_replaced_whole_and_an_equal_list_is_not_resent() -> None:
    emitter = ToolCallEmitter(SID)
    emitter.start("c1", title="t", content=[text_content("a")])
    assert emitter.update("c1", content=[text_content("a")]) == []
    [update] = updates(emitter.update("c1", content=[text_content("a"), text_content("b")]))
    assert [item["content"]["text"] for item in update["content"]] == ["a", "b"]
    [update] = updates(emitter.update("c1", content=None))
    assert update["content"] is None
    assert emitter.update("c1", content=[]) == []  # `[]` and cleared hold the same


def test_meta_is_patched_by_top_level_key() -> None:
    emitter = ToolCallEmitter(SID)
    emitter.start("c1", title="t", meta={"a": 1, "b": {"x": 1}})
    assert emitter.update("c1", meta={"a": 1}) == []
    [update] = updates(emitter.update("c1", meta={"a": 1, "b": {"x": 2}, "c": None}))
    assert update["_meta"] == {"b": {"x": 2}}  # `c` was never there: no removal to send
    [update] = updates(emitter.update("c1", meta={"a": None}))
    assert update["_meta"] == {"a": None}
    [update] = updates(emitter.update("c1", meta=None))
    assert update["_meta"] is None
    assert emitter.update("c1", meta=None) == []


def test_a_name_change_is_sent_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    emitter = ToolCallEmitter(SID)
    emitter.start("c1", title="t", name="bash")
    with caplog.at_level(logging.WARNING, logger="acp_toolcalls.emit"):
        [update] = updates(emitter.update("c1", name="shell"))
    assert update["name"] == "shell"
    assert "changed its name" in caplog.text


def test_a_final_status_goes_through_finish() -> None:
    emitter = ToolCallEmitter(SID)
    emitter.start("c1", title="t")
    with pytest.raises(SenderError, match="use `finish`"):
        emitter.update("c1", status="completed")
    with pytest.raises(SenderError, match="not final"):
        emitter.finish("c1", "in_progress")


ops = st.lists(
    st.tuples(
        st.sampled_from(["title", "kind", "status", "raw_input", "locations", "content", "meta"]),
        st.integers(0, 3),
    ),
    max_size=25,
)
_VALUES: dict[str, list[Any]] = {
    "title": [None, "a", "b", "c"],
    "kind": [None, "read", "edit", "_custom"],
    "status": [None, "pending", "in_progress", "paused"],
    "raw_input": [None, {"a": 1}, [1, 2], "text"],
    "locations": [None, [], [v2.ToolCallLocation(path="/a")], [v2.ToolCallLocation(path="/b")]],
    "content": [None, [], [text_content("x")], [text_content("x"), text_content("y")]],
    "meta": [None, {"a": 1}, {"a": None, "b": 2}, {"b": 2}],
}


def effective(state: v2.ToolCallUpdate) -> dict[str, Any]:
    """What a client shows: never set, ``null``, ``[]`` and ``{}`` all read as absent (D2, D4)."""
    shown = {}
    for field in msgspec.structs.fields(state):
        value = getattr(state, field.name)
        if value is not UNSET and value is not None and value != [] and value != {}:
            shown[field.name] = value
    return shown


@settings(max_examples=150, deadline=None)
@given(ops)
def test_minimal_patches_fold_to_the_same_state_as_full_ones(steps: list[tuple[str, int]]) -> None:
    """The client's state after the emitter's minimal patches equals the state after every
    update sent in full; and an update that changes nothing sends nothing."""
    emitter = ToolCallEmitter(SID)
    minimal = store_of(emitter.start("c1", title="start"))
    full = ToolCallStore(version="v2")
    full.apply_update(SID, v2.SessionToolCallUpdate(tool_call_id="c1", title="start"), now=0.0)
    full.apply_update(SID, v2.SessionToolCallUpdate(tool_call_id="c1", status="pending"), now=0.0)
    for field, index in steps:
        value = _VALUES[field][index]
        before = minimal.snapshot(SID, "c1")
        messages = emitter.update("c1", **{field: value})
        for message in messages:
            minimal.apply(encode(message), now=0.0)
        update = v2.SessionToolCallUpdate(tool_call_id="c1", **{field: value})
        full.apply_update(SID, update, now=0.0)
        assert effective(minimal.snapshot(SID, "c1")) == effective(full.snapshot(SID, "c1"))
        if not messages:
            assert minimal.snapshot(SID, "c1") == before


# --------------------------------------------------------------------------------------------
# Ids


def test_a_finished_id_started_again_gets_a_fresh_namespaced_id() -> None:
    emitter = ToolCallEmitter(SID)
    emitter.start("bash:0", title="ls")
    emitter.finish("bash:0")
    [update] = updates(emitter.start("bash:0", title="pwd"))
    assert update["toolCallId"] == "bash:0#2"
    assert emitter.tool_call_id("bash:0") == "bash:0#2"
    emitter.finish("bash:0", "failed")
    assert updates(emitter.start("bash:0", title="x"))[0]["toolCallId"] == "bash:0#3"


def test_namespacing_never_collides_with_an_id_the_caller_used() -> None:
    emitter = ToolCallEmitter(SID)
    emitter.start("a#2", title="literal")
    emitter.start("a", title="first")
    emitter.finish("a")
    assert updates(emitter.start("a", title="second"))[0]["toolCallId"] == "a#3"


def test_reuse_refuse_raises() -> None:
    emitter = ToolCallEmitter(SID, reuse="refuse")
    emitter.start("c1", title="t")
    emitter.finish("c1")
    with pytest.raises(ToolCallIdReused, match="final"):
        emitter.start("c1", title="t")


@pytest.mark.parametrize(
    "action",
    [
        lambda e: e.update("c1", title="x"),
        lambda e: e.append("c1", text_content("x")),
        lambda e: e.grow_text("c1", "x", now=0.0),
        lambda e: e.finish("c1"),
        lambda e: e.request_permission("c1", request_id=1, title="ok?"),
    ],
)
def test_a_finished_or_unknown_call_takes_no_more_updates(action: Any) -> None:
    emitter = ToolCallEmitter(SID)
    with pytest.raises(ToolCallNotOpen, match="never started"):
        action(emitter)
    emitter.start("c1", title="t")
    emitter.finish("c1")
    with pytest.raises(ToolCallNotOpen, match="final"):
        action(emitter)


def test_finish_withdraws_an_advertised_cancel_capability() -> None:
    emitter = ToolCallEmitter(SID)
    caps = v2.ToolCallCapabilities(cancel=v2.ToolCallCancelCapabilities())
    emitter.start("c1", title="t", capabilities=caps)
    [update] = updates(emitter.finish("c1", "cancelled"))
    assert update == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "status": "cancelled",
        "capabilities": None,
    }


# --------------------------------------------------------------------------------------------
# Turn end


def test_finish_open_closes_every_open_call_but_background_work(
    caplog: pytest.LogCaptureFixture,
) -> None:
    emitter = ToolCallEmitter(SID)
    for call in ("a", "b", "watch"):
        emitter.start(call, title=call)
    emitter.finish("a")
    with caplog.at_level(logging.WARNING, logger="acp_toolcalls.emit"):
        sent = updates(emitter.finish_open("failed", background=["watch"], bug=True))
    assert [(u["toolCallId"], u["status"]) for u in sent] == [("b", "failed")]
    assert "'b' was still open" in caplog.text
    assert emitter.open_calls() == ["watch"]


def test_end_turn_cancelled_cancels_open_calls_then_reports_idle() -> None:
    emitter = ToolCallEmitter(SID)
    emitter.start("a", title="a")
    emitter.start("bg", title="bg")
    sent = updates(emitter.end_turn("cancelled", background=["bg"], background_terminals=["t"]))
    assert sent == [
        {"sessionUpdate": "tool_call_update", "toolCallId": "a", "status": "cancelled"},
        {
            "sessionUpdate": "state_update",
            "state": "idle",
            "stopReason": "cancelled",
            "background": [
                {"type": "tool_call", "toolCallId": "bg"},
                {"type": "terminal", "terminalId": "t"},
            ],
        },
    ]


def test_end_turn_fails_forgotten_calls_and_logs_the_bug(
    caplog: pytest.LogCaptureFixture,
) -> None:
    emitter = ToolCallEmitter(SID)
    emitter.start("a", title="a")
    with caplog.at_level(logging.WARNING, logger="acp_toolcalls.emit"):
        sent = updates(emitter.end_turn())
    assert sent[0]["status"] == "failed"
    assert sent[-1]["stopReason"] == "end_turn"
    assert "still open" in caplog.text


# --------------------------------------------------------------------------------------------
# Growing text


def test_growing_text_is_a_chunk_first_then_throttled_replacements() -> None:
    emitter = ToolCallEmitter(
        SID, throttle=TextThrottle(min_interval=1.0, min_growth=10, max_delay=0.5)
    )
    emitter.start("c1", title="t", content=[text_content("header")])
    [first] = updates(emitter.grow_text("c1", "ab", now=0.0))
    assert first["sessionUpdate"] == "tool_call_content_chunk"
    assert first["content"]["content"]["text"] == "ab"
    assert emitter.grow_text("c1", "c" * 20, now=0.5) == []  # grown, but too soon
    assert emitter.next_deadline() == 1.0
    [replace] = updates(emitter.grow_text("c1", "d", now=1.0))
    texts = [item["content"]["text"] for item in replace["content"]]
    assert texts == ["header", "ab" + "c" * 20 + "d"]
    assert emitter.grow_text("c1", "e", now=2.5) == []  # due in time, but grew too little
    assert emitter.next_deadline() == 3.0  # first unsent char at 2.5 + max_delay 0.5
    [late] = updates(emitter.poll(3.0))
    assert late["content"][-1]["content"]["text"].endswith("de")
    assert emitter.next_deadline() is None


def test_pending_text_is_flushed_before_anything_else_about_the_call() -> None:
    emitter = ToolCallEmitter(SID, throttle=TextThrottle(min_interval=10.0))
    emitter.start("c1", title="t")
    emitter.grow_text("c1", "out: ", now=0.0)
    emitter.grow_text("c1", "42", now=0.1)
    sent = updates(emitter.append("c1", text_content("next")))
    assert sent[0]["content"][0]["content"]["text"] == "out: 42"
    assert sent[1]["sessionUpdate"] == "tool_call_content_chunk"
    emitter.grow_text("c1", "!", now=0.2)
    sent = updates(emitter.finish("c1"))
    assert sent[0]["content"][0]["content"]["text"] == "out: 42!"
    assert sent[1]["status"] == "completed"


def test_pending_text_is_flushed_before_a_permission_request() -> None:
    emitter = ToolCallEmitter(SID, throttle=TextThrottle(min_interval=10.0))
    emitter.start("c1", title="t")
    emitter.grow_text("c1", "a", now=0.0)
    emitter.grow_text("c1", "b", now=0.1)
    ask = emitter.request_permission("c1", request_id=1, title="Go on?")
    kinds = [m["method"] for m in wire(list(ask.messages))]
    assert kinds == ["session/update", "session/request_permission"]


def test_end_text_closes_the_item_so_later_text_starts_a_new_one() -> None:
    emitter = ToolCallEmitter(SID)
    emitter.start("c1", title="t")
    emitter.grow_text("c1", "one", now=0.0)
    emitter.end_text("c1")
    [chunk] = updates(emitter.grow_text("c1", "two", now=0.0))
    assert chunk["sessionUpdate"] == "tool_call_content_chunk"
    store = store_of(emitter.finish("c1"))  # what the client would show for the call's end
    assert store.snapshot(SID, "c1").status == "completed"


def test_replacing_content_drops_the_unsent_text() -> None:
    emitter = ToolCallEmitter(SID, throttle=TextThrottle(min_interval=10.0))
    emitter.start("c1", title="t")
    emitter.grow_text("c1", "draft", now=0.0)
    emitter.grow_text("c1", " more", now=0.1)
    [update] = updates(emitter.update("c1", content=[text_content("final")]))
    assert update["content"] == [{"type": "content", "content": {"type": "text", "text": "final"}}]
    assert emitter.flush() == []


def test_throttled_text_costs_linear_bytes_not_quadratic() -> None:
    """The agent-shell case (D46 (evidence: resends)): 35,000 lines over ~53 s. Resending the whole
    text per line would be ~22 GB; the default throttle sends one replacement per `max_delay` at
    most, plus geometric growth steps: under 30x the text, in under 70 messages."""
    emitter = ToolCallEmitter(SID)
    messages = emitter.start("c1", title="build")
    pieces = [f"line {i}: compiling module_{i}.c\n" for i in range(35_000)]
    for i, line in enumerate(pieces):
        messages += emitter.grow_text("c1", line, now=i * 0.0015)
    messages += emitter.finish("c1")
    text = "".join(pieces)
    sent = sum(len(encode(m)) for m in messages)
    naive = sum(len(line) for line in pieces) * len(pieces) // 2
    assert sent < 30 * len(text)
    assert len(messages) < 70
    assert naive > 500 * sent
    store = store_of(messages)
    [item] = cast(list[Any], store.snapshot(SID, "c1").content)  # a text `content` item
    assert item.content.text == text


# --------------------------------------------------------------------------------------------
# Terminals


def test_terminal_output_is_base64_per_chunk_and_ids_are_never_reused() -> None:
    emitter = ToolCallEmitter(SID)
    emitter.start_terminal("t1", command="make", cwd="/src")
    sent = updates(
        emitter.terminal_output("t1", b"\xe2\x82") + emitter.terminal_output("t1", b"\xac")
    )
    assert [base64.b64decode(u["data"]) for u in sent] == [b"\xe2\x82", b"\xac"]
    assert emitter.terminal_output("t1", b"") == []
    [done] = updates(emitter.exit_terminal("t1", exit_code=2))
    assert done["exitStatus"] == {"exitCode": 2}
    with pytest.raises(SenderError, match="exited"):
        emitter.terminal_output("t1", b"x")
    with pytest.raises(SenderError, match="already used"):
        emitter.start_terminal("t1")
    with pytest.raises(SenderError, match="absolute"):
        emitter.start_terminal("t2", cwd="src")


# --------------------------------------------------------------------------------------------
# Permission requests


def test_prompt_text_never_reaches_the_tool_call() -> None:
    emitter = ToolCallEmitter(SID)
    start = emitter.start("c1", title="Edit config.toml", kind="edit")
    diff = diff_content("/p/config.toml", "a = 1\n", "a = 2\n")
    ask = emitter.request_permission(
        "c1",
        request_id=9,
        title="Allow editing config.toml?",
        description="The agent wants to change a setting.",
        content=[diff],
    )
    [request] = wire(list(ask.messages))
    params = request["params"]
    assert params["title"] == "Allow editing config.toml?"
    assert params["subject"]["toolCall"] == {
        "toolCallId": "c1",
        "content": [json.loads(encode(diff))],
    }
    store = store_of(start, list(ask.messages))
    state = store.snapshot(SID, "c1")
    assert state.title == "Edit config.toml"
    assert state.content == [diff]


def test_the_subject_carries_only_the_change() -> None:
    emitter = ToolCallEmitter(SID)
    emitter.start("c1", title="t", kind="edit")
    ask = emitter.request_permission("c1", request_id="r1", title="ok?", kind="edit")
    [request] = wire(list(ask.messages))
    assert request["params"]["subject"]["toolCall"] == {"toolCallId": "c1"}
    assert request["id"] == "r1"


@pytest.mark.parametrize(
    ("options", "path"),
    [
        ([], "options"),
        ([("a", "A", "allow_once"), ("a", "B", "reject_once")], "options[1].optionId"),
        ([("a", "A", "maybe")], "options[0].kind"),
        ([("", "A", "allow_once")], "options[0].optionId"),
    ],
)
def test_bad_options_are_refused_and_change_nothing(
    options: list[tuple[str, str, str]], path: str
) -> None:
    emitter = ToolCallEmitter(SID)
    emitter.start("c1", title="t")
    with pytest.raises(SenderError) as raised:
        emitter.request_permission("c1", request_id=1, title="ok?", options=options, kind="edit")
    assert raised.value.path == path
    [update] = updates(emitter.update("c1", kind="edit"))  # the refused patch was not recorded
    assert update["kind"] == "edit"


def test_command_permission_needs_an_absolute_cwd() -> None:
    with pytest.raises(SenderError, match="absolute"):
        command_subject("make", "build")
    emitter = ToolCallEmitter(SID)
    subject = command_subject("cargo test", "/home/u/p", tool_call_id="c1", terminal_id="t1")
    ask = emitter.request_command_permission(request_id=3, title="Run tests?", command=subject)
    [request] = wire(list(ask.messages))
    assert request["params"]["subject"] == {
        "type": "command",
        "command": "cargo test",
        "cwd": "/home/u/p",
        "toolCallId": "c1",
        "terminalId": "t1",
    }


def _asked(emitter: ToolCallEmitter, request_id: int = 1) -> None:
    emitter.start(f"c{request_id}", title="t")
    emitter.request_permission(
        f"c{request_id}",
        request_id=request_id,
        title="ok?",
        options=[("yes", "Yes", "allow_once"), ("no", "No", "reject_once"), ("x", "X", "_ask")],
    )


@pytest.mark.parametrize(
    ("response", "outcome", "approved"),
    [
        ({"result": {"outcome": {"outcome": "selected", "optionId": "yes"}}}, "selected", True),
        ({"result": {"outcome": {"outcome": "selected", "optionId": "no"}}}, "selected", False),
        ({"result": {"outcome": {"outcome": "selected", "optionId": "x"}}}, "selected", False),
        ({"result": {"outcome": {"outcome": "selected", "optionId": "zz"}}}, "unoffered", False),
        ({"result": {"outcome": {"outcome": "cancelled"}}}, "cancelled", False),
        ({"result": {"outcome": {"outcome": "approved"}}}, "unknown", False),
        ({"result": {"outcome": {"outcome": "selected"}}}, "malformed", False),
        ({"result": {"outcome": 1}}, "malformed", False),
        ({"result": None}, "malformed", False),
        ({"error": {"code": -32800, "message": "cancelled"}}, "cancelled", False),
        ({"error": {"code": -32603, "message": "boom"}}, "error", False),
    ],
)
def test_only_an_offered_allow_option_is_approval(
    response: dict[str, Any], outcome: str, approved: bool
) -> None:
    emitter = ToolCallEmitter(SID)
    _asked(emitter)
    answer = emitter.answer({"jsonrpc": "2.0", "id": 1, **response})
    assert (answer.outcome, answer.approved) == (outcome, approved)


def test_an_answer_naming_an_option_id_offered_twice_is_never_approval() -> None:
    """The request of issue 14, item 5: `a` is both Allow and Reject; a click on Reject comes
    back as `selected a`."""
    from acp_toolcalls import parse_permission_answer

    options = [
        v2.PermissionOption(option_id="a", name="Allow", kind="allow_once"),
        v2.PermissionOption(option_id="a", name="Reject", kind="reject_once"),
    ]
    chosen = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"outcome": {"outcome": "selected", "optionId": "a"}},
    }
    answer = parse_permission_answer(chosen, options)
    assert (answer.outcome, answer.approved) == ("ambiguous", False)


def test_a_v1_clients_card_is_restored_after_the_answer_and_after_abandon() -> None:
    for close in ("answer", "abandon"):
        emitter = ToolCallEmitter(SID, version=1)
        emitter.start("c", title="Read README.md", kind="read")
        ask = emitter.request_permission(
            "c", request_id=1, title="Run `rm -rf ~`?", description="It deletes your home"
        )
        shown = json.loads(encode(ask.messages[-1]))["params"]["toolCall"]
        assert shown["title"] == "Run `rm -rf ~`?"
        assert shown["content"][0]["content"]["text"] == "It deletes your home"
        if close == "answer":
            emitter.answer(
                {"jsonrpc": "2.0", "id": 1, "result": {"outcome": {"outcome": "cancelled"}}}
            )
        else:
            emitter.abandon(1)
        (restore,) = [json.loads(encode(m)) for m in emitter.flush()]
        assert restore["params"]["update"] == {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c",
            "title": "Read README.md",
            "content": [],
        }


def test_an_abandoned_request_ignores_its_late_answer() -> None:
    emitter = ToolCallEmitter(SID)
    _asked(emitter)
    assert emitter.abandon(1).approved is False
    late = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"outcome": {"outcome": "selected", "optionId": "yes"}},
    }
    with pytest.raises(KeyError):
        emitter.answer(late)


def test_a_request_id_in_flight_cannot_be_reused() -> None:
    emitter = ToolCallEmitter(SID)
    _asked(emitter)
    emitter.start("c9", title="t")
    with pytest.raises(SenderError, match="still waiting"):
        emitter.request_permission("c9", request_id=1, title="again?")


# --------------------------------------------------------------------------------------------
# One agent, two protocol versions


def _scenario(emitter: ToolCallEmitter) -> list[Any]:
    out: list[Any] = []
    out += emitter.start("edit", title="Edit a.py", kind="edit", raw_input={"path": "/w/a.py"})
    ask = emitter.request_permission(
        "edit",
        request_id=1,
        title="Apply the edit?",
        content=[diff_content("/w/a.py", "x = 1\n", "x = 2\n")],
    )
    out += ask.messages
    answer = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"outcome": {"outcome": "selected", "optionId": "allow"}},
    }
    assert emitter.answer(answer).approved
    out += emitter.update("edit", status="in_progress", raw_input=None)
    out += emitter.finish("edit")
    out += emitter.start("run", title="make", kind="execute")
    out += emitter.start_terminal("term", command="make", cwd="/w")
    out += emitter.append("run", v2.Terminal(terminal_id="term"))
    out += emitter.terminal_output("term", b"ok\n")
    out += emitter.exit_terminal("term", exit_code=0)
    out += emitter.grow_text("run", "summary: ", now=0.0)
    out += emitter.grow_text("run", "all good", now=0.05)
    out += emitter.finish("run")
    out += emitter.start("read", title="Read b.py", kind="read")
    out += emitter.finish("read", "failed", content=[text_content("no such file")])
    out += emitter.end_turn()
    return out


@pytest.mark.parametrize("version", [1, 2])
def test_the_same_calls_make_schema_valid_messages_for_either_version(version: int) -> None:
    messages = _scenario(ToolCallEmitter(SID, version=version))
    for message in wire(messages):
        assert validate_message(message, cast(VersionName, f"v{version}")) == []
    methods = {
        m["params"]["update"]["sessionUpdate"]
        for m in wire(messages)
        if "update" in m.get("params", {})
    }
    if version == 1:
        assert methods <= set(v1.KNOWN_SESSION_UPDATES)
        assert "tool_call" in methods
    else:
        assert "tool_call" not in methods


def _every_feature(emitter: ToolCallEmitter) -> list[Any]:
    """Every emitter method and every kind of clear, after ``_scenario``'s turn."""
    out = _scenario(emitter)
    cancel = v2.ToolCallCapabilities(cancel=v2.ToolCallCancelCapabilities())
    out += emitter.start(
        "grep",
        title="Search for TODO",
        kind="search",
        name="grep",
        locations=[v2.ToolCallLocation(path="/w/a.py", line=3)],
        capabilities=cancel,
        meta={"vendor.example/parent": "edit", "vendor.example/n": 1},
    )
    out += emitter.update("grep", status="in_progress", meta={"vendor.example/n": None})
    out += emitter.append("grep", text_content("a.py:3: TODO"))
    out += emitter.update("grep", title=None, locations=None, content=[], kind=None)
    out += emitter.update("grep", title="Search again", raw_output={"hits": 1})
    ask = emitter.request_command_permission(
        request_id=2,
        title="Run make clean?",
        description="Removes build outputs.",
        command=command_subject("make clean", "/w"),
    )
    out += ask.messages
    rejected = {"jsonrpc": "2.0", "id": 2, "result": {"outcome": {"outcome": "cancelled"}}}
    assert not emitter.answer(rejected).approved
    out += emitter.finish("grep", "cancelled")
    out += emitter.start("bg", title="Watch files", kind="other")
    out += emitter.finish_open("cancelled")
    out += emitter.end_turn("cancelled")
    return out


@pytest.mark.parametrize("version", [1, 2])
def test_the_typescript_sdk_accepts_every_message_the_emitter_sends(version: int) -> None:
    from tests.interop.ts_sdk import TsMessage, ts_validate

    messages = wire(_every_feature(ToolCallEmitter(SID, version=version)))
    assert len(messages) > 20
    verdicts = ts_validate([TsMessage(version, message) for message in messages])
    rejected = [(m, v) for m, v in zip(messages, verdicts, strict=True) if v is not None]
    assert rejected == []


def test_v1_and_v2_clients_end_with_the_same_calls() -> None:
    v2_store = store_of(_scenario(ToolCallEmitter(SID, version=2)))
    v1_store = store_of(_scenario(ToolCallEmitter(SID, version=1)), protocol="v1")
    for call in ("edit", "run", "read"):
        a, b = v2_store.view(SID, call), v1_store.view(SID, call)
        assert (a.title, a.kind, a.status) == (b.title, b.kind, b.status)
    assert v1_store.snapshot(SID, "edit").raw_input is not None  # v1 cannot clear (documented)
    assert v2_store.snapshot(SID, "edit").raw_input is None


def test_a_v1_clients_answer_is_read_back_as_v2() -> None:
    emitter = ToolCallEmitter(SID, version=1)
    emitter.start("c1", title="t")
    ask = emitter.request_permission("c1", request_id=5, title="ok?")
    [request] = wire(list(ask.messages))
    assert request["params"]["toolCall"]["toolCallId"] == "c1"  # the v1 request shape
    v1_answer = {
        "jsonrpc": "2.0",
        "id": 5,
        "result": {"outcome": {"outcome": "selected", "optionId": "allow"}},
    }
    assert emitter.answer(v1_answer).approved


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("content", [text_content("Allow editing config.toml?")]),
        ("content", [text_content("  The agent wants to change a setting. ")]),
    ],
)
def test_prompt_text_put_in_the_calls_content_is_refused(field: str, value: Any) -> None:
    emitter = ToolCallEmitter(SID)
    emitter.start("c1", title="Edit config.toml")
    with pytest.raises(SenderError, match="title/description") as raised:
        emitter.request_permission(
            "c1",
            request_id=1,
            title="Allow editing config.toml?",
            description="The agent wants to change a setting.",
            **{field: value},
        )
    assert raised.value.path == "subject.toolCall.content[0]"
    assert emitter.update("c1", content=None) == []  # the refused content was not recorded


def test_the_standalone_builder_checks_the_same_rules() -> None:
    call = v2.ToolCallUpdate(tool_call_id="c1", title="Run setup.sh?")
    subject = v2.ToolCallPermissionSubject(tool_call=call)
    with pytest.raises(SenderError) as raised:
        permission_request(SID, title="Run setup.sh?", subject=subject)
    assert raised.value.path == "subject.toolCall.title"
    with pytest.raises(SenderError, match="custom"):
        permission_request(SID, title="ok?", subject=v2.UnknownPermissionSubject({"type": "plan"}))
    bad_cwd = v2.CommandPermissionSubject(command="make", cwd="build")
    with pytest.raises(SenderError, match="absolute"):
        permission_request(SID, title="ok?", subject=bad_cwd)
    request = permission_request(
        SID,
        title="Run setup.sh?",
        subject=v2.ToolCallPermissionSubject(
            tool_call=v2.ToolCallUpdate(tool_call_id="c1", title="Execute setup script")
        ),
    )
    message = v2.PermissionRequestMessage(id=1, params=request)
    assert json.loads(encode(message))["params"]["options"][0]["kind"] == "allow_once"


@pytest.mark.parametrize("version", [2, 1])
def test_the_agent_guide_example_runs_and_is_valid(
    version: int, caplog: pytest.LogCaptureFixture
) -> None:
    guide = (Path(__file__).parents[2] / "docs" / "agent-guide.md").read_text()
    block = re.findall(r"```python\n(.*?)```", guide, re.S)[0]
    scope: dict[str, Any] = {}
    assert "version=2)" in block  # the guide's one version choice, varied here
    exec(block.replace("version=2)", f"version={version})"), scope)
    lines = scope["wire"].splitlines()
    for line in lines:
        assert validate_message(json.loads(line), cast(VersionName, f"v{version}")) == []
    assert scope["answer"].approved
    assert "still open" not in caplog.text  # the example finishes what it starts


# --------------------------------------------------------------------------------------------
# A refused call moves nothing (found by tests/fuzz/test_fuzz_emit.py): values JSON cannot
# carry are refused before any state changes, and so are unknown background ids.

LONE = "a\udc80b"  # a lone surrogate: no UTF-8 encoding, so no JSON one


def test_a_title_json_cannot_carry_is_refused_and_the_id_stays_free() -> None:
    emitter = ToolCallEmitter(SID)
    with pytest.raises(SenderError) as raised:
        emitter.start("c1", title=LONE)
    assert raised.value.path == "title"
    assert emitter.open_calls() == []
    assert updates(emitter.start("c1", title="ok"))[0]["toolCallId"] == "c1"


@pytest.mark.parametrize(
    ("kwargs", "path"),
    [
        ({"content": [text_content("ok"), text_content(LONE)]}, "content[1]"),
        ({"meta": {"k": float("nan")}}, "_meta.k"),
        ({"name": LONE}, "name"),
    ],
)
def test_an_update_json_cannot_carry_keeps_the_pending_text(
    kwargs: dict[str, Any], path: str
) -> None:
    emitter = ToolCallEmitter(SID, throttle=TextThrottle(min_interval=10.0))
    emitter.start("c1", title="t")
    emitter.grow_text("c1", "out: ", now=0.0)
    emitter.grow_text("c1", "42", now=0.1)  # pending: the client shows "out: "
    with pytest.raises(SenderError) as raised:
        emitter.update("c1", title="new", **kwargs)
    assert raised.value.path == path
    [update] = updates(emitter.flush())  # nothing leaked, the text still pending
    assert update["content"][0]["content"]["text"] == "out: 42"
    assert "title" not in update
    assert updates(emitter.update("c1", title="new")) == [
        {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": "new"}
    ]


def test_a_growing_text_piece_json_cannot_carry_is_refused_without_poisoning_the_call() -> None:
    emitter = ToolCallEmitter(SID)
    sent = emitter.start("c1", title="t")
    with pytest.raises(SenderError, match="delta"):
        emitter.grow_text("c1", LONE, now=0.0)  # would have opened the text item
    sent += emitter.grow_text("c1", "ok", now=0.0)
    with pytest.raises(SenderError, match="delta"):
        emitter.grow_text("c1", LONE, now=0.1)  # would have made every later send fail
    store = store_of(sent, emitter.finish("c1"))
    assert store.view(SID, "c1").status == "completed"
    assert store.snapshot(SID, "c1").content == [text_content("ok")]


def test_end_turn_with_an_unknown_background_id_sends_and_finishes_nothing() -> None:
    emitter = ToolCallEmitter(SID)
    emitter.start("a", title="a")
    with pytest.raises(ToolCallNotOpen):
        emitter.end_turn(background=["never-started"])
    assert emitter.open_calls() == ["a"]
    sent = updates(emitter.end_turn())
    assert [u.get("status") for u in sent] == ["failed", None]  # no message from before


def test_finish_open_refuses_a_status_that_is_not_final_before_logging_or_sending(
    caplog: pytest.LogCaptureFixture,
) -> None:
    emitter = ToolCallEmitter(SID)
    emitter.start("a", title="a")
    with (
        caplog.at_level(logging.WARNING, logger="acp_toolcalls.emit"),
        pytest.raises(SenderError, match="not final"),
    ):
        emitter.finish_open("running", bug=True)
    assert "still open" not in caplog.text
    assert emitter.open_calls() == ["a"]


@pytest.mark.parametrize(
    ("kwargs", "path"),
    [
        ({"size": v2.TerminalSize(cols=0, rows=24)}, "size.cols"),
        ({"size": v2.TerminalSize(cols=80, rows=70_000)}, "size.rows"),
        ({"meta": {"n": float("nan")}}, "_meta"),
        ({"meta": {1: "x"}}, "_meta"),
        ({"command": LONE}, "command"),
    ],
)
def test_a_terminal_the_schema_or_json_cannot_carry_is_refused(
    kwargs: dict[str, Any], path: str
) -> None:
    emitter = ToolCallEmitter(SID)
    with pytest.raises(SenderError) as raised:
        emitter.start_terminal("t1", **kwargs)
    assert raised.value.path == path
    [update] = updates(emitter.start_terminal("t1", size=v2.TerminalSize(cols=80, rows=24)))
    assert update["terminalId"] == "t1"  # the id was not taken


@pytest.mark.parametrize(
    ("kwargs", "path"),
    [
        ({"exit_code": 2**63}, "exitStatus.exitCode"),
        ({"exit_code": True}, "exitStatus.exitCode"),
        ({"signal": LONE}, "exitStatus.signal"),
    ],
)
def test_an_exit_the_schema_or_json_cannot_carry_is_refused(
    kwargs: dict[str, Any], path: str
) -> None:
    emitter = ToolCallEmitter(SID)
    emitter.start_terminal("t1")
    with pytest.raises(SenderError) as raised:
        emitter.exit_terminal("t1", **kwargs)
    assert raised.value.path == path
    [update] = updates(emitter.exit_terminal("t1", exit_code=-1))  # still open for its exit
    assert update["exitStatus"] == {"exitCode": -1}


def test_permission_requests_json_cannot_carry_are_refused_before_anything_moves() -> None:
    with pytest.raises(SenderError) as raised:
        permission_request(SID, title=LONE)
    assert raised.value.path == "title"
    with pytest.raises(SenderError) as raised:
        permission_request(SID, title="ok?", options=[("allow", LONE, "allow_once")])
    assert raised.value.path == "options[0]"
    with pytest.raises(SenderError) as raised:
        command_subject("ls", "/home/u", meta={"n": float("nan")})
    assert raised.value.path == "subject"
    emitter = ToolCallEmitter(SID, throttle=TextThrottle(min_interval=10.0))
    emitter.start("c1", title="t")
    emitter.grow_text("c1", "a", now=0.0)
    emitter.grow_text("c1", "b", now=0.1)
    kwargs: dict[str, Any]
    for kwargs in ({"title": LONE}, {"subject_meta": {"n": float("nan")}}):
        with pytest.raises(SenderError):
            emitter.request_permission("c1", request_id=1, **{"title": "Go on?"} | kwargs)
    ask = emitter.request_permission("c1", request_id=1, title="Go on?")  # id 1 is still free
    first, request = wire(list(ask.messages))
    assert first["params"]["update"]["content"][0]["content"]["text"] == "ab"
    assert request["method"] == "session/request_permission"


def test_version_by_number_or_name() -> None:
    # Issue 18: one word for versions (issue 30: the old `protocol_version=` is gone).
    made = [
        wire(ToolCallEmitter(SID, **kwargs).start("c", title="Read"))
        for kwargs in ({"version": 1}, {"version": "v1"})
    ]
    assert made[0] == made[1]
    assert made[0][0]["params"]["update"]["sessionUpdate"] == "tool_call"
    assert ToolCallEmitter(SID, version="v2").version == ToolCallEmitter(SID).version == 2
    with pytest.raises(ValueError):
        ToolCallEmitter(SID, version="v3")  # type: ignore[arg-type]  # deliberately wrong
    with pytest.raises(TypeError):
        ToolCallEmitter(SID, protocol_version=1)  # type: ignore[call-arg]  # removed
