"""An uncapped store does not measure its calls' values; given a byte cap later, it counts
what it holds exactly as a store that measured all along."""

from __future__ import annotations

import json
from typing import Any

from acp_toolcalls import Limits, ToolCallStore


def _update(**fields: Any) -> bytes:
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "c1", **fields}
    message = {"jsonrpc": "2.0", "method": "session/update",
               "params": {"sessionId": "s1", "update": update}}  # fmt: skip
    return json.dumps(message).encode()


def _chunk(text: str) -> bytes:
    item = {"type": "content", "content": {"type": "text", "text": text}}
    update = {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c1", "content": item}
    message = {"jsonrpc": "2.0", "method": "session/update",
               "params": {"sessionId": "s1", "update": update}}  # fmt: skip
    return json.dumps(message).encode()


STREAM = [
    _update(title="Run", kind="execute", status="pending", rawInput={"command": "ls -la"}),
    _update(status="in_progress", _meta={"a": 1, "b": "two"}, extraKey=[1, 2, 3]),
    _chunk("first"),
    _chunk("second ünicode"),
    _update(locations=[{"path": "/x", "line": 3}], _meta={"b": None, "c": {"d": 4}}),
    _update(rawInput=None, extraKey=None),
    _chunk("third"),
    _update(content=[{"type": "content", "content": {"type": "text", "text": "replaced"}}]),
    _update(status="completed", rawOutput={"exitCode": 0}),
]


def _sizes(store: ToolCallStore) -> tuple[int, int, int, dict[str, int]]:
    session = store.sessions["s1"]
    tc = session.tool_calls["c1"]
    return store.size, session.size, tc.size, {k: v for k, v in tc.sizes.items() if v}


def test_an_uncapped_store_given_a_cap_counts_as_one_that_measured_all_along() -> None:
    measured = ToolCallStore(version="v2")
    uncapped = ToolCallStore(version="v2", limits=Limits.unlimited())
    for line in STREAM:
        measured.apply(line)
        uncapped.apply(line)
    assert not uncapped._state.measures
    uncapped.limits = Limits()
    assert uncapped._state.measures
    assert _sizes(uncapped) == _sizes(measured)
    assert _sizes(measured)[2] > 0
    # Both keep counting alike from then on.
    for store in (measured, uncapped):
        store.apply(_update(title="Run it again", _meta={"e": "x" * 100}))
        store.apply(_chunk("fourth"))
    assert _sizes(uncapped) == _sizes(measured)


def test_a_cap_given_later_applies_from_the_next_change() -> None:
    measured = ToolCallStore(version="v2", limits=Limits(max_call_bytes=2_000))
    uncapped = ToolCallStore(version="v2", limits=Limits.unlimited())
    for line in STREAM:
        measured.apply(line)
        uncapped.apply(line)
    uncapped.limits = Limits(max_call_bytes=2_000)
    line = _update(title="x" * 3_000)
    events = uncapped.apply(line)
    assert events == measured.apply(line)
    assert any(type(event).__name__ == "LimitReached" for event in events)
    assert _sizes(uncapped) == _sizes(measured)
