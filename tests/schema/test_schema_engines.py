"""jsonschema-rs (the fast engine) and jsonschema (the fallback) agree on every message.

``acp_toolcalls.schema`` asks the fast engine "valid or not" and explains invalid values with
jsonschema; a value the two judge differently would be a finding lost or a finding with nothing
to say. Mutated spec examples (values replaced by random JSON, keys dropped or added) must give
the same violations either way.
"""

from __future__ import annotations

import copy
import json
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_toolcalls.check import validate_message
from acp_toolcalls.models import VersionName
from acp_toolcalls.schema import _schemas as schema
from tests.schema.test_schema import V2_TERMINAL_UPDATES, V2_TOOL_CALL_UPDATE, V2_UPDATES_6_2

ENGINE = schema.ENGINE

# --- the engines agree ------------------------------------------------------------------------

_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
_SEEDS: list[tuple[VersionName, dict[str, Any]]] = [
    ("v2", json.loads(V2_TOOL_CALL_UPDATE)),
    *[
        (
            "v2",
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": "s", "update": u},
            },
        )
        for u in V2_UPDATES_6_2 + V2_TERMINAL_UPDATES
    ],
    (
        "v1",
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "s",
                "update": {
                    "sessionUpdate": "tool_call",
                    "toolCallId": "c",
                    "title": "t",
                    "kind": "read",
                },
            },
        },
    ),
]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            out += _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            out += _paths(child, (*prefix, index))
    return out


@st.composite
def _mutated(draw: st.DrawFn) -> tuple[VersionName, Any]:
    protocol, seed = draw(st.sampled_from(_SEEDS))
    message = copy.deepcopy(seed)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(message)))
        if not path:
            continue
        parent = message
        for part in path[:-1]:
            parent = parent[part]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "replace":
            parent[path[-1]] = draw(_JSON)
        elif action == "delete" and isinstance(parent, dict):
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.text(max_size=6))] = draw(_JSON)
    return protocol, message


@pytest.mark.skipif(schema._compiled_engine() is None, reason="jsonschema-rs is not installed")
@settings(max_examples=max(300, cast(settings, settings.default).max_examples))
@given(_mutated())
def test_both_engines_find_the_same_violations(case: tuple[VersionName, Any]) -> None:
    protocol, message = case
    try:
        schema.ENGINE = "jsonschema-rs"
        with_compiled = validate_message(message, protocol)
        schema.ENGINE = "jsonschema"
        assert validate_message(message, protocol) == with_compiled
    finally:
        schema.ENGINE = ENGINE


def test_the_corpus_is_valid_for_both_engines() -> None:
    # The mutations start from valid messages: both engines must say so of every one.
    for engine in ("jsonschema-rs", "jsonschema"):
        schema.ENGINE = engine
        try:
            for protocol, message in _SEEDS:
                assert validate_message(message, protocol) == [], (engine, message)
        finally:
            schema.ENGINE = ENGINE
