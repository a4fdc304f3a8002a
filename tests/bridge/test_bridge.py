"""The stateful bridges (D46 (terminal conversion to v1 to v2 bridge)): V2ToV1Bridge and
V1ToV2Bridge."""

from __future__ import annotations

import json
from base64 import b64encode
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_toolcalls import encode
from acp_toolcalls.bridge import V1ToV2Bridge, V2ToV1Bridge
from acp_toolcalls.check import ToolCallLinter
from acp_toolcalls.codec import decode_message
from acp_toolcalls.convert import Converted
from acp_toolcalls.models import Batch
from acp_toolcalls.store import Limits, ToolCallStore

SID = "sess_1"


def note(update: dict[str, Any], session_id: str = SID) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": session_id, "update": update},
        }
    ).encode()


def tcu(tool_call_id: str = "a", **fields: Any) -> bytes:
    return note({"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id, **fields})


def chunk(item: dict[str, Any], tool_call_id: str = "a") -> bytes:
    return note(
        {"sessionUpdate": "tool_call_content_chunk", "toolCallId": tool_call_id, "content": item}
    )


def text(value: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": value}}


def plain(converted: Converted) -> list[Any]:
    """The converted messages as JSON values (encoding them runs the conftest schema check)."""
    out: list[Any] = []
    for message in converted.messages:
        value = json.loads(encode(message))
        out.extend(value if isinstance(message, Batch) else [value])
    return out


def updates(converted: Converted) -> list[dict[str, Any]]:
    return [m["params"]["update"] for m in plain(converted) if m.get("method") == "session/update"]


def permission(subject: dict[str, Any] | None, request_id: int = 9, **params: Any) -> bytes:
    body: dict[str, Any] = {
        "sessionId": SID,
        "title": "Allow the edit?",
        "options": [
            {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
            {"optionId": "no", "name": "Reject", "kind": "reject_once"},
        ],
        **params,
    }
    if subject is not None:
        body["subject"] = subject
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": "session/request_permission", "params": body}
    ).encode()


# --------------------------------------------------------------------------------------------
# V2ToV1Bridge: first sight, titles, later updates


def test_first_sight_is_a_v1_tool_call_with_a_title_then_updates() -> None:
    bridge = V2ToV1Bridge()
    (first,) = updates(bridge.convert(tcu(title="Read a.py", kind="read", status="pending")))
    assert first == {
        "sessionUpdate": "tool_call",
        "toolCallId": "a",
        "title": "Read a.py",
        "kind": "read",
        "status": "pending",
    } or first == {
        "sessionUpdate": "tool_call",
        "toolCallId": "a",
        "title": "Read a.py",
        "kind": "read",
    }
    (second,) = updates(bridge.convert(tcu(status="in_progress")))
    assert second == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "a",
        "status": "in_progress",
    }


class _CountingBridge(V2ToV1Bridge):
    """A bridge of one's own: compiled and interpreted builds both allow it (issue 19)."""

    def convert(self, message: Any) -> Converted:
        self.converted = getattr(self, "converted", 0) + 1
        return super().convert(message)


def test_the_bridge_may_be_subclassed() -> None:
    bridge = _CountingBridge()
    (first,) = updates(bridge.convert(tcu(title="Read a.py", kind="read")))
    assert first["sessionUpdate"] == "tool_call" and bridge.converted == 1


@pytest.mark.parametrize(
    ("fields", "title"),
    [({"name": "read_file"}, "read_file"), ({"kind": "execute"}, "Execute"), ({}, "Tool call")],
)
def test_untitled_first_sight_gets_a_synthesised_title(fields: dict[str, Any], title: str) -> None:
    (first,) = updates(V2ToV1Bridge().convert(tcu(**fields)))
    assert first["sessionUpdate"] == "tool_call"
    assert first["title"] == title


def test_chunk_first_sight_is_a_tool_call_carrying_the_content() -> None:
    (first,) = updates(V2ToV1Bridge().convert(chunk(text("hi"))))
    assert first["sessionUpdate"] == "tool_call"
    assert first["content"] == [text("hi")]


def test_v2_only_values_are_mapped_and_reported() -> None:
    bridge = V2ToV1Bridge()
    bridge.convert(tcu(title="T"))
    converted = bridge.convert(tcu(status="cancelled", kind="_custom", title=None))
    (update,) = updates(converted)
    assert update["status"] == "failed"
    assert update["kind"] == "other"
    assert "title" not in update  # a v1 client keeps its title: the clear is lost
    assert converted.losses


def test_chunks_go_out_as_replacement_arrays_without_coalescing() -> None:
    bridge = V2ToV1Bridge()
    bridge.convert(tcu(title="T", content=[text("0")]))
    for i in (1, 2):
        (update,) = updates(bridge.convert(chunk(text(str(i)))))
        assert update["content"] == [text(str(n)) for n in range(i + 1)]
    (update,) = updates(bridge.convert(tcu(content=[])))
    assert update["content"] == []  # a collection clear is `[]` in v1


# --------------------------------------------------------------------------------------------
# Coalescing


def test_coalescing_sends_a_first_sight_at_once_and_holds_later_changes() -> None:
    bridge = V2ToV1Bridge(coalesce=True)
    (create,) = updates(bridge.convert(tcu(title="T", status="in_progress")))
    assert create["sessionUpdate"] == "tool_call"  # at once, so first-seen order is kept
    assert create["status"] == "in_progress"
    for i in range(5):
        assert updates(bridge.convert(chunk(text(str(i))))) == []
    (update,) = updates(bridge.flush())
    assert update["sessionUpdate"] == "tool_call_update"
    assert len(update["content"]) == 5
    assert updates(bridge.flush()) == []


def test_switching_calls_is_no_flush_point_and_each_call_keeps_its_order() -> None:
    """Issue 15: chunks alternating between two calls used to flush on every switch, each
    flush resending a whole content array (900x the input toward v1)."""
    bridge = V2ToV1Bridge(coalesce=True)
    bridge.convert(tcu("a", title="A"))
    bridge.convert(tcu("b", title="B"))
    for i in range(50):
        assert updates(bridge.convert(chunk(text(f"a{i}"), "a"))) == []
        assert updates(bridge.convert(chunk(text(f"b{i}"), "b"))) == []
    out = updates(bridge.flush())
    assert [(u["toolCallId"], u["sessionUpdate"]) for u in out] == [
        ("a", "tool_call_update"),
        ("b", "tool_call_update"),
    ]
    assert out[0]["content"] == [text(f"a{i}") for i in range(50)]
    assert out[1]["content"] == [text(f"b{i}") for i in range(50)]


def test_message_chunks_are_no_flush_point_and_a_plan_is() -> None:
    bridge = V2ToV1Bridge(coalesce=True)
    bridge.convert(tcu("a", title="A"))
    bridge.convert(chunk(text("x"), "a"))
    said = {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "m",
        "content": {"type": "text", "text": "hi"},
    }
    assert [u["sessionUpdate"] for u in updates(bridge.convert(note(said)))] == [
        "agent_message_chunk"
    ]
    plan = {"sessionUpdate": "plan_update", "planId": "p", "entries": []}
    flushed = updates(bridge.convert(note(plan)))
    assert flushed[0]["sessionUpdate"] == "tool_call_update"  # the held-back chunk first


def test_a_final_status_flushes_at_once() -> None:
    bridge = V2ToV1Bridge(coalesce=True)
    bridge.convert(tcu(title="T"))
    bridge.convert(chunk(text("x")))
    (create,) = updates(bridge.convert(tcu(status="completed")))
    assert create["status"] == "completed"
    assert create["content"] == [text("x")]


def test_state_update_flushes_and_is_not_forwarded() -> None:
    bridge = V2ToV1Bridge(coalesce=True)
    bridge.convert(tcu(title="T"))
    bridge.convert(chunk(text("x")))
    converted = bridge.convert(note({"sessionUpdate": "state_update", "state": "idle"}))
    assert [u["sessionUpdate"] for u in updates(converted)] == ["tool_call_update"]
    assert converted.losses


def test_coalesced_chunks_are_a_tiny_fraction_and_replay_the_same() -> None:
    lines = [tcu(title="Stream", kind="execute", status="in_progress")]
    lines += [chunk(text(f"line {i}")) for i in range(400)]  # 10,000: benchmarks/bench_bridge.py
    lines.append(tcu(status="completed"))

    def run(coalesce: bool) -> tuple[int, ToolCallStore]:
        bridge = V2ToV1Bridge(coalesce=coalesce)
        replay = ToolCallStore(version="v1")
        size = 0
        for line in lines:
            for message in bridge.convert(line).messages:
                data = encode(message)
                size += len(data)
                replay.apply(data)
        return size, replay

    coalesced, coalesced_state = run(True)
    plain_size, plain_state = run(False)
    assert coalesced <= plain_size / 100
    assert coalesced_state.document() == plain_state.document()


# --------------------------------------------------------------------------------------------
# Terminals


def b64(data: bytes) -> str:
    return b64encode(data).decode()


def test_terminal_output_re_renders_the_calls_that_show_it() -> None:
    bridge = V2ToV1Bridge()
    bridge.convert(tcu(title="Run", content=[{"type": "terminal", "terminalId": "t"}]))
    bridge.convert(note({"sessionUpdate": "terminal_update", "terminalId": "t", "command": "ls"}))
    out = updates(
        bridge.convert(
            note(
                {
                    "sessionUpdate": "terminal_output_chunk",
                    "terminalId": "t",
                    "data": b64(b"\x1b[32ma.py\x1b[0m\r\n"),
                }
            )
        )
    )
    (update,) = out
    (item,) = update["content"]
    assert item["content"]["text"] == "```\n$ ls\na.py\n```"
    (update,) = updates(
        bridge.convert(
            note(
                {
                    "sessionUpdate": "terminal_update",
                    "terminalId": "t",
                    "exitStatus": {"exitCode": 2},
                }
            )
        )
    )
    assert update["content"][0]["content"]["text"].endswith("[exit code 2]\n```")


def test_terminal_bytes_wait_for_a_reference() -> None:
    bridge = V2ToV1Bridge()
    chunk_line = note(
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": b64(b"early\n")}
    )
    assert bridge.convert(chunk_line).messages == ()
    (create,) = updates(
        bridge.convert(tcu(title="Run", content=[{"type": "terminal", "terminalId": "t"}]))
    )
    assert "early" in create["content"][0]["content"]["text"]


@pytest.mark.parametrize("profile", ["meta", "meta_delta"])
def test_meta_profiles_stream_a_live_terminal_through_the_extension(profile: Any) -> None:
    """D38 as amended 2026-12-06: a v1 client that offers the `_meta` terminal extension gets
    a live terminal: the `terminal` item, `terminal_info` once, each output appended once
    (UTF-8 split across chunks decoded whole), `terminal_exit` once."""
    key = "terminal_output_delta" if profile == "meta_delta" else "terminal_output"
    bridge = V2ToV1Bridge(terminal_profile=profile)
    bridge.convert(
        note({"sessionUpdate": "terminal_update", "terminalId": "t", "command": "ls", "cwd": "/w"})
    )
    (create,) = updates(
        bridge.convert(tcu(title="Run", content=[{"type": "terminal", "terminalId": "t"}]))
    )
    assert create["content"] == [{"type": "terminal", "terminalId": "t"}]
    assert create["_meta"] == {"terminal_info": {"terminal_id": "t", "cwd": "/w"}}
    chunk = {"sessionUpdate": "terminal_output_chunk", "terminalId": "t"}
    (first,) = updates(bridge.convert(note({**chunk, "data": b64(b"a\xe2")})))
    (second,) = updates(bridge.convert(note({**chunk, "data": b64(b"\x82\xacb\n")})))
    assert first["_meta"] == {key: {"terminal_id": "t", "data": "a"}}
    assert second["_meta"] == {key: {"terminal_id": "t", "data": "\u20acb\n"}}
    exited = {"sessionUpdate": "terminal_update", "terminalId": "t", "exitStatus": {"exitCode": 2}}
    (end,) = updates(bridge.convert(note(exited)))
    assert end["_meta"] == {"terminal_exit": {"terminal_id": "t", "exit_code": 2, "signal": None}}
    (done,) = updates(bridge.convert(tcu(status="completed")))
    assert "_meta" not in done  # nothing is sent twice


def test_meta_profile_output_replaced_by_a_continuation_sends_what_was_added() -> None:
    bridge = V2ToV1Bridge(terminal_profile="meta")
    bridge.convert(tcu(title="Run", content=[{"type": "terminal", "terminalId": "t"}]))
    chunk = {"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": b64(b"one\n")}
    updates(bridge.convert(note(chunk)))
    snapshot = {"sessionUpdate": "terminal_update", "terminalId": "t"}
    (more,) = updates(bridge.convert(note({**snapshot, "output": {"data": b64(b"one\ntwo\n")}})))
    assert more["_meta"] == {"terminal_output": {"terminal_id": "t", "data": "two\n"}}
    converted = bridge.convert(note({**snapshot, "output": {"data": b64(b"other\n")}}))
    (other,) = updates(converted)
    assert other["_meta"]["terminal_output"]["data"] == "\r\n[output replaced]\r\nother\n"
    assert any("replaced" in loss.reason for loss in converted.losses)


# --------------------------------------------------------------------------------------------
# Permissions


def test_permission_for_an_unseen_call_sends_the_tool_call_first() -> None:
    bridge = V2ToV1Bridge()
    converted = bridge.convert(
        permission(
            {"type": "tool_call", "toolCall": {"toolCallId": "p", "kind": "edit"}},
            description="This edits a.py",
        )
    )
    first, request = plain(converted)
    assert first["params"]["update"]["sessionUpdate"] == "tool_call"
    assert first["params"]["update"]["title"] == "Allow the edit?"  # D10: prompt title first
    assert "content" not in first["params"]["update"]  # the prompt never enters the call
    assert request["method"] == "session/request_permission"
    assert request["params"]["toolCall"] == {
        "toolCallId": "p",
        "title": "Allow the edit?",
        "kind": "edit",
        "content": [text("This edits a.py")],
    }
    call = bridge.store.tool_call(SID, "p")
    assert call is not None
    assert call.content == []  # nor the store


@pytest.mark.parametrize("title", ["Allow the edit?", "Edit a.py"])
def test_an_unknown_key_of_an_unseen_subject_is_reported_once_where_it_is(title: str) -> None:
    """The subject's unknown key is reported at its path in the request, once: not at
    ``$.params.update`` (a permission request has none), even when the call is first shown
    by the request (found by the bridges' fuzz test: with the prompt's own title the key was
    lost, reported only at a path the message does not have)."""
    subject = {"toolCallId": "p", "title": title, "kind": "edit", "operation": "_x"}
    converted = V2ToV1Bridge().convert(
        permission({"type": "tool_call", "toolCall": subject}, description="This edits a.py")
    )
    paths = [loss.path for loss in converted.losses]
    assert paths.count("$.params.subject.toolCall.operation") == 1, paths
    assert not [path for path in paths if path.startswith("$.params.update")], paths


@pytest.mark.parametrize(
    ("options", "limits"),
    [([], None), ([{"optionId": "yes", "name": "Allow", "kind": "allow_once"}] * 3, 2)],
)
def test_a_request_not_sent_still_shows_what_its_subject_changed(
    options: list[Any], limits: int | None
) -> None:
    """A request the v1 client is not asked (no option it can show, D29; over the options cap):
    the changes its subject made to a call the client shows reach the client as an update
    (the fuzz comparison with a fresh bridge found them lost)."""
    caps = Limits(max_permission_options=limits) if limits is not None else None
    bridge = V2ToV1Bridge(limits=caps)
    bridge.convert(tcu("a", title="Read", kind="read", status="pending"))
    subject = {"type": "tool_call", "toolCall": {"toolCallId": "a", "kind": "fetch"}}
    converted = bridge.convert(permission(subject, options=options))
    assert [json.loads(encode(r))["result"] for r in converted.replies] == [
        {"outcome": {"outcome": "cancelled"}}
    ]
    assert updates(converted) == [
        {"sessionUpdate": "tool_call_update", "toolCallId": "a", "kind": "fetch"}
    ]


def test_the_prompt_is_shown_in_the_known_call_and_the_answer_restores_the_call() -> None:
    """D28 amended: the v1 user sees the prompt (title, description) where v1 renders it, the
    call's diff stays visible below it, and the call gets its own state back after."""
    bridge = V2ToV1Bridge()
    bridge.convert(tcu("a", title="Edit a.py", kind="edit", content=[text("the diff")]))
    (request,) = plain(
        bridge.convert(
            permission(
                {"type": "tool_call", "toolCall": {"toolCallId": "a"}}, description="It edits"
            )
        )
    )
    assert request["params"]["toolCall"] == {
        "toolCallId": "a",
        "title": "Allow the edit?",
        "content": [text("It edits"), text("the diff")],
    }
    # While the prompt is open, the call's updates keep it on top.
    (during,) = updates(bridge.convert(tcu("a", content=[text("diff v2")])))
    assert during["content"] == [text("It edits"), text("diff v2")]
    assert "title" not in during
    (retitled,) = updates(bridge.convert(tcu("a", title="Edit a.py (2)")))
    assert retitled["title"] == "Allow the edit?"
    answer = bridge.convert(
        b'{"jsonrpc":"2.0","id":9,"result":{"outcome":{"outcome":"selected","optionId":"yes"}}}'
    )
    (to_agent,) = plain(answer)
    assert to_agent["result"]["outcome"] == {"outcome": "selected", "optionId": "yes"}
    (restore,) = [json.loads(encode(m)) for m in answer.replies]
    assert restore["params"]["update"] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "a",
        "title": "Edit a.py (2)",
        "content": [text("diff v2")],
    }
    assert bridge.store.view(SID, "a").title == "Edit a.py (2)"


def test_the_answer_restores_content_a_replaced_prompt_showed() -> None:
    """Two prompts on one call, the newer without a description: the older one's description
    is still in the content the client shows, so the last answer restores the call's own
    content (the fuzz comparison with a fresh bridge found it left there)."""
    bridge = V2ToV1Bridge()
    bridge.convert(tcu("a", title="Fetch", kind="fetch", content=[text("page")]))
    subject = {"type": "tool_call", "toolCall": {"toolCallId": "a"}}
    bridge.convert(permission(subject, request_id=1, description="It fetches"))
    bridge.convert(permission(subject, request_id=2, title="Allow web_fetch?"))
    restores = [u for request in (1, 2) for u in updates(bridge.withdraw(request))]
    assert restores == [
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "a",
            "title": "Fetch",
            "content": [text("page")],
        }
    ]


def test_a_prompt_equal_to_what_the_call_shows_needs_no_restore() -> None:
    bridge = V2ToV1Bridge()
    bridge.convert(tcu("a", title="Allow the edit?", kind="edit"))
    (request,) = plain(
        bridge.convert(permission({"type": "tool_call", "toolCall": {"toolCallId": "a"}}))
    )
    assert request["params"]["toolCall"] == {"toolCallId": "a", "title": "Allow the edit?"}
    answer = bridge.convert(
        b'{"jsonrpc":"2.0","id":9,"result":{"outcome":{"outcome":"cancelled"}}}'
    )
    assert answer.replies == ()


def test_a_command_permission_gets_a_synthetic_call_first() -> None:
    bridge = V2ToV1Bridge()
    converted = bridge.convert(
        permission({"type": "command", "command": "rm -rf build", "cwd": "/r"}, title="Run rm?")
    )
    first, request = plain(converted)
    create = first["params"]["update"]
    assert create["sessionUpdate"] == "tool_call"
    assert create["title"] == "Run rm?"
    assert create["kind"] == "execute"
    assert create["rawInput"] == {"command": "rm -rf build", "cwd": "/r"}
    assert request["params"]["toolCall"]["toolCallId"] == create["toolCallId"]
    again = V2ToV1Bridge().convert(
        permission({"type": "command", "command": "rm -rf build", "cwd": "/r"}, title="Run rm?")
    )
    assert plain(again)[0]["params"]["update"]["toolCallId"] == create["toolCallId"]


def test_the_clients_answer_is_mapped_back_and_unknown_is_never_approval() -> None:
    bridge = V2ToV1Bridge()
    bridge.convert(permission({"type": "tool_call", "toolCall": {"toolCallId": "a"}}, 5))
    bridge.convert(permission({"type": "tool_call", "toolCall": {"toolCallId": "b"}}, 6))
    answer = bridge.convert(
        b'{"jsonrpc":"2.0","id":5,"result":{"outcome":{"outcome":"selected","optionId":"yes"}}}'
    )
    (message,) = plain(answer)
    assert message["result"] == {"outcome": {"outcome": "selected", "optionId": "yes"}}
    cancelled = bridge.convert(
        b'{"jsonrpc":"2.0","id":6,"error":{"code":-32800,"message":"cancelled"}}'
    )
    assert plain(cancelled)[0]["result"] == {"outcome": {"outcome": "cancelled"}}


def answer_line(request_id: Any, option: str | None) -> bytes:
    outcome = {"outcome": "selected", "optionId": option} if option else {"outcome": "cancelled"}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": {"outcome": outcome}}).encode()


@pytest.mark.parametrize(
    ("option", "status"), [("yes", "completed"), ("no", "failed"), (None, "failed")]
)
def test_a_synthetic_permission_call_ends_with_the_outcome(option: str | None, status: str) -> None:
    """D28: the card the bridge made up for a command is not left `pending` forever."""
    bridge = V2ToV1Bridge()
    create, _request = plain(
        bridge.convert(permission({"type": "command", "command": "make", "cwd": "/r"}, 4))
    )
    call_id = create["params"]["update"]["toolCallId"]
    answer = bridge.convert(answer_line(4, option))
    (end,) = [json.loads(encode(m))["params"]["update"] for m in answer.replies]
    assert end == {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": status}


def test_a_command_naming_a_call_the_agent_later_reports_is_not_ended_by_the_bridge() -> None:
    bridge = V2ToV1Bridge()
    subject = {"type": "command", "command": "make", "cwd": "/r", "toolCallId": "m"}
    bridge.convert(permission(subject, 4))  # a synthetic card under the agent's id
    bridge.convert(tcu("m", status="in_progress"))  # the agent owns the call now
    assert bridge.convert(answer_line(4, "yes")).replies == ()


def test_the_agents_cancel_request_is_answered_withdrawn_and_the_late_answer_dropped() -> None:
    bridge = V2ToV1Bridge()
    bridge.convert(tcu("a", title="Edit a.py"))
    bridge.convert(permission({"type": "tool_call", "toolCall": {"toolCallId": "a"}}, 5))
    cancel = b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":5}}'
    converted = bridge.convert(cancel)
    (reply,) = [json.loads(encode(m)) for m in converted.replies]
    assert reply == {"jsonrpc": "2.0", "id": 5, "result": {"outcome": {"outcome": "cancelled"}}}
    withdrawn, restore = plain(converted)
    assert withdrawn == json.loads(cancel)
    assert restore["params"]["update"]["title"] == "Edit a.py"
    late = bridge.convert(answer_line(5, "yes"))
    assert late.messages == () and late.replies == ()  # never a second answer
    assert [loss.path for loss in late.losses] == ["$.id"]
    other = b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":77}}'
    assert plain(bridge.convert(other)) == [json.loads(other)]  # not ours: passed through


def test_the_agents_cancel_request_is_a_flush_point() -> None:
    """Issue 16 (D46 (v2 to v1 bridge), C9): content held back by coalescing went out after the
    agent's `$/cancel_request`, so the v1 client saw the cancel before the output it followed."""
    bridge = V2ToV1Bridge(coalesce=True)
    bridge.convert(tcu("a", title="Run tests", kind="execute"))
    assert plain(bridge.convert(chunk(text("A")))) == []  # held back
    other = b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":77}}'
    held, cancel = plain(bridge.convert(other))
    assert held["params"]["update"]["content"] == [text("A")]
    assert cancel == json.loads(other)


def compaction(**fields: Any) -> bytes:
    return note({"sessionUpdate": "compaction_update", "compactionId": "k1", **fields})


def test_compaction_updates_carry_the_whole_merged_meta() -> None:
    """Issue 16 (D39, D46 (session-update mapping)): a compaction's `_meta` patch (v2: by top-level
    key) reached the v1 client as the patch, which it reads as the whole value."""
    bridge = V2ToV1Bridge(compaction=True)
    sent = [
        updates(bridge.convert(compaction(status="in_progress", _meta={"a": 1})))[0],
        updates(bridge.convert(compaction(status="in_progress", _meta={"b": 2})))[0],
        updates(bridge.convert(compaction(status="in_progress", _meta={"a": None})))[0],
        updates(bridge.convert(compaction(status="completed")))[0],
        updates(bridge.convert(compaction(status="completed", _meta=None)))[0],
        updates(bridge.convert(compaction(status="completed", _meta={"c": 3})))[0],
    ]
    assert [update.get("_meta", "omitted") for update in sent] == [
        {"a": 1},
        {"a": 1, "b": 2},
        {"b": 2},
        "omitted",
        None,
        {"c": 3},
    ]


def test_past_the_pending_cap_the_oldest_is_withdrawn_and_its_late_answer_dropped() -> None:
    bridge = V2ToV1Bridge(limits=Limits(max_pending_permissions=2))
    for request_id, call in ((1, "a"), (2, "b")):
        bridge.convert(
            permission({"type": "tool_call", "toolCall": {"toolCallId": call}}, request_id)
        )
    converted = bridge.convert(
        permission({"type": "tool_call", "toolCall": {"toolCallId": "c"}}, 3)
    )
    (reply,) = [json.loads(encode(m)) for m in converted.replies]
    assert reply["id"] == 1 and reply["result"] == {"outcome": {"outcome": "cancelled"}}
    withdrawn = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 1}}
    sent = plain(converted)
    assert withdrawn in sent and sent[-1]["id"] == 3
    late = bridge.convert(answer_line(1, "yes"))
    assert late.messages == ()  # the agent had its answer: `cancelled`, never `selected` too


def test_a_request_reusing_a_pending_id_is_refused() -> None:
    bridge = V2ToV1Bridge()
    bridge.convert(permission({"type": "tool_call", "toolCall": {"toolCallId": "a"}}, 5))
    again = bridge.convert(permission({"type": "tool_call", "toolCall": {"toolCallId": "b"}}, 5))
    assert again.messages == ()
    (reply,) = [json.loads(encode(m)) for m in again.replies]
    assert reply["id"] == 5 and reply["error"]["code"] == -32600
    (answer,) = plain(bridge.convert(answer_line(5, "yes")))
    assert answer["result"]["outcome"]["optionId"] == "yes"  # the first request's answer


def test_withdraw_settles_a_pending_request_once() -> None:
    bridge = V2ToV1Bridge()
    bridge.convert(permission(None, 8))
    converted = bridge.withdraw(8)
    assert [json.loads(encode(m))["id"] for m in converted.replies] == [8]
    assert plain(converted)[0]["method"] == "$/cancel_request"
    assert bridge.withdraw(8) == Converted()


# --------------------------------------------------------------------------------------------
# Other updates and messages


def test_v2_only_updates_never_reach_v1_raw() -> None:
    bridge = V2ToV1Bridge()
    for update in (
        {"sessionUpdate": "_vendor_thing", "x": 1},
        {"sessionUpdate": "state_update", "state": "running"},
    ):
        converted = bridge.convert(note(update))
        assert updates(converted) == []
        assert converted.losses


def test_messages_that_are_not_tool_call_traffic_pass_through() -> None:
    line = b'{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s"}}'
    (message,) = V2ToV1Bridge().convert(line).messages
    assert json.loads(encode(message)) == json.loads(line)


def test_close_session_frees_the_state() -> None:
    bridge = V2ToV1Bridge(coalesce=True)
    bridge.convert(tcu(title="T"))
    bridge.convert(chunk(text("x")))
    assert updates(bridge.close_session(SID))  # flushed first
    assert SID not in bridge.store.sessions


# --------------------------------------------------------------------------------------------
# Property: replaying the v1 output with the v1 rules equals replaying the v2 input

ITEM = st.builds(text, st.text(alphabet="abc", max_size=3))
PATCH = st.fixed_dictionaries(
    {},
    optional={
        "title": st.text(alphabet="xyz", min_size=1, max_size=3),
        "kind": st.sampled_from(["read", "edit", "execute", "other"]),
        "status": st.sampled_from(["pending", "in_progress", "completed", "failed"]),
        "content": st.lists(ITEM, max_size=2),
        "rawInput": st.dictionaries(st.sampled_from("pq"), st.integers(), max_size=1),
    },
)
STREAM = st.lists(
    st.tuples(
        st.sampled_from(["a", "b"]),
        st.one_of(PATCH.map(lambda p: ("update", p)), ITEM.map(lambda i: ("chunk", i))),
    ),
    max_size=15,
)

_V1_DEFAULTS = {"kind": "other", "status": "pending"}


def _effective(call: dict[str, Any]) -> dict[str, Any]:
    """A call's state as a v1 client reads it: defaults resolved, empty collections absent."""
    out = {k: v for k, v in call.items() if k != "title"}
    for key, default in _V1_DEFAULTS.items():
        if out.get(key) in (None, default):
            out.pop(key, None)
    for key in ("content", "locations"):
        if not out.get(key):
            out.pop(key, None)
    return out


@settings(max_examples=100)
@given(stream=STREAM, coalesce=st.booleans())
def test_v1_replay_of_the_bridge_output_equals_v2_replay(stream: Any, coalesce: bool) -> None:
    v2_store = ToolCallStore()
    v1_store = ToolCallStore(version="v1")
    bridge = V2ToV1Bridge(coalesce=coalesce)
    for tool_call_id, (kind, payload) in stream:
        line = tcu(tool_call_id, **payload) if kind == "update" else chunk(payload, tool_call_id)
        v2_store.apply(line)
        for message in bridge.convert(line).messages:
            v1_store.apply(encode(message))
    for message in bridge.flush().messages:
        v1_store.apply(encode(message))
    want = v2_store.document()["sessions"].get(SID, {"toolCalls": []})["toolCalls"]
    got = v1_store.document()["sessions"].get(SID, {"toolCalls": []})["toolCalls"]
    assert [_effective(c) for c in got] == [_effective(c) for c in want]
    for v2_call, v1_call in zip(want, got, strict=True):
        if v2_call.get("title"):
            assert v1_call["title"] == v2_call["title"]


# --------------------------------------------------------------------------------------------
# V1ToV2Bridge


def v1_call(**fields: Any) -> bytes:
    return note({"sessionUpdate": "tool_call", "toolCallId": "a", **fields})


def test_v1_tool_call_becomes_an_upsert_and_a_repeat_merges() -> None:
    bridge = V1ToV2Bridge()
    (first,) = updates(bridge.convert(v1_call(title="Edit", kind="edit", status="in_progress")))
    assert first == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "a",
        "title": "Edit",
        "kind": "edit",
        "status": "in_progress",
    }
    (repeat,) = updates(bridge.convert(v1_call(title="Edit 2", kind="other", status="pending")))
    assert repeat == {"sessionUpdate": "tool_call_update", "toolCallId": "a", "title": "Edit 2"}


def test_v1_nulls_never_become_v2_clears() -> None:
    line = note(
        {"sessionUpdate": "tool_call_update", "toolCallId": "a", "title": None, "content": None}
    )
    (update,) = updates(V1ToV2Bridge().convert(line))
    assert update == {"sessionUpdate": "tool_call_update", "toolCallId": "a"}


def test_v1_re_create_of_a_final_call_is_reported() -> None:
    bridge = V1ToV2Bridge()
    bridge.convert(v1_call(title="ls", status="completed"))
    converted = bridge.convert(v1_call(title="ls"))
    assert converted.losses
    assert updates(converted)[0]["title"] == "ls"


def decoded(message: dict[str, Any]) -> Any:
    return decode_message(json.dumps(message).encode()).value


def v1_permission(
    tool_call: dict[str, Any], options: list[Any] | None = None, request_id: int = 3
) -> bytes:
    if options is None:
        options = [{"optionId": "y", "name": "Yes", "kind": "allow_once"}]
    params = {"sessionId": SID, "toolCall": tool_call, "options": options}
    method = "session/request_permission"
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    ).encode()


def test_v1_permission_title_comes_from_the_stored_call() -> None:
    bridge = V1ToV2Bridge()
    bridge.convert(v1_call(title="Edit a.py"))
    (request,) = plain(bridge.convert(v1_permission({"toolCallId": "a"})))
    assert request["params"]["title"] == "Edit a.py"
    assert request["params"]["subject"]["toolCall"]["toolCallId"] == "a"
    answer = bridge.convert(b'{"jsonrpc":"2.0","id":3,"result":{"outcome":{"outcome":"_maybe"}}}')
    assert plain(answer)[0]["result"] == {"outcome": {"outcome": "cancelled"}}


def test_a_v1_permission_subject_carries_only_what_the_client_does_not_hold() -> None:
    """Issue 16 (D37): every v1 permission request copied the call's title into both the
    prompt `title` and the subject's `toolCall`, which `validate` flags (prompt-in-tool-call);
    the subject is a patch of the displayed call against what the client holds."""
    bridge = V1ToV2Bridge()
    (created,) = plain(bridge.convert(v1_call(title="Run rm -rf build", kind="execute")))
    held = {"toolCallId": "a", "title": "Run rm -rf build", "kind": "execute"}
    (request,) = plain(bridge.convert(v1_permission(held)))
    assert request["params"]["title"] == "Run rm -rf build"
    assert request["params"]["subject"]["toolCall"] == {"toolCallId": "a"}
    linter = ToolCallLinter()
    findings = [f for n, m in enumerate([created, request]) for f in linter.feed(decoded(m), n)]
    assert not findings
    changed = {**held, "status": "in_progress", "rawInput": {"cmd": "rm -rf build"}}
    (request,) = plain(bridge.convert(v1_permission(changed, request_id=4)))
    assert request["params"]["subject"]["toolCall"] == {
        "toolCallId": "a",
        "status": "in_progress",
        "rawInput": {"cmd": "rm -rf build"},
    }
    (request,) = plain(bridge.convert(v1_permission(changed, request_id=5)))  # no change since
    assert request["params"]["subject"]["toolCall"] == {"toolCallId": "a"}
    (request,) = plain(bridge.convert(v1_permission({"toolCallId": "new", "title": "F"}, None, 6)))
    assert request["params"]["subject"]["toolCall"] == {"toolCallId": "new", "title": "F"}


def test_a_v1_permission_request_with_a_null_id_is_refused() -> None:
    line = json.loads(v1_permission({"toolCallId": "a", "title": "x"}))
    line["id"] = None
    converted = V1ToV2Bridge().convert(json.dumps(line).encode())
    assert converted.messages == ()
    (reply,) = [json.loads(encode(m)) for m in converted.replies]
    assert reply["id"] is None and reply["error"]["code"] == -32600


def test_v1_permission_options_with_a_repeated_id_keep_the_first() -> None:
    options = [
        {"optionId": "a", "name": "Allow", "kind": "allow_once"},
        {"optionId": "a", "name": "Reject", "kind": "reject_once"},
    ]
    converted = V1ToV2Bridge().convert(v1_permission({"toolCallId": "c", "title": "x"}, options))
    (request,) = plain(converted)
    assert request["params"]["options"] == options[:1]
    assert [loss.path for loss in converted.losses] == ["$.params.options[1]"]


def test_v1_to_v2_past_the_pending_cap_the_oldest_is_withdrawn() -> None:
    bridge = V1ToV2Bridge(limits=Limits(max_pending_permissions=1))
    first = json.loads(v1_permission({"toolCallId": "a", "title": "x"}))
    bridge.convert(json.dumps(first).encode())
    converted = bridge.convert(json.dumps({**first, "id": 4}).encode())
    (reply,) = [json.loads(encode(m)) for m in converted.replies]
    assert reply == {"jsonrpc": "2.0", "id": 3, "result": {"outcome": {"outcome": "cancelled"}}}
    withdrawn, request = plain(converted)
    assert withdrawn["params"] == {"requestId": 3} and request["id"] == 4
    late = {
        "jsonrpc": "2.0",
        "id": 3,
        "result": {"outcome": {"outcome": "selected", "optionId": "y"}},
    }
    assert bridge.convert(json.dumps(late).encode()).messages == ()


def test_v1_permission_without_options_is_answered_cancelled() -> None:
    converted = V1ToV2Bridge().convert(v1_permission({"toolCallId": "a", "title": "x"}, []))
    assert converted.messages == ()
    (reply,) = converted.replies
    assert json.loads(encode(reply))["result"] == {"outcome": {"outcome": "cancelled"}}


@pytest.mark.encodes_invalid  # the input carries an unknown key on purpose
def test_envelope_metadata_and_unknown_keys_are_reported_not_dropped_silently() -> None:
    line = json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "x": 1,
            "params": {
                "sessionId": SID,
                "_meta": {"trace": "t"},
                "update": {"sessionUpdate": "tool_call_update", "toolCallId": "a", "title": "T"},
            },
        }
    ).encode()
    converted = V2ToV1Bridge().convert(line)
    assert {loss.path for loss in converted.losses} == {"$.params._meta", "$.x"}
    assert updates(converted)[0]["title"] == "T"


@pytest.mark.encodes_invalid  # the input carries unknown keys on purpose
def test_unknown_tool_call_keys_are_reported_never_lost() -> None:
    """Issue 16: the first sight copied the snapshot with msgspec.structs.replace, which drops
    the unknown keys kept beside the struct, so nothing said they were not carried (D19)."""
    bridge = V2ToV1Bridge()
    first = bridge.convert(tcu("a", title="T", zzVendor=1))
    assert [loss.path for loss in first.losses] == ["$.params.update.zzVendor"]
    later = bridge.convert(tcu("a", status="in_progress", zzOther=2))
    assert [loss.path for loss in later.losses] == ["$.params.update.zzOther"]


def test_unknown_keys_of_a_terminal_item_are_reported() -> None:
    # Found by tests/fuzz/test_fuzz_bridges.py: a terminal content item is shown to a v1 client
    # as its rendering, and the unknown keys it carried went without a report.
    line = (
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":'
        b'{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"Run","kind":"execute",'
        b'"content":[{"type":"terminal","terminalId":"t1","zzUnknown":null}]}}}'
    )
    bridge = V2ToV1Bridge()
    losses = [*bridge.convert(line).losses, *bridge.flush().losses]
    found = [loss for loss in losses if loss.path == "$.params.update.content[0].zzUnknown"]
    assert [loss.code for loss in found] == ["unknown-key"], losses
