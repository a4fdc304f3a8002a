"""The bridges' fast paths give what their general paths give (issue 19).

The common shapes take shortcuts: a plain v2 -> v1 tool-call field mapping without the
per-field table (``convert.plain_fields``, ``plain_stored_fields``), and in ``V2ToV1Bridge`` a
chunk or an update of a call the client shows, with nothing held back, emitted without the
flush machinery. Each shortcut must give exactly what the general path gives: the same values
and no loss where it applies, ``None`` (the general path) where it does not; byte-identical
output, losses and replies from a bridge with the fast paths turned off.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec import UNSET

from acp_toolcalls import ToolCallStore, v1, v2
from acp_toolcalls.bridge import _to_v1, _to_v1_state, _to_v2
from acp_toolcalls.codec import DecodeError, canonical_json
from acp_toolcalls.convert import (
    Converted,
    plain_fields,
    plain_stored_fields,
    plain_tool_call_fields,
)
from acp_toolcalls.convert._kernel import Losses as _Losses
from acp_toolcalls.convert._tool_calls import _mapped_fields_to_v1 as _mapped_fields
from acp_toolcalls.convert._tool_calls import (
    _mapped_fields_to_v2 as _mapped_tool_call_fields,
)
from acp_toolcalls.models import (
    TOOL_CALL_FIELDS,
    V1_TOOL_CALL_FIELDS,
    replace,
    with_extra_fields,
)
from acp_toolcalls.store import Limits
from benchmarks import messages, v1_messages
from tests.fuzz.strategies import examples
from tests.fuzz.test_fuzz_bridges import SMALL_LIMITS, steps

# --------------------------------------------------------------------------------------------
# Tool-call updates of every shape the mapping distinguishes

_TEXT = st.text(max_size=12)
_META = st.one_of(
    st.none(),
    st.dictionaries(st.sampled_from(["a", "b", "c"]), st.none() | st.integers(0, 3), max_size=3),
)


def _maybe_extra(cls: Any, extra: bool, **fields: Any) -> Any:
    if extra:
        return with_extra_fields(cls, {"zzUnknown": 1}, **fields)
    return cls(**fields)


@st.composite
def _location(draw: st.DrawFn) -> Any:
    fields: dict[str, Any] = {"path": draw(_TEXT)}
    if draw(st.booleans()):
        fields["line"] = draw(st.none() | st.integers(1, 9))
    if draw(st.booleans()):
        fields["meta"] = draw(_META)
    return _maybe_extra(v2.ToolCallLocation, draw(st.integers(0, 9)) == 0, **fields)


@st.composite
def _content_item(draw: st.DrawFn) -> Any:
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return v2.Terminal(terminal_id="t1")
    if kind == 1:
        patch = v2.DiffPatch(format="git_patch", text="@@ -1 +1 @@\n-a\n+b\n")
        return v2.Diff(changes=[v2.ModifyDiffChange(path="/a")], patch=patch)
    block: dict[str, Any] = {"text": draw(_TEXT)}
    if kind == 2:
        block["annotations"] = v2.Annotations(priority=0.5)
    if kind == 3:
        block["meta"] = {"k": 1}
    item: dict[str, Any] = {"content": v2.TextContent(**block)}
    if kind == 4:
        item["meta"] = draw(_META)
    return _maybe_extra(v2.Content, kind == 5, **item)


def _field(values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.just(UNSET), st.none(), values)


V2_FIELD_STRATEGIES: dict[str, st.SearchStrategy[Any]] = {
    "title": _field(_TEXT),
    "name": _field(_TEXT),
    "kind": _field(st.sampled_from(["read", "edit", "execute", "other", "weird", ""])),
    "status": _field(st.sampled_from(["pending", "completed", "cancelled", "paused", "x"])),
    "content": _field(st.lists(_content_item(), max_size=3)),
    "locations": _field(st.lists(_location(), max_size=3)),
    "raw_input": _field(st.integers() | _TEXT | st.dictionaries(_TEXT, st.integers())),
    "raw_output": _field(st.integers() | _TEXT),
    "capabilities": _field(st.just(v2.ToolCallCapabilities())),
    "meta": st.one_of(st.just(UNSET), _META),
}
"""Per field of ``v2.ToolCallUpdate``: its values (omitted, ``null`` or set) in the updates the
fast paths are compared on; ``tool_call_updates`` draws every field of the registry
(``models.TOOL_CALL_FIELDS``), so a field without an entry fails here, and
tests/models/test_field_registry.py names this table."""


@st.composite
def tool_call_updates(
    draw: st.DrawFn, classes: tuple[type, ...] = (v2.ToolCallUpdate, v2.SessionToolCallUpdate)
) -> Any:
    """A v2 ``tool_call_update`` (as a session update or a bare patch), any field omitted,
    ``null`` or set: known and unknown kinds and statuses, empty and non-empty collections,
    locations and content items with and without ``_meta`` or unknown keys, ``capabilities``,
    ``_meta`` with ``null`` keys; sometimes the update itself carries an unknown key."""
    fields: dict[str, Any] = {"tool_call_id": "c1"}
    candidates = {f.attr: V2_FIELD_STRATEGIES[f.attr] for f in TOOL_CALL_FIELDS}
    for name, strategy in candidates.items():
        value = draw(strategy)
        if value is not UNSET:
            fields[name] = value
    cls = draw(st.sampled_from(classes))
    return _maybe_extra(cls, draw(st.integers(0, 9)) == 0, **fields)


@settings(max_examples=examples(2.0))
@given(update=tool_call_updates(), create=st.booleans())
def test_plain_fields_are_the_mapped_fields(update: Any, create: bool) -> None:
    losses = _Losses(strict=False)
    general = _mapped_fields(update, create, "$", losses)
    fast = plain_fields(update, create)
    if fast is not None:
        assert fast == general
        assert losses.found == []
    elif not losses.found:  # the fast path may decline; only shapes that need no table do not
        assert type(update) not in (v2.ToolCallUpdate, v2.SessionToolCallUpdate) or any(
            isinstance(value, list) and value for value in (update.content, update.locations)
        )


@settings(max_examples=examples(2.0))
@given(updates=st.lists(tool_call_updates((v2.SessionToolCallUpdate,)), min_size=1, max_size=3))
def test_plain_stored_fields_are_the_mapped_snapshot(updates: list[Any]) -> None:
    store = ToolCallStore()
    for update in updates:
        store.apply_update("s1", update)
    held = store.tool_call("s1", "c1")
    assert held is not None
    if held.extra is not None:
        return  # the bridge asks only for a call without unknown keys
    fast = plain_stored_fields(held.fields, held.meta)
    if fast is None:
        return
    losses = _Losses(strict=False)
    snapshot = replace(held.snapshot(), content=UNSET)
    assert fast == _mapped_fields(snapshot, True, "$", losses)
    assert losses.found == []


@st.composite
def _v1_content_item(draw: st.DrawFn) -> Any:
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return v1.Terminal(terminal_id="t1")
    if kind == 1:
        return v1.Diff(path="/a", new_text=draw(_TEXT), old_text=draw(st.none() | _TEXT))
    block: dict[str, Any] = {"text": draw(_TEXT)}
    if kind == 2:
        block["annotations"] = v1.Annotations(priority=draw(st.sampled_from([0.5, 2.0])))
    if kind == 3:
        block["meta"] = {"k": 1}
    item: dict[str, Any] = {"content": v1.TextContent(**block)}
    if kind == 4:
        item["meta"] = draw(_META)
    return _maybe_extra(v1.Content, kind == 5, **item)


@st.composite
def _v1_location(draw: st.DrawFn) -> Any:
    fields: dict[str, Any] = {"path": draw(_TEXT)}
    if draw(st.booleans()):
        fields["line"] = draw(st.sampled_from([None, 0, 1, 7, True, 2.5]))
    if draw(st.booleans()):
        fields["meta"] = draw(_META)
    return _maybe_extra(v1.ToolCallLocation, draw(st.integers(0, 9)) == 0, **fields)


V1_FIELD_STRATEGIES: dict[str, st.SearchStrategy[Any]] = {
    "title": _field(_TEXT),
    "name": _field(_TEXT),
    "kind": _field(st.sampled_from(["read", "other", "weird"])),
    "status": _field(st.sampled_from(["pending", "completed", "cancelled"])),
    "content": _field(st.lists(_v1_content_item(), max_size=3)),
    "locations": _field(st.lists(_v1_location(), max_size=3)),
    "raw_input": _field(st.integers() | _TEXT),
    "raw_output": _field(st.integers() | _TEXT),
    "meta": st.one_of(st.just(UNSET), _META),
}
"""``V2_FIELD_STRATEGIES`` for the fields of v1's tool calls (``models.V1_TOOL_CALL_FIELDS``)."""


@st.composite
def v1_tool_calls(draw: st.DrawFn) -> Any:
    """A v1 ``tool_call`` or ``tool_call_update``, any field omitted, ``null`` or set (defaults
    and unknown strings included), with and without unknown keys."""
    classes: list[type[Any]] = [v1.ToolCall, v1.SessionToolCallUpdate, v1.ToolCallUpdate]
    cls = draw(st.sampled_from(classes))
    fields: dict[str, Any] = {"tool_call_id": "c1"}
    if cls is v1.ToolCall:
        fields["title"] = draw(_TEXT)
    candidates = {f.attr: V1_FIELD_STRATEGIES[f.attr] for f in V1_TOOL_CALL_FIELDS}
    for name, strategy in candidates.items():
        value = draw(strategy)
        if value is not UNSET and not (name == "title" and cls is v1.ToolCall and value is None):
            fields[name] = value
    return _maybe_extra(cls, draw(st.integers(0, 9)) == 0, **fields)


@settings(max_examples=examples(2.0))
@given(call=v1_tool_calls(), merge=st.booleans())
def test_plain_tool_call_fields_are_the_mapped_fields(call: Any, merge: bool) -> None:
    losses = _Losses(strict=False)
    general = _mapped_tool_call_fields(call, merge, "$", losses)
    fast = plain_tool_call_fields(call, merge)
    if fast is not None:
        assert fast == general
        assert losses.found == []


# --------------------------------------------------------------------------------------------
# The bridges with and without their fast paths


@contextmanager
def _general_paths() -> Iterator[None]:
    _to_v1_state.FAST_PATHS = _to_v2._FAST_PATHS = False
    try:
        yield
    finally:
        _to_v1_state.FAST_PATHS = _to_v2._FAST_PATHS = True


def _plain(out: Converted) -> Any:
    return (
        [canonical_json(m) for m in out.messages],
        [canonical_json(r) for r in out.replies],
        [(loss.path, loss.reason) for loss in out.losses],
    )


def _run(script: list[tuple[str, Any]], options: dict[str, Any], protocol: str = "v2") -> list[Any]:
    bridge: Any
    bridge = _to_v1.V2ToV1Bridge(**options) if protocol == "v2" else _to_v2.V1ToV2Bridge(**options)
    outputs: list[Any] = []
    for action, argument in script:
        if action == "convert":
            try:
                outputs.append(_plain(bridge.convert(argument)))
            except DecodeError as exc:
                outputs.append(("refused", exc.path, exc.reason))
        elif action == "flush":
            outputs.append(_plain(bridge.flush(argument)))
        else:
            outputs.append(_plain(bridge.close_session(argument)))
    outputs.append(_plain(bridge.flush()))
    if protocol == "v2":
        outputs.append(bridge.store.document())
    return outputs


@settings(max_examples=examples(1.0))
@given(
    coalesce=st.booleans(),
    profile=st.sampled_from(["text", "meta"]),
    limits=st.none() | SMALL_LIMITS,
    script=steps("v2"),
)
def test_v2_to_v1_bridge_fast_paths_change_nothing(
    coalesce: bool, profile: Any, limits: Limits | None, script: list[tuple[str, Any]]
) -> None:
    options = {"coalesce": coalesce, "terminal_profile": profile, "limits": limits}
    fast = _run(script, options)
    with _general_paths():
        general = _run(script, options)
    assert fast == general


def test_v2_to_v1_bridge_fast_paths_on_sequential_calls() -> None:
    """The stream of ``bench_bridge.py --sequential`` (calls one after another, each a first
    report, text chunks and a completion), with a chunk after the completion, with and without
    a content cap."""
    lines: list[tuple[str, Any]] = []
    item: dict[str, Any] = {}
    for i in range(3):
        call = f"call_{i}"
        first: dict[str, object]
        first = {"title": f"Read {i}.py", "kind": "read", "status": "in_progress"}
        first |= {"rawInput": {"path": f"/{i}.py"}, "locations": [{"path": f"/{i}.py"}]}
        lines.append(("convert", _update("tool_call_update", call, **first)))
        for j in range(9):
            item = {"type": "content", "content": {"type": "text", "text": "x" * (i + j)}}
            lines.append(("convert", _update("tool_call_content_chunk", call, content=item)))
        lines.append(("convert", _update("tool_call_update", call, status="completed")))
        lines.append(("convert", _update("tool_call_content_chunk", call, content=item)))
    for limits in (None, Limits(max_content_items=4)):
        fast = _run(lines, {"limits": limits})
        with _general_paths():
            assert fast == _run(lines, {"limits": limits})


@pytest.mark.parametrize("coalesce", [False, True])
def test_v2_to_v1_bridge_fast_paths_on_live_traffic(coalesce: bool) -> None:
    """bench_store.py's corpus: many calls open at once, chunks, progress, terminals,
    permission requests, completions."""
    script = [("convert", line) for line in messages.generate_live(3_000, calls=20, seed=5)]
    fast = _run(script, {"coalesce": coalesce})
    with _general_paths():
        assert fast == _run(script, {"coalesce": coalesce})


def _update(tag: str, call: str, **fields: Any) -> bytes:
    update = {"sessionUpdate": tag, "toolCallId": call, **fields}
    params = {"sessionId": "s1", "update": update}
    return json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": params}).encode()


@settings(max_examples=examples(1.0))
@given(limits=st.none() | SMALL_LIMITS, script=steps("v1"))
def test_v1_to_v2_bridge_fast_path_changes_nothing(
    limits: Limits | None, script: list[tuple[str, Any]]
) -> None:
    fast = _run(script, {"limits": limits}, "v1")
    with _general_paths():
        general = _run(script, {"limits": limits}, "v1")
    assert fast == general


@pytest.mark.slow
def test_v1_to_v2_bridge_fast_path_on_v1_traffic() -> None:
    """What a v1 agent sends for bench_store's corpus (that corpus through V2ToV1Bridge) and
    bench_bridge_v1's stream, with repeated creates and a call re-created after it ended."""
    v1_lines: list[Any] = []
    for coalesce in (False, True):
        toward_v1 = _to_v1.V2ToV1Bridge(coalesce=coalesce)
        for line in messages.generate_live(3_000, calls=20, seed=5):
            v1_lines += toward_v1.convert(line).messages
        v1_lines += toward_v1.flush().messages
    script = [("convert", canonical_json(m)) for m in v1_lines]
    script += [("convert", line) for line in v1_messages.sequential(3)] * 2
    for limits in (None, Limits(max_tool_calls=2)):
        fast = _run(script, {"limits": limits}, "v1")
        with _general_paths():
            assert fast == _run(script, {"limits": limits}, "v1")
