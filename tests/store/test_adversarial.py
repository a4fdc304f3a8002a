"""Adversarial input at the library level (robustness issue, part 2): the codec, the client
store (``ToolCallStore``) and the bridges, each fed a valid message before and after the bad
one.

Every case asserts the diagnostic (JSON path and reason), that the valid messages around it
are applied, and that what is kept stays within the caps (``Limits``). The commands are
``test_cli_robustness.py``; the full-size figures (a million ids, a million chunks, 64 MiB and
endless lines, peak memory) are measured by ``benchmarks/adversarial.py`` (docs/robustness.md).
The million-element cases run here at a fifth of that size against caps scaled down by the
same ratio, to keep the suite fast; the code paths are the same.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import pytest

from acp_toolcalls import UNSET, DecodeError, Limits, ToolCallStore, decode_message, encode
from acp_toolcalls.bridge import V1ToV2Bridge, V2ToV1Bridge
from acp_toolcalls.codec import DEFAULT_MAX_BYTES, duplicate_keys
from acp_toolcalls.convert import Converted
from acp_toolcalls.events import (
    DiagnosticReported,
    Event,
    LimitReached,
    SessionEvicted,
    TerminalEvicted,
    ToolCallEvicted,
)
from acp_toolcalls.models import Batch
from tests.adversarial_cases import (
    AFTER,
    BASE64_LINES,
    BEFORE,
    DUPLICATE,
    ESCAPED_SURROGATE,
    INFINITY,
    INVALID_UTF8,
    NAN,
    RAW_SURROGATE,
    SID,
    MiB,
    chunks,
    deep,
    ids,
    location_line,
    long_line,
    output_chunk,
    permission,
    update,
)

# --------------------------------------------------------------------------------------------
# Helpers


def stored_ids(store: ToolCallStore, session_id: str = SID) -> list[str]:
    session = store.sessions.get(session_id)
    return list(session.tool_calls) if session is not None else []


def apply_all(store: ToolCallStore, lines: Iterable[bytes]) -> list[Event]:
    events: list[Event] = []
    for line in lines:
        events += store.apply(line)
    return events


def v1_messages(converted: Converted) -> list[dict[str, Any]]:
    """The bridge's output as JSON values (``encode`` checks each against the v1 schema)."""
    out: list[Any] = []
    for message in converted.messages:
        value = json.loads(encode(message))
        out.extend(value if isinstance(message, Batch) else [value])
    return out


def v1_ids(converted: Converted) -> list[str]:
    return [
        m["params"]["update"]["toolCallId"]
        for m in v1_messages(converted)
        if m.get("method") == "session/update"
    ]


def losses(converted: Converted) -> list[tuple[str, str]]:
    return [(loss.path, loss.reason) for loss in converted.losses]


# --------------------------------------------------------------------------------------------
# Input the codec cannot read: DecodeError naming the path; nothing applied; the stream goes on

UNREADABLE = [
    pytest.param(
        long_line(64 * MiB), f"exceeds the limit of {DEFAULT_MAX_BYTES} bytes", id="64-MiB-line"
    ),
    pytest.param(deep(100_000), "nesting is too deep", id="nesting-100000"),
    pytest.param(INVALID_UTF8, "Invalid UTF-8", id="invalid-utf8"),
    pytest.param(RAW_SURROGATE, "Invalid UTF-8", id="utf8-encoded-surrogate"),
    pytest.param(ESCAPED_SURROGATE, "unpaired UTF-16 surrogate escape", id="lone-surrogate"),
    pytest.param(NAN, "NaN is not a JSON number", id="NaN"),
    pytest.param(INFINITY, "-Infinity is not a JSON number", id="-Infinity"),
]


@pytest.mark.parametrize(("bad", "reason"), UNREADABLE)
def test_codec_refuses_with_a_decode_error_naming_the_path(bad: bytes, reason: str) -> None:
    for protocol in ("v2", "v1"):
        with pytest.raises(DecodeError) as raised:
            decode_message(bad, version=protocol)
        assert raised.value.path == "$"
        assert reason in raised.value.reason
    assert decode_message(AFTER).diagnostics == ()  # the decoder holds no state: next line reads


@pytest.mark.parametrize(("bad", "reason"), UNREADABLE)
def test_store_applies_the_lines_around_an_unreadable_one(bad: bytes, reason: str) -> None:
    store = ToolCallStore()
    store.apply(BEFORE)
    with pytest.raises(DecodeError) as raised:
        store.apply(bad)
    assert reason in raised.value.reason
    store.apply(AFTER)
    assert stored_ids(store) == ["before", "after"]  # nothing of the bad line was applied


@pytest.mark.parametrize(("bad", "reason"), UNREADABLE)
def test_bridge_converts_the_lines_around_an_unreadable_one(bad: bytes, reason: str) -> None:
    bridge = V2ToV1Bridge()
    assert v1_ids(bridge.convert(BEFORE)) == ["before"]
    with pytest.raises(DecodeError) as raised:
        bridge.convert(bad)
    assert reason in raised.value.reason
    after = bridge.convert(AFTER)
    assert v1_ids(after) == ["after"]
    assert v1_messages(after)[0]["params"]["update"]["sessionUpdate"] == "tool_call"


def test_nesting_under_the_recursion_limit_is_kept_and_written_back() -> None:
    line = deep(200)
    store = ToolCallStore(limits=Limits.unlimited())
    apply_all(store, [BEFORE, line, AFTER])
    assert stored_ids(store) == ["before", "deep", "after"]
    document = json.dumps(store.document())
    assert "[" * 200 in document and "[" * 201 not in document
    converted = V2ToV1Bridge().convert(line)
    assert (
        v1_messages(converted)[0]["params"]["update"]["rawInput"]
        == json.loads(line)["params"]["update"]["rawInput"]
    )


# --------------------------------------------------------------------------------------------
# Duplicate keys: the last value wins everywhere; duplicate_keys names each repeat


def test_duplicate_keys_take_the_last_value_and_are_reported_by_duplicate_keys() -> None:
    (found,) = duplicate_keys(DUPLICATE)
    assert found.path == "$.params.update.title"
    assert found.reason == "key 'title' occurs 2 times in one object; the last value is used"
    decoded = decode_message(DUPLICATE)
    assert decoded.value.params.update.title == "second"
    assert decoded.diagnostics == ()  # the decoder says nothing: the check is separate
    # The slow path (an unknown key sends the line there) agrees with the fast path.
    slow = DUPLICATE.replace(b'"status"', b'"_x":1,"status"')
    assert decode_message(slow).value.params.update.title == "second"
    assert decode_message(DUPLICATE.decode()).value.params.update.title == "second"

    store = ToolCallStore()
    apply_all(store, [BEFORE, DUPLICATE, AFTER])
    assert stored_ids(store) == ["before", "dup", "after"]
    assert store.view(SID, "dup").title == "second"

    bridge = V2ToV1Bridge()
    bridge.convert(BEFORE)
    (create,) = v1_messages(bridge.convert(DUPLICATE))
    assert create["params"]["update"]["title"] == "second"
    assert v1_ids(bridge.convert(AFTER)) == ["after"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(b'{"a":1,"b":"x:y"}', [], id="colon-in-a-string"),
        pytest.param(b'{"a":"\\u003a","b":1}', [], id="escaped-colon"),
        pytest.param(b'{"a":"\\u003a","a":1}', ["$.a"], id="escaped-colon-and-a-repeat"),
        pytest.param(b'[{"x":1},{"x":1,"x":2}]', ["$[1].x"], id="in-a-batch"),
        pytest.param(b'{"k y":1,"k y":2}', ['$["k y"]'], id="key-that-is-no-identifier"),
        pytest.param(b'{"o":{"a":1,"a":2,"a":3}}', ["$.o.a"], id="three-times"),
        pytest.param(b'{"a":[1,{"b":{"c":1,"c":1}}]}', ["$.a[1].b.c"], id="nested"),
        pytest.param(b"{not json", [], id="unreadable"),
        pytest.param(b"[" * 100_000 + b"]" * 100_000, [], id="too-deep-to-check"),
    ],
)
def test_duplicate_keys_paths(text: bytes, expected: list[str]) -> None:
    assert [d.path for d in duplicate_keys(text)] == expected


def test_duplicate_keys_counts_every_repeat() -> None:
    (found,) = duplicate_keys(b'{"o":{"a":1,"a":2,"a":3}}')
    assert "occurs 3 times" in found.reason


# --------------------------------------------------------------------------------------------
# Integers beyond 64 bits in `line`: the line reads as omitted, the location is kept


@pytest.mark.parametrize("number", [2**64, 2**64 + 1, -(2**64), 10**30], ids=str)
def test_line_beyond_64_bits_reads_as_omitted_and_the_location_is_kept(number: int) -> None:
    bad = location_line(number)
    decoded = decode_message(bad)
    (diagnostic,) = decoded.diagnostics
    assert diagnostic.path == "$.params.update.locations[0].line"
    assert str(number) in diagnostic.reason and "treated as omitted" in diagnostic.reason

    store = ToolCallStore()
    events = apply_all(store, [BEFORE, bad, AFTER])
    assert stored_ids(store) == ["before", "loc", "after"]
    reported = [e for e in events if isinstance(e, DiagnosticReported)]
    assert [(e.path, e.kind) for e in reported] == [
        ("$.params.update.locations[0].line", "invalid")
    ]
    locations = store.view(SID, "loc").locations
    assert [(loc.path, loc.line) for loc in locations] == [("/big", UNSET), ("/ok", 2)]

    bridge = V2ToV1Bridge()
    bridge.convert(BEFORE)
    converted = bridge.convert(bad)
    assert ("$.params.update.locations[0].line", f"input salvaged: {diagnostic.reason}") in losses(
        converted
    )
    (create,) = v1_messages(converted)
    assert create["params"]["update"]["locations"] == [{"path": "/big"}, {"path": "/ok", "line": 2}]
    assert v1_ids(bridge.convert(AFTER)) == ["after"]


# --------------------------------------------------------------------------------------------
# Base64 with bad padding in a terminal chunk: that chunk is dropped, the others append


def test_bad_base64_padding_drops_that_chunk_only() -> None:
    store = ToolCallStore()
    events = apply_all(store, [BEFORE, *BASE64_LINES, AFTER])
    assert stored_ids(store) == ["before", "run", "after"]
    assert store.sessions[SID].terminals["t"].output_bytes == b"abcdef"
    reported = [(e.path, e.reason) for e in events if isinstance(e, DiagnosticReported)]
    assert reported == [("$.params.update.data", "not valid base64: terminal output chunk dropped")]

    bridge = V2ToV1Bridge()
    out: list[Converted] = [bridge.convert(line) for line in [BEFORE, *BASE64_LINES, AFTER]]
    assert losses(out[3]) == [
        ("$.params.update.data", "not valid base64: terminal output chunk dropped")
    ]
    texts = [
        item["content"]["text"]
        for converted in out
        for m in v1_messages(converted)
        for item in m["params"]["update"].get("content", [])
    ]
    assert texts[-1] == "```\nabcdef\n```"  # the terminal shown without the bad chunk
    assert v1_ids(out[-1]) == ["after"]


def test_bad_base64_in_a_snapshot_leaves_the_output_unchanged() -> None:
    snapshot = update("x").replace(
        b'{"sessionUpdate":"tool_call_update","toolCallId":"x"}',
        b'{"sessionUpdate":"terminal_update","terminalId":"t","output":{"data":"YWJ"}}',
    )
    store = ToolCallStore()
    events = apply_all(store, [BEFORE, output_chunk("YWJj"), snapshot, AFTER])
    assert store.sessions[SID].terminals["t"].output_bytes == b"abc"
    # An invalid value at decode (D22): the output reads as omitted, with a diagnostic.
    assert [(e.path, e.reason) for e in events if isinstance(e, DiagnosticReported)] == [
        (
            "$.params.update.output.data",
            "not valid base64 (padded, no characters outside it); treated as omitted",
        )
    ]
    assert stored_ids(store) == ["before", "after"]


# --------------------------------------------------------------------------------------------
# A million distinct tool-call ids: the tool-call cap evicts (finished first) and says so

IDS = 200_000  # a fifth of a million, against a cap of a fifth of the default
IDS_LIMITS = Limits(max_tool_calls=(Limits().max_tool_calls or 0) // 5)


def test_store_keeps_at_most_max_tool_calls_of_a_flood_of_ids() -> None:
    cap = IDS_LIMITS.max_tool_calls
    assert cap == 10_000
    store = ToolCallStore(limits=IDS_LIMITS)
    events = apply_all(store, [BEFORE, *ids(IDS), AFTER])
    kept = stored_ids(store)
    assert len(kept) <= cap
    assert kept[-1] == "after"
    evicted = [e for e in events if isinstance(e, ToolCallEvicted)]
    assert evicted[0].tool_call_id == "before"  # applied, then evicted (finished, oldest)
    assert len(evicted) == IDS + 2 - len(kept)
    reached = [e for e in events if isinstance(e, LimitReached)]
    assert reached and {e.limit for e in reached} == {"max_tool_calls"}
    assert reached[0].detail.startswith(f"evicted {cap // 8} tool call(s) (cap {cap}")
    # Finished calls go first: the open ones (every tenth) are kept until they alone fill the
    # store, some eight times the cap into the flood.
    assert all(e.status == "completed" for e in evicted[: 7 * cap])
    assert evicted[-1].status == "in_progress"
    notes = [e for e in events if isinstance(e, DiagnosticReported)]
    assert len(notes) == len(reached) and all(n.kind == "limit" for n in notes)


def test_bridge_forgets_what_the_store_evicts() -> None:
    bridge = V2ToV1Bridge(limits=Limits(max_tool_calls=1_000))
    assert v1_ids(bridge.convert(BEFORE)) == ["before"]
    reported: list[tuple[str, str]] = []
    for line in ids(20_000):
        reported += losses(bridge.convert(line))
    assert v1_ids(bridge.convert(AFTER)) == ["after"]
    assert len(bridge.store.sessions[SID].tool_calls) <= 1_000
    # The bridge follows the store, keeping at most 10,000 calls it showed (ghosts).
    assert len(bridge._state.sessions[SID].calls) <= 11_000
    assert reported and all(path == "$.max_tool_calls" for path, _ in reported)
    assert reported[0][1].startswith(f"{SID}: evicted 125 tool call(s) (cap 1000")
    assert any("forgot" in reason for _, reason in reported)


def test_an_evicted_call_that_comes_back_is_no_first_sight() -> None:
    """Issue 15: a call the store evicted came back as a fresh `tool_call` titled "Tool
    call", replacing the title the v1 client showed."""
    bridge = V2ToV1Bridge(limits=Limits(max_tool_calls=100))
    bridge.convert(update("early", title="Run the tests", status="completed"))
    for i in range(200):
        bridge.convert(update(f"c{i}", title=f"call {i}", status="completed"))
    assert bridge.store.tool_call(SID, "early") is None  # evicted
    (message,) = bridge.convert(update("early", rawOutput={"ok": True})).messages
    sent = json.loads(encode(message))["params"]["update"]
    assert sent["sessionUpdate"] == "tool_call_update" and "title" not in sent


def test_v1_to_v2_bridge_keeps_at_most_max_store_bytes() -> None:
    """Issue 15: V1ToV2Bridge bounded its memory in counts only: 1,000 sessions x 50,000
    calls x a 1,024-character title each is tens of GB before any count cap bites."""
    bridge = V1ToV2Bridge(limits=Limits(max_store_bytes=2_000_000))
    reported: list[tuple[str, str]] = []
    for i in range(6_000):
        body = {"sessionUpdate": "tool_call", "toolCallId": f"c{i}", "title": "t" * 2_000}
        line = json.dumps(message_of(body, f"s{i % 30}")).encode()
        reported += losses(bridge.convert(line))
        kept = sum(
            len(s.seen) * 400 + sum(map(len, s.titles.values()))
            for s in bridge._tables.sessions.values()
        )
        assert bridge._tables.bytes == kept <= 2_000_000
    assert reported and all(path == "$.max_store_bytes" for path, _ in reported)
    assert "forgot 1 least recently used session(s)" in reported[0][1]
    (request,) = bridge.convert(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "session/request_permission",
                "params": {
                    "sessionId": "s29",
                    "toolCall": {"toolCallId": "c5999"},
                    "options": [{"optionId": "y", "name": "Yes", "kind": "allow_once"}],
                },
            }
        ).encode()
    ).messages
    assert json.loads(encode(request))["params"]["title"] == "t" * 1_024  # still remembered


def test_v1_to_v2_bridge_remembers_at_most_max_tool_calls_titles() -> None:
    bridge = V1ToV2Bridge(limits=Limits(max_tool_calls=1_000))
    template = json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": SID,
                "update": {
                    "sessionUpdate": "tool_call",
                    "toolCallId": "IDX",
                    "title": "t",
                    "status": "completed",
                },
            },
        }
    ).encode()
    reported: list[tuple[str, str]] = []
    for i in range(20_000):
        converted = bridge.convert(template.replace(b"IDX", b"c%d" % i))
        assert len(converted.messages) == 1
        reported += losses(converted)
    session = bridge._tables.sessions[SID]
    assert len(session.titles) <= 1_000 and len(session.final) <= 1_000
    assert reported and reported[0][0] == "$.max_tool_calls"
    assert "forgot the 125 oldest tool-call id(s) (cap 1000 per session)" in reported[0][1]


# --------------------------------------------------------------------------------------------
# A single call with a million chunks: the content cap keeps head and tail and says so

CHUNKS = 200_000
CHUNK_LIMITS = Limits(max_content_items=(Limits().max_content_items or 0) // 5)


def test_store_keeps_head_and_tail_of_a_call_with_a_flood_of_chunks() -> None:
    cap = CHUNK_LIMITS.max_content_items
    assert cap == 2_000
    store = ToolCallStore(limits=CHUNK_LIMITS)
    events = apply_all(store, [BEFORE, *chunks(CHUNKS), AFTER])
    assert stored_ids(store) == ["before", "stream", "after"]
    view = store.view(SID, "stream")
    assert view.status == "completed"  # the update after the chunks applied
    items: list[Any] = view.content  # text `content` items
    texts = [item.content.text for item in items]
    assert len(texts) <= cap
    assert texts[: cap // 4] == [str(i) for i in range(cap // 4)]  # the head is kept
    assert texts[-1] == str(CHUNKS - 1)  # and the tail is the newest
    assert view.dropped_items == CHUNKS - len(texts)
    reached = [e for e in events if isinstance(e, LimitReached)]
    assert reached and {e.limit for e in reached} == {"max_content_items"}
    assert reached[-1].detail.endswith(f"(cap {cap}; {view.dropped_items} dropped in all)")


@pytest.mark.parametrize("coalesce", [True, False], ids=["coalesced", "uncoalesced"])
def test_bridge_sends_a_capped_call_after_a_flood_of_chunks(coalesce: bool) -> None:
    count, cap = (CHUNKS, CHUNK_LIMITS.max_content_items) if coalesce else (5_000, 100)
    bridge = V2ToV1Bridge(coalesce=coalesce, limits=Limits(max_content_items=cap))
    bridge.convert(BEFORE)
    biggest = 0
    reported = 0
    for line in chunks(count):
        converted = bridge.convert(line)
        reported += sum(path == "$.max_content_items" for path, _ in losses(converted))
        for message in converted.messages:  # not encoded: the sizes are what matter here
            content = getattr(message.params.update, "content", None)
            biggest = max(biggest, len(content) if isinstance(content, list) else 0)
    assert reported > 0
    assert biggest <= (cap or 0) + 1  # never more than the cap, and a marker where they went
    assert v1_ids(bridge.convert(AFTER)) == ["after"]
    assert bridge.store.view(SID, "stream").status == "completed"


# --------------------------------------------------------------------------------------------
# A permission request with 100,000 options: read (the line is within max_bytes), never
# forwarded by a bridge (max_permission_options), the agent answered `cancelled`

OPTIONS = permission(100_000)


def test_codec_reads_100000_options_within_the_line_limit() -> None:
    assert len(OPTIONS) < DEFAULT_MAX_BYTES
    request = decode_message(OPTIONS).value
    assert len(request.params.options) == 100_000


def test_store_applies_the_subject_of_a_request_with_100000_options() -> None:
    store = ToolCallStore()
    events = apply_all(store, [BEFORE, OPTIONS, AFTER])
    assert stored_ids(store) == ["before", "edit", "after"]
    assert store.view(SID, "edit").title == "Edit a file"  # options are prompt data only
    assert not [e for e in events if isinstance(e, DiagnosticReported)]


def test_v2_to_v1_bridge_does_not_forward_100000_options() -> None:
    cap = Limits().max_permission_options
    bridge = V2ToV1Bridge()
    bridge.convert(BEFORE)
    converted = bridge.convert(OPTIONS)
    assert (
        "$.params.options",
        f"100000 options, over the cap of {cap} (max_permission_options): request not sent; "
        "answered the agent `cancelled`",
    ) in losses(converted)
    (reply,) = converted.replies
    assert reply.data == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"outcome": {"outcome": "cancelled"}},
    }
    # The call the request is about still reaches the v1 client; the request does not.
    assert [m.get("method") for m in v1_messages(converted)] == ["session/update"]
    assert v1_ids(converted) == ["edit"]
    assert v1_ids(bridge.convert(AFTER)) == ["after"]
    # At the cap the request goes through.
    at_cap = bridge.convert(permission(cap or 0, request_id=2, tool_call_id="edit2"))
    methods = [m.get("method") for m in v1_messages(at_cap)]
    assert methods[-1] == "session/request_permission" and not at_cap.replies


def test_v1_to_v2_bridge_does_not_forward_100000_options() -> None:
    request = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "session/request_permission",
        "params": {
            "sessionId": SID,
            "toolCall": {"toolCallId": "edit", "title": "Edit"},
            "options": [
                {"optionId": f"o{i}", "name": f"o{i}", "kind": "allow_once"} for i in range(100_000)
            ],
        },
    }
    converted = V1ToV2Bridge().convert(json.dumps(request).encode())
    assert converted.messages == ()
    (reply,) = converted.replies
    assert reply.data["result"] == {"outcome": {"outcome": "cancelled"}}
    ((path, reason),) = losses(converted)
    assert path == "$.params.options" and reason.startswith("100000 options, over the cap of 100")


# --------------------------------------------------------------------------------------------
# The other floods: sessions, terminals and unanswered permission requests


def test_a_flood_of_sessions_evicts_the_least_recently_updated() -> None:
    store = ToolCallStore(limits=Limits(max_sessions=100))
    store.apply(BEFORE)
    events: list[Event] = []
    for i in range(2_000):
        events += store.apply(update("c", session_id=f"flood_{i}", title="c"))
        if i % 50 == 0:
            events += store.apply(update("busy", title="still here"))  # SID stays in use
    events += store.apply(AFTER)
    assert len(store.sessions) <= 100
    assert stored_ids(store) == ["before", "busy", "after"]  # the busy session was never evicted
    evicted = [e for e in events if isinstance(e, SessionEvicted)]
    assert evicted[0].session_id == "flood_0" and SID not in {e.session_id for e in evicted}
    reached = [e for e in events if isinstance(e, LimitReached)]
    assert reached[0].limit == "max_sessions"
    assert "evicted 12 session(s), idle and least recently updated first ('flood_0'" in (
        reached[0].detail
    )


def test_bridge_sessions_follow_the_store() -> None:
    bridge = V2ToV1Bridge(limits=Limits(max_sessions=10))
    for i in range(100):
        bridge.convert(update("c", session_id=f"s_{i}", title="c"))
        bridge.convert(output_chunk("b2sK", session_id=f"s_{i}"))
    assert len(bridge.store.sessions) <= 10
    for session_id, session in bridge._state.sessions.items():  # others keep only ghost calls
        if session_id not in bridge.store.sessions:
            assert not session.order and not session.readers
            assert all(call.ghost and not call.flat for call in session.calls.values())
    assert {k[0] for k in bridge._state.rendered} <= set(bridge.store.sessions)


def test_evicting_sessions_never_loses_what_the_bridge_held_back() -> None:
    """Issue 15: past `max_sessions`, coalesced changes of the sessions the store evicted
    never reached the v1 client (124 of them past 1,000 sessions)."""
    bridge = V2ToV1Bridge(coalesce=True, limits=Limits(max_sessions=100))
    shown: dict[str, list[Any]] = {}

    def receive(converted: Converted) -> None:
        for m in v1_messages(converted):
            shown.setdefault(m["params"]["sessionId"], []).append(m["params"]["update"])

    for i in range(1_000):
        sid = f"s_{i}"
        receive(bridge.convert(update("c", session_id=sid, title=f"call {i}")))
        item = {"type": "content", "content": {"type": "text", "text": f"out {i}"}}
        body = {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c", "content": item}
        receive(bridge.convert(json.dumps(message_of(body, sid)).encode()))  # held back
    receive(bridge.flush())
    assert len(shown) == 1_000
    for i in range(1_000):
        first, *later = shown[f"s_{i}"]
        assert first["sessionUpdate"] == "tool_call" and first["title"] == f"call {i}"
        assert any(
            u.get("content")
            == [{"type": "content", "content": {"type": "text", "text": f"out {i}"}}]
            for u in later
        ), i


def message_of(body: dict[str, Any], session_id: str) -> dict[str, Any]:
    params = {"sessionId": session_id, "update": body}
    return {"jsonrpc": "2.0", "method": "session/update", "params": params}


def test_a_flood_of_terminals_evicts_exited_ones_first() -> None:
    exited = update("x").replace(
        b'{"sessionUpdate":"tool_call_update","toolCallId":"x"}',
        b'{"sessionUpdate":"terminal_update","terminalId":"done","exitStatus":{"exitCode":0}}',
    )
    store = ToolCallStore(limits=Limits(max_terminals=50))
    events = apply_all(
        store,
        [BEFORE, output_chunk("YQ==", "first"), exited]
        + [output_chunk("b2sK", f"t{i}") for i in range(1_000)]
        + [AFTER],
    )
    terminals = store.sessions[SID].terminals
    assert len(terminals) <= 50
    evicted = [e.terminal_id for e in events if isinstance(e, TerminalEvicted)]
    assert evicted[:2] == ["done", "first"]  # the exited one first, then the oldest
    assert stored_ids(store) == ["before", "after"]
    assert any(isinstance(e, LimitReached) and e.limit == "max_terminals" for e in events)


def test_unanswered_permission_requests_are_given_up_oldest_first() -> None:
    bridge = V2ToV1Bridge(limits=Limits(max_pending_permissions=10))
    replies: list[Any] = []
    reported: list[tuple[str, str]] = []
    for i in range(25):
        converted = bridge.convert(permission(2, request_id=i, tool_call_id=f"c{i}"))
        replies += [r.data for r in converted.replies]
        reported += losses(converted)
    assert len(bridge._permissions.forwarded) == 10
    assert [r["id"] for r in replies] == list(range(15))  # each given up: answered cancelled
    assert all(r["result"] == {"outcome": {"outcome": "cancelled"}} for r in replies)
    assert [p for p, _ in reported if p == "$.max_pending_permissions"] == [
        "$.max_pending_permissions"
    ] * 15
    # A request still pending gets the client's answer mapped back as before.
    answer = {"jsonrpc": "2.0", "id": 24, "result": {"outcome": {"outcome": "cancelled"}}}
    (mapped,) = bridge.convert(json.dumps(answer).encode()).messages
    assert mapped.data["id"] == 24


def test_limits_unlimited_disables_every_cap() -> None:
    unlimited = Limits.unlimited()
    assert all(getattr(unlimited, name) is None for name in Limits.__struct_fields__)
    assert Limits() == Limits(
        max_content_items=10_000,
        max_terminal_bytes=4 * MiB,
        max_tool_calls=50_000,
        max_terminals=10_000,
        max_sessions=1_000,
        max_permission_options=100,
        max_pending_permissions=1_000,
    )


def chunk_of(tool_call_id: str, text: str, session_id: str = SID) -> bytes:
    item = {"type": "content", "content": {"type": "text", "text": text}}
    body = {"sessionUpdate": "tool_call_content_chunk", "toolCallId": tool_call_id, "content": item}
    return json.dumps(message_of(body, session_id)).encode()


def test_a_call_over_its_cap_keeps_its_last_item() -> None:
    """Issue 15: two items of 1 MB in a call capped at 1.5 MB lost all their content (no
    middle to drop, so the whole list went), the newest output included."""
    store = ToolCallStore(limits=Limits(max_call_bytes=1_500_000))
    apply_all(store, [update("c", title="c")])
    apply_all(store, [chunk_of("c", letter * 1_000_000) for letter in "ab"])
    content: Any = store.view(SID, "c").content  # text `content` items
    assert isinstance(content, list) and [item.content.text[0] for item in content] == ["b"]


def test_a_flush_with_a_budget_sends_the_oldest_changes_first() -> None:
    """Issue 15: one flush after a flood of chunks built every held-back call's message at
    once (the proxy's memory grew by all of them); a budget sends some, the rest later."""
    bridge = V2ToV1Bridge(coalesce=True)
    for i in range(10):
        bridge.convert(update(f"c{i}", title=f"call {i}"))
        bridge.convert(chunk_of(f"c{i}", "x" * 100_000))
    assert bridge.pending
    sent: list[str] = []
    while bridge.pending:
        before = len(sent)
        sent += [
            m["params"]["update"]["toolCallId"]
            for m in v1_messages(bridge.flush(max_bytes=250_000))
        ]
        assert 1 <= len(sent) - before <= 3
    assert sent == [f"c{i}" for i in range(10)]
    assert not v1_messages(bridge.flush())


def test_duplicate_keys_with_a_decoded_value_that_writes_a_default_back() -> None:
    # No top-level `jsonrpc`: the model writes its default back, one pair the text did not
    # have, which would hide the repeat below if the written value stood in for the text.
    text = (
        b'{"method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":'
        b'"tool_call_update","toolCallId":"a","rawInput":{"jsonrpc":1,"k":1,"k":2}}}}'
    )
    decoded = decode_message(text).value
    assert [d.path for d in duplicate_keys(text, decoded)] == ["$.params.update.rawInput.k"]
