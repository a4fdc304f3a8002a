"""Property tests: generated valid messages round-trip exactly; mutated ones salvage idempotently.

Generators build schema-valid JSON (as plain values) for v2 ``session/update`` (tool-call updates
with random subsets of fields and explicit nulls, every content kind including unknown ``_x``
types, diffs with every operation, locations, raw values, ``_meta``, chunks, terminal updates and
chunks, unknown updates), v2 ``session/request_permission``, and v1 ``tool_call`` /
``tool_call_update`` / permission requests. Unknown keys are sprinkled on known objects.

Example counts follow the hypothesis profile (``HYPOTHESIS_PROFILE=ci|long``, see conftest.py).
"""

from __future__ import annotations

import base64
import copy
import json
import math
from collections.abc import Callable, Iterator
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_toolcalls import (
    Batch,
    DecodeError,
    JsonRpcMessage,
    decode,
    decode_message,
    encode,
    v1,
    v2,
)
from acp_toolcalls.check import validate_message
from acp_toolcalls.codec import duplicate_keys
from acp_toolcalls.models import VersionName

Json = Any
S = st.SearchStrategy

# --------------------------------------------------------------------------------------------
# Plain JSON

TEXT = st.text(st.characters(blacklist_categories=["Cs"]), max_size=10)
SHORT = st.text(st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=6)
INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
SCALARS: S[Json] = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
)
JSON: S[Json] = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
NON_NULL_JSON = JSON.filter(lambda v: v is not None)  # D3: a raw value is never JSON null
META: S[dict[str, Json]] = st.dictionaries(TEXT, JSON, max_size=3)
EXTRAS: S[dict[str, Json]] = st.dictionaries(SHORT.map(lambda s: "zz" + s), JSON, max_size=2)
UNKNOWN_TAG = SHORT.map(lambda s: "_" + s)


def obj(
    required: dict[str, S[Json]] | None = None,
    optional: dict[str, S[Json]] | None = None,
    extras: bool = True,
) -> S[dict[str, Json]]:
    """An object with required keys, any subset of optional keys, and maybe unknown keys."""
    base = st.fixed_dictionaries(required or {}, optional=optional or {})
    if not extras:
        return base
    return st.tuples(base, EXTRAS).map(lambda pair: {**pair[1], **pair[0]})


def nullable(strategy: S[Json]) -> S[Json]:
    return st.none() | strategy


def open_enum(*known: str) -> S[str]:
    return st.sampled_from(known) | TEXT


def unknown_variant(tag_key: str) -> S[dict[str, Json]]:
    return st.tuples(
        UNKNOWN_TAG, st.dictionaries(SHORT.map(lambda s: "zz" + s), JSON, max_size=3)
    ).map(lambda pair: {tag_key: pair[0], **pair[1]})


OPT_META = {"_meta": nullable(META)}
# Where omitted and null are the same (T5, Q7) a null reads as omitted and is not written back:
# such fields are generated without null.
SAME_AS_OMITTED_META = {"_meta": META}
B64 = st.binary(max_size=12).map(lambda data: base64.b64encode(data).decode("ascii"))

# --------------------------------------------------------------------------------------------
# v2 payloads

V2_ANNOTATIONS = obj(
    optional={
        "audience": nullable(st.lists(open_enum("assistant", "user"), max_size=3)),
        "lastModified": nullable(TEXT),
        "priority": nullable(st.floats(min_value=0.0, max_value=1.0)),
        **OPT_META,
    }
)
V2_ICON = obj(
    {"src": TEXT},
    {
        "mimeType": nullable(TEXT),
        "sizes": nullable(st.lists(TEXT, max_size=2)),
        "theme": nullable(open_enum("light", "dark")),
        **OPT_META,
    },
)
BLOCK_COMMON = {"annotations": nullable(V2_ANNOTATIONS), **OPT_META}


def _resource_contents(extras: bool) -> S[dict[str, Json]]:
    text = obj({"uri": TEXT, "text": TEXT}, {"mimeType": nullable(TEXT), **OPT_META}, extras)
    blob = obj({"uri": TEXT, "blob": TEXT}, {"mimeType": nullable(TEXT), **OPT_META}, extras)
    return text | blob


def _tagged(tag_key: str, tag: str, strategy: S[dict[str, Json]]) -> S[dict[str, Json]]:
    return strategy.map(lambda value: {tag_key: tag, **value})


V2_CONTENT_BLOCK: S[dict[str, Json]] = st.one_of(
    _tagged("type", "text", obj({"text": TEXT}, BLOCK_COMMON)),
    _tagged(
        "type",
        "image",
        obj({"data": TEXT, "mimeType": TEXT}, {"uri": nullable(TEXT), **BLOCK_COMMON}),
    ),
    _tagged("type", "audio", obj({"data": TEXT, "mimeType": TEXT}, BLOCK_COMMON)),
    _tagged(
        "type",
        "resource_link",
        obj(
            {"name": TEXT, "uri": TEXT},
            {
                "title": nullable(TEXT),
                "description": nullable(TEXT),
                "icons": nullable(st.lists(V2_ICON, max_size=2)),
                "mimeType": nullable(TEXT),
                "size": nullable(st.integers(min_value=0, max_value=2**63)),
                **BLOCK_COMMON,
            },
        ),
    ),
    _tagged("type", "resource", obj({"resource": _resource_contents(True)}, BLOCK_COMMON)),
    unknown_variant("type"),
)

CHANGE_COMMON = {
    "fileType": nullable(open_enum("text", "binary", "directory", "symlink")),
    "mimeType": nullable(TEXT),
    **OPT_META,
}
V2_DIFF_CHANGE: S[dict[str, Json]] = st.one_of(
    *(
        _tagged("operation", op, obj({"path": TEXT}, CHANGE_COMMON))
        for op in ("add", "delete", "modify")
    ),
    *(
        _tagged("operation", op, obj({"oldPath": TEXT, "path": TEXT}, CHANGE_COMMON))
        for op in ("move", "copy")
    ),
    unknown_variant("operation"),
)
V2_PATCH = obj({"format": open_enum("git_patch"), "text": TEXT}, OPT_META)
V2_TOOL_CALL_CONTENT: S[dict[str, Json]] = st.one_of(
    _tagged("type", "content", obj({"content": V2_CONTENT_BLOCK}, OPT_META)),
    _tagged(
        "type",
        "diff",
        obj(
            {"changes": st.lists(V2_DIFF_CHANGE, max_size=3)},
            {"patch": nullable(V2_PATCH), **OPT_META},
        ),
    ),
    _tagged("type", "terminal", obj({"terminalId": TEXT}, OPT_META)),
    unknown_variant("type"),
)
V2_LOCATION = obj(
    {"path": TEXT},
    {"line": nullable(st.integers(min_value=1, max_value=2**32 - 1)), **OPT_META},
)
V2_CAPABILITIES = obj(optional={"cancel": nullable(obj(optional=OPT_META)), **OPT_META})

KINDS = tuple(k.value for k in v2.ToolKind)
STATUSES = tuple(s.value for s in v2.ToolCallStatus)
V2_TOOL_CALL_UPDATE = obj(
    {"toolCallId": TEXT},
    {
        "name": nullable(TEXT),
        "title": nullable(TEXT),
        "kind": nullable(open_enum(*KINDS)),
        "status": nullable(open_enum(*STATUSES)),
        "content": nullable(st.lists(V2_TOOL_CALL_CONTENT, max_size=3)),
        "locations": nullable(st.lists(V2_LOCATION, max_size=3)),
        "rawInput": nullable(NON_NULL_JSON),
        "rawOutput": nullable(NON_NULL_JSON),
        "capabilities": nullable(V2_CAPABILITIES),
        **OPT_META,
    },
)
V2_TERMINAL_UPDATE = obj(
    {"terminalId": TEXT},
    {
        "command": nullable(TEXT),
        "cwd": nullable(TEXT),
        "output": nullable(obj({"data": B64}, OPT_META)),  # not base64: invalid (D22)
        "exitStatus": nullable(
            obj(optional={"exitCode": INT64, "signal": TEXT, **SAME_AS_OMITTED_META})
        ),
        "size": nullable(
            obj({"cols": st.integers(1, 65535), "rows": st.integers(1, 65535)}, OPT_META)
        ),
        "capabilities": nullable(
            obj(optional={"cancel": nullable(obj(optional=OPT_META)), **OPT_META})
        ),
        **OPT_META,
    },
)
V2_UPDATE: S[dict[str, Json]] = st.one_of(
    _tagged("sessionUpdate", "tool_call_update", V2_TOOL_CALL_UPDATE),
    _tagged(
        "sessionUpdate",
        "tool_call_content_chunk",
        obj({"toolCallId": TEXT, "content": V2_TOOL_CALL_CONTENT}, OPT_META),
    ),
    _tagged("sessionUpdate", "terminal_update", V2_TERMINAL_UPDATE),
    _tagged(
        "sessionUpdate", "terminal_output_chunk", obj({"terminalId": TEXT, "data": TEXT}, OPT_META)
    ),
    unknown_variant("sessionUpdate"),
)


def envelope(update: S[dict[str, Json]], extras: bool = True) -> S[dict[str, Json]]:
    params = obj({"sessionId": TEXT, "update": update}, OPT_META, extras)
    return params.map(lambda p: {"jsonrpc": "2.0", "method": "session/update", "params": p})


V2_SESSION_UPDATE = envelope(V2_UPDATE)

V2_SUBJECT: S[dict[str, Json]] = st.one_of(
    _tagged("type", "tool_call", obj({"toolCall": V2_TOOL_CALL_UPDATE}, OPT_META)),
    _tagged(
        "type",
        "command",
        obj(
            {"command": TEXT, "cwd": TEXT},
            {"toolCallId": TEXT, "terminalId": TEXT, **SAME_AS_OMITTED_META},
        ),
    ),
    unknown_variant("type"),
)


def _option(kinds: S[str]) -> S[dict[str, Json]]:
    return obj({"optionId": TEXT, "name": TEXT, "kind": kinds}, OPT_META)


def request(params: S[dict[str, Json]], ids: S[Json]) -> S[dict[str, Json]]:
    return st.tuples(ids, params).map(
        lambda pair: {
            "jsonrpc": "2.0",
            "id": pair[0],
            "method": "session/request_permission",
            "params": pair[1],
        }
    )


V2_PERMISSION_REQUEST = request(
    obj(
        {
            "sessionId": TEXT,
            "title": TEXT,
            "options": st.lists(
                _option(open_enum("allow_once", "allow_always", "reject_once", "reject_always")),
                min_size=1,
                max_size=3,
            ),
        },
        {"description": nullable(TEXT), "subject": nullable(V2_SUBJECT), **OPT_META},
    ),
    INT64 | TEXT,
)

# --------------------------------------------------------------------------------------------
# v1 payloads

V1_ANNOTATIONS = obj(
    optional={
        "audience": nullable(st.lists(st.sampled_from(["assistant", "user"]), max_size=2)),
        "lastModified": nullable(TEXT),
        "priority": nullable(st.floats(allow_nan=False, allow_infinity=False)),
        **OPT_META,
    }
)
V1_BLOCK_COMMON = {"annotations": nullable(V1_ANNOTATIONS), **OPT_META}
V1_CONTENT_BLOCK: S[dict[str, Json]] = st.one_of(
    _tagged("type", "text", obj({"text": TEXT}, V1_BLOCK_COMMON)),
    _tagged(
        "type",
        "image",
        obj({"data": TEXT, "mimeType": TEXT}, {"uri": nullable(TEXT), **V1_BLOCK_COMMON}),
    ),
    _tagged("type", "audio", obj({"data": TEXT, "mimeType": TEXT}, V1_BLOCK_COMMON)),
    _tagged(
        "type",
        "resource_link",
        obj(
            {"name": TEXT, "uri": TEXT},
            {
                "title": nullable(TEXT),
                "description": nullable(TEXT),
                "mimeType": nullable(TEXT),
                "size": nullable(INT64),
                **V1_BLOCK_COMMON,
            },
        ),
    ),
    _tagged("type", "resource", obj({"resource": _resource_contents(True)}, V1_BLOCK_COMMON)),
)
V1_TOOL_CALL_CONTENT: S[dict[str, Json]] = st.one_of(
    _tagged("type", "content", obj({"content": V1_CONTENT_BLOCK}, OPT_META)),
    _tagged(
        "type",
        "diff",
        obj({"path": TEXT, "newText": TEXT}, {"oldText": nullable(TEXT), **OPT_META}),
    ),
    _tagged("type", "terminal", obj({"terminalId": TEXT}, OPT_META)),
)
V1_LOCATION = obj(
    {"path": TEXT},
    {"line": nullable(st.integers(min_value=0, max_value=2**32 - 1)), **OPT_META},
)
V1_KIND = st.sampled_from(v1.KNOWN_KINDS)
V1_STATUS = st.sampled_from(v1.KNOWN_STATUSES)
V1_TOOL_CALL = obj(
    {"toolCallId": TEXT, "title": TEXT},
    {
        "name": nullable(TEXT),
        "kind": V1_KIND,
        "status": V1_STATUS,
        "content": st.lists(V1_TOOL_CALL_CONTENT, max_size=3),
        "locations": st.lists(V1_LOCATION, max_size=3),
        "rawInput": nullable(NON_NULL_JSON),
        "rawOutput": nullable(NON_NULL_JSON),
        **OPT_META,
    },
)
V1_TOOL_CALL_UPDATE = obj(
    {"toolCallId": TEXT},
    {
        "name": nullable(TEXT),
        "title": nullable(TEXT),
        "kind": nullable(V1_KIND),
        "status": nullable(V1_STATUS),
        "content": nullable(st.lists(V1_TOOL_CALL_CONTENT, max_size=3)),
        "locations": nullable(st.lists(V1_LOCATION, max_size=3)),
        "rawInput": nullable(NON_NULL_JSON),
        "rawOutput": nullable(NON_NULL_JSON),
        **OPT_META,
    },
)
V1_SESSION_UPDATE = envelope(
    _tagged("sessionUpdate", "tool_call", V1_TOOL_CALL)
    | _tagged("sessionUpdate", "tool_call_update", V1_TOOL_CALL_UPDATE)
)
V1_PERMISSION_REQUEST = request(
    obj(
        {
            "sessionId": TEXT,
            "toolCall": V1_TOOL_CALL_UPDATE,
            "options": st.lists(_option(st.sampled_from(v1.KNOWN_OPTION_KINDS)), max_size=3),
        },
        OPT_META,
    ),
    st.none() | INT64 | TEXT,
)

V2_MESSAGES = V2_SESSION_UPDATE | V2_PERMISSION_REQUEST
V1_MESSAGES = V1_SESSION_UPDATE | V1_PERMISSION_REQUEST


def dumps(value: Json) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def examples(fraction: float) -> int:
    """A share of the loaded profile's example count (the slow properties run fewer)."""
    profile = settings.default
    assert profile is not None  # hypothesis always has a profile loaded
    return max(10, math.ceil(profile.max_examples * fraction))


def assert_schema_valid(message: Json, protocol: VersionName) -> None:
    violations = validate_message(message, protocol)
    assert violations == [], [str(v) for v in violations]


# ============================================================================================
# Valid messages: exact round trip, no diagnostics, schema-valid output


def _check_round_trip(message: Json, protocol: VersionName, typed: tuple[type, ...]) -> None:
    assert_schema_valid(message, protocol)  # the generators produce valid messages
    data = dumps(message)
    decoded = decode_message(data, version=protocol)
    assert decoded.diagnostics == ()
    assert isinstance(decoded.value, typed)
    out = encode(decoded.value)
    assert json.loads(out) == message
    assert_schema_valid(json.loads(out), protocol)
    # The dict route gives the same value.
    from_dict = decode_message(json.loads(data), version=protocol)
    assert from_dict.value == decoded.value or encode(from_dict.value) == out
    assert from_dict.diagnostics == ()
    # The lenient reader (forced by an unknown top-level key) agrees with the fast path.
    forced = decode_message(dumps({**message, "zzForce": 1}), version=protocol)
    assert forced.diagnostics == ()
    assert json.loads(encode(forced.value)) == {**message, "zzForce": 1}


@settings(max_examples=examples(1.0))
@given(V2_SESSION_UPDATE)
def test_v2_session_updates_round_trip(message: Json) -> None:
    _check_round_trip(message, "v2", (v2.SessionUpdateMessage,))


@settings(max_examples=examples(0.5))
@given(V2_PERMISSION_REQUEST)
def test_v2_permission_requests_round_trip(message: Json) -> None:
    _check_round_trip(message, "v2", (v2.PermissionRequestMessage,))


@settings(max_examples=examples(0.5))
@given(V1_SESSION_UPDATE)
def test_v1_session_updates_round_trip(message: Json) -> None:
    _check_round_trip(message, "v1", (v1.SessionUpdateMessage,))


@settings(max_examples=examples(0.3))
@given(V1_PERMISSION_REQUEST)
def test_v1_permission_requests_round_trip(message: Json) -> None:
    _check_round_trip(message, "v1", (v1.PermissionRequestMessage,))


@settings(max_examples=examples(0.3))
@given(st.lists(V2_MESSAGES, min_size=1, max_size=3))
def test_v2_batches_round_trip(batch: list[Json]) -> None:
    decoded = decode_message(dumps(batch))
    assert decoded.diagnostics == ()
    assert isinstance(decoded.value, Batch)
    assert json.loads(encode(decoded.value)) == batch


@settings(max_examples=examples(1.0))
@given(V2_TOOL_CALL_UPDATE)
def test_v2_tool_call_update_payload_round_trips_from_bytes_and_dict(payload: Json) -> None:
    for data in (dumps(payload), copy.deepcopy(payload)):
        decoded = decode(data, v2.ToolCallUpdate)
        assert decoded.diagnostics == ()
        assert json.loads(encode(decoded.value)) == payload


# ============================================================================================
# Mutated messages: DecodeError, or an idempotent salvage; never another exception


def _type_name(value: Json) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def _containers(value: Json, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        yield path
        for key, item in value.items():
            yield from _containers(item, (*path, key))
    elif isinstance(value, list):
        yield path
        for index, item in enumerate(value):
            yield from _containers(item, (*path, index))


def _at(value: Json, path: tuple[Any, ...]) -> Json:
    for part in path:
        value = value[part]
    return value


GARBAGE: S[Json] = JSON | st.sampled_from(
    [{"type": "diff"}, {"type": "terminal"}, {"operation": "move"}, {"type": "_x"}, {}, [], ""]
)


@st.composite
def mutated(draw: st.DrawFn, messages: S[Json]) -> Json:
    message = copy.deepcopy(draw(messages))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = list(_containers(message))
        target = _at(message, paths[draw(st.integers(min_value=0, max_value=len(paths) - 1))])
        if isinstance(target, dict) and target:
            keys = sorted(target)
            key = keys[draw(st.integers(min_value=0, max_value=len(keys) - 1))]
            if draw(st.booleans()):
                del target[key]  # drop a (maybe required) key
            else:
                original = _type_name(target[key])
                differs = cast(Callable[[Json], bool], lambda v, t=original: _type_name(v) != t)
                target[key] = draw(JSON.filter(differs))
        elif isinstance(target, list):
            index = draw(st.integers(min_value=0, max_value=len(target)))
            if target and index < len(target) and draw(st.booleans()):
                target[index] = copy.deepcopy(draw(GARBAGE))  # replace an element
            else:
                target.insert(index, copy.deepcopy(draw(GARBAGE)))  # insert garbage
    return message


def _reported_but_kept(reason: str) -> bool:
    """Diagnostics that do not salvage anything away (kept values): they come back each time."""
    return reason.endswith("; kept") or reason.endswith("; accepted")


def _check_salvage(message: Json, protocol: VersionName) -> None:
    try:
        decoded = decode_message(dumps(message), version=protocol)
    except DecodeError:
        return
    out = encode(decoded.value)
    again = decode_message(out, version=protocol)
    assert all(_reported_but_kept(d.reason) for d in again.diagnostics), again.diagnostics
    assert encode(again.value) == out  # a fixpoint: salvaging twice changes nothing
    # The dict route salvages the same way.
    from_dict = decode_message(json.loads(dumps(message)), version=protocol)
    assert encode(from_dict.value) == out
    assert from_dict.diagnostics == decoded.diagnostics
    # Strict mode: raises exactly when something was salvaged, else the same value.
    try:
        strict = decode_message(dumps(message), version=protocol, strict=True)
    except DecodeError as exc:
        assert decoded.diagnostics, "strict raised although nothing was salvaged"
        assert exc.path == decoded.diagnostics[0].path or isinstance(decoded.value, Batch)
    else:
        assert decoded.diagnostics == ()
        assert encode(strict.value) == out
    # A typed message's salvage is valid input for the schema, except values kept on purpose.
    if isinstance(decoded.value, JsonRpcMessage) or any(
        _reported_but_kept(d.reason) for d in decoded.diagnostics
    ):
        return
    assert_schema_valid(json.loads(out), protocol)


@settings(max_examples=examples(1.0))
@given(mutated(V2_MESSAGES))
def test_mutated_v2_messages_salvage_idempotently(message: Json) -> None:
    _check_salvage(message, "v2")


@settings(max_examples=examples(0.6))
@given(mutated(V1_MESSAGES))
def test_mutated_v1_messages_salvage_idempotently(message: Json) -> None:
    _check_salvage(message, "v1")


@settings(max_examples=examples(0.6))
@given(mutated(V2_TOOL_CALL_UPDATE))
def test_mutated_tool_call_update_payloads(payload: Json) -> None:
    try:
        decoded = decode(dumps(payload), v2.ToolCallUpdate)
    except DecodeError:
        return
    again = decode(encode(decoded.value), v2.ToolCallUpdate)
    assert again.diagnostics == ()
    assert again.value == decoded.value
    for diagnostic in decoded.diagnostics:
        assert diagnostic.path.startswith("$")


@pytest.mark.parametrize("protocol", ["v1", "v2"])
@settings(max_examples=examples(0.3))
@given(data=st.binary(max_size=60) | TEXT.map(str.encode))
def test_arbitrary_bytes_never_raise_anything_but_decode_error(
    protocol: VersionName, data: bytes
) -> None:
    try:
        decoded = decode_message(data, version=protocol)
    except DecodeError:
        return
    encode(decoded.value)


# --------------------------------------------------------------------------------------------
# duplicate_keys with the decoded value at hand (issue 19: no second parse when none repeats)


def _dumps_repeating(value: Json, target: tuple[Any, ...], key: str, first: Json) -> bytes:
    """``value`` as JSON text where the object at ``target`` has ``key`` twice: ``first``, then
    its own value (the one every reader keeps)."""

    def write(item: Json, path: tuple[Any, ...]) -> str:
        if isinstance(item, dict):
            pairs = [f"{json.dumps(k)}:{write(v, (*path, k))}" for k, v in item.items()]
            if path == target:
                pairs.insert(0, f"{json.dumps(key)}:{json.dumps(first)}")
            return "{" + ",".join(pairs) + "}"
        if isinstance(item, list):
            return "[" + ",".join(write(v, (*path, i)) for i, v in enumerate(item)) + "]"
        return json.dumps(item)

    return write(value, ()).encode()


@given(V2_MESSAGES | V1_MESSAGES, st.data())
def test_duplicate_keys_with_the_decoded_value_finds_what_the_full_parse_finds(
    message: Json, data: st.DataObject
) -> None:
    dicts = [path for path in _containers(message) if isinstance(_at(message, path), dict)]
    target = data.draw(st.sampled_from([path for path in dicts if _at(message, path)]))
    key = data.draw(st.sampled_from(sorted(_at(message, target))))
    first = data.draw(JSON)
    for text in (dumps(message), _dumps_repeating(message, target, key, first)):
        try:
            decoded = decode_message(text).value
        except DecodeError:
            continue
        assert duplicate_keys(text, decoded) == duplicate_keys(text)
    repeated = _dumps_repeating(message, target, key, first)
    assert duplicate_keys(repeated), repeated
