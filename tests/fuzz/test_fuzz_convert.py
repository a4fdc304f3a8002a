"""Fuzz the stateless converters (``StatelessV2ToV1``, ``StatelessV1ToV2``) and the pure
mappings under them (``v2_to_v1``, ``v1_to_v2``): tool calls, content items, permission
answers.

Invariants:

- only ``DecodeError`` leaves ``convert`` (and, in strict mode, ``ConversionError`` with a
  JSON path); a refused line leaves the converter's state (``seen``) unchanged;
- every typed message sent validates against the target version's schema and is a session
  update of that version; everything else is a message of the input passed through unchanged;
  answers given on the peer's behalf approve nothing; a step speaks only about the sessions
  the line names; toward v1 the first message about a call is its ``tool_call``; toward v2
  no ``null`` is invented;
- strict mode changes nothing but raising: when it does not raise, it returns exactly what the
  lenient mode returns; when it raises, the lenient mode reported a loss at that path;
- each mapping of a decoded payload gives a value valid against the target schema's
  definition (``ToolCall``, ``ToolCallUpdate``, ``ToolCallContent``,
  ``RequestPermissionResponse``), with strict mode as above; an answer that is not
  ``selected`` never maps to ``selected``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hypothesis import event, given, settings
from hypothesis import strategies as st

from acp_toolcalls import DecodeError, decode, v1, v2
from acp_toolcalls.check import validate_payload
from acp_toolcalls.codec import canonical_json, to_builtins
from acp_toolcalls.convert import (
    ConversionError,
    LossReport,
    content_to_v1,
    content_to_v2,
    permission_response_to_v1,
    permission_response_to_v2,
    tool_call_to_v1,
    tool_call_to_v2,
    tool_call_update_to_v1,
    tool_call_update_to_v2,
)
from acp_toolcalls.models import VersionName

from . import corpus
from .strategies import GARBAGE, SESSION_IDS, dump, examples, line, mutated, traffic, weighted
from .targets import run_stateless


def _script(protocol: str) -> st.SearchStrategy[list[tuple[str, Any]]]:
    feed = (traffic(protocol) | line(protocol)).map(lambda raw: ("convert", raw))
    close = st.tuples(st.just("close"), st.sampled_from(SESSION_IDS))
    return st.lists(weighted((8, feed), (1, close)), min_size=1, max_size=25)


@settings(max_examples=examples(1.0))
@given(script=_script("v2"))
def test_stateless_v2_to_v1(script: list[tuple[str, Any]]) -> None:
    run_stateless(script, "v2", event)


@settings(max_examples=examples(1.0))
@given(script=_script("v1"))
def test_stateless_v1_to_v2(script: list[tuple[str, Any]]) -> None:
    run_stateless(script, "v1", event)


# --------------------------------------------------------------------------------------------
# The pure mappings, on decoded payloads


def _objects(protocol: str, key: str) -> list[Any]:
    """Every object of the seeds of ``protocol`` under ``key`` (e.g. ``update``)."""
    out: list[Any] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for k, item in value.items():
                if k == key and isinstance(item, dict):
                    out.append(item)
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for value in corpus.VALUES[protocol]:
        walk(value)
    return out


UPDATES = {
    "v1": _objects("v1", "update") + _objects("v1", "toolCall"),
    "v2": _objects("v2", "update") + _objects("v2", "toolCall"),
}
ITEMS = {
    protocol: [
        item
        for update in UPDATES[protocol]
        for item in (update.get("content") if isinstance(update.get("content"), list) else [])
    ]
    + _objects(protocol, "content")
    for protocol in ("v1", "v2")
}


def _valid(value: Any, def_name: str, protocol: VersionName) -> Any:
    plain = to_builtins(value)
    violations = validate_payload(plain, def_name, protocol)
    assert not violations, (
        f"{def_name} ({protocol}) invalid: {[str(v) for v in violations]}\n"
        f"{json.dumps(plain)[:1500]}"
    )
    return plain


def _both_modes(fn: Callable[..., tuple[Any, LossReport]], value: Any) -> tuple[Any, LossReport]:
    result, losses = fn(value)
    for loss in losses:
        assert loss.path.startswith("$"), loss
    try:
        strict, strict_losses = fn(value, strict=True)
    except ConversionError as exc:
        assert exc.path in {loss.path for loss in losses}, (exc, losses)
    else:
        assert canonical_json(strict) == canonical_json(result), "strict mode changed the result"
        assert strict_losses == losses
    return result, losses


def _decoded(payload: Any, model: type) -> Any:
    """The payload as a reader of the wire gets it (from its JSON bytes), or ``None``."""
    try:
        return decode(dump(payload), model).value
    except DecodeError:
        return None


@settings(max_examples=examples(1.0))
@given(payload=st.sampled_from(UPDATES["v2"]).flatmap(mutated) | GARBAGE)
def test_v2_tool_call_mappings(payload: Any) -> None:
    update = _decoded(payload, v2.ToolCallUpdate)
    event(f"decoded: {update is not None}")
    if update is None:
        return
    create, _ = _both_modes(tool_call_to_v1, update)
    assert _valid(create, "ToolCall", "v1")["title"], "a v1 tool_call with an empty title"
    _valid(_both_modes(tool_call_update_to_v1, update)[0], "ToolCallUpdate", "v1")
    back, _ = tool_call_update_to_v2(decode(canonical_json(create), v1.ToolCallUpdate).value)
    _valid(back, "ToolCallUpdate", "v2")
    for item in update.content if isinstance(update.content, list) else []:
        items, _ = _both_modes(content_to_v1, item)
        for converted in items:
            _valid(converted, "ToolCallContent", "v1")


@settings(max_examples=examples(1.0))
@given(
    payload=st.sampled_from(UPDATES["v1"]).flatmap(mutated) | GARBAGE,
    create=st.booleans(),
)
def test_v1_tool_call_mappings(payload: Any, create: bool) -> None:
    model = v1.ToolCall if create else v1.ToolCallUpdate
    update = _decoded(payload, model)
    event(f"decoded: {update is not None}")
    if update is None:
        return
    fn = tool_call_to_v2 if create else tool_call_update_to_v2
    mapped, _ = _both_modes(fn, update)
    _valid(mapped, "ToolCallUpdate", "v2")
    assert not [k for k, v in to_builtins(mapped).items() if v is None], "invented a v2 clear"
    for item in update.content if isinstance(update.content, list) else []:
        converted, _ = _both_modes(content_to_v2, item)
        if converted is not None:
            _valid(converted, "ToolCallContent", "v2")


@settings(max_examples=examples(0.5))
@given(
    payload=st.sampled_from(corpus.CLIENT_ANSWERS).flatmap(mutated) | GARBAGE,
    to_v1=st.booleans(),
)
def test_permission_answer_mappings(payload: Any, to_v1: bool) -> None:
    source = v2 if to_v1 else v1
    answer = _decoded(payload, source.RequestPermissionResponse)
    event(f"decoded: {answer is not None}")
    if answer is None:
        return
    if to_v1:
        mapped, _ = _both_modes(permission_response_to_v1, answer)
        plain = _valid(mapped, "RequestPermissionResponse", "v1")
    else:
        plain = _valid(permission_response_to_v2(answer), "RequestPermissionResponse", "v2")
    if plain["outcome"]["outcome"] == "selected":
        original = to_builtins(answer)["outcome"]
        assert original["outcome"] == "selected", f"{original} became approval-capable"
        assert plain["outcome"]["optionId"] == original["optionId"]
