"""The wire models against the bundled schemas, field by field (issue 28, part 2).

``acp_toolcalls.schema._models_vs_schema.compare`` lists every difference between the models
of a version and a schema document: a missing or extra field, required or optional, nullable,
JSON type, enum values, union variants, a struct's tag. On the bundled schemas (stable and
unstable, overlays applied) the only differences are those ``ALLOWED`` lists, each with its
reason; an allowance nothing needs any more is itself a failure. On a copy of the schema with
one field's nullability changed, the comparison names that field; with several changes, it
names all of them at once.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import pytest

from acp_toolcalls.check._lint import KNOWN_V2_SESSION_UPDATES
from acp_toolcalls.models import KNOWN_SESSION_UPDATES, UNSTABLE_SESSION_UPDATES
from acp_toolcalls.schema._checks import document
from acp_toolcalls.schema._models_vs_schema import Difference, compare, wire_structs
from acp_toolcalls.schema._tags import session_update_tags

ALLOWED: Mapping[tuple[str, str, str, str], str] = {
    # The models type only the tool-call surface of a session update: the v1 `tool_call` and
    # `tool_call_update` variants. Every other update the v1 schema defines is a known variant
    # carried opaquely (OpaqueSessionUpdate, `known_opaque` in models/_v1.py), kept and
    # proxied, never reported as unknown; test_the_untyped_updates_are_the_known_opaque_ones
    # holds that set to the schema's.
    ("v1", "SessionNotification", "update", "variants"): "other updates are opaque, known",
    # v2's SessionUpdate union is open (its `other` branch): the models type the tool-call and
    # terminal updates; every other update is an OpaqueSessionUpdate kept verbatim (D17: also
    # what a v1-only update on v2 is), and the lint knows the schema's names
    # (check._lint.KNOWN_V2_SESSION_UPDATES, held to the schema by tests/check/test_lint.py).
    ("v2", "UpdateSessionNotification", "update", "variants"): "other updates are opaque",
}
"""(protocol, struct, field path, aspect) -> why the models differ there on purpose."""

DOCUMENTS = [("v1", False), ("v1", True), ("v2", False), ("v2", True)]


def unexpected(differences: list[Difference]) -> list[str]:
    return [str(d) for d in differences if (d.protocol, d.struct, d.path, d.aspect) not in ALLOWED]


def schema_copy(protocol: Any) -> dict[str, Any]:
    return copy.deepcopy(dict(document(protocol)))


@pytest.mark.parametrize(("protocol", "unstable"), DOCUMENTS)
def test_the_models_match_the_bundled_schema(protocol: Any, unstable: bool) -> None:
    differences = compare(document(protocol, unstable), protocol)
    assert unexpected(differences) == []
    used = {(d.protocol, d.struct, d.path, d.aspect) for d in differences}
    stale = [key for key in ALLOWED if key[0] == protocol and key not in used]
    assert stale == [], "allowances nothing needs any more"


def test_every_wire_struct_is_compared() -> None:
    # A model without a $defs entry of its name, not mapped in SOURCES, is a `no-schema`
    # difference: adding one is a conscious decision.
    assert len(wire_structs("v1")) >= 20 and len(wire_structs("v2")) >= 40
    names = {cls.__name__ for cls in wire_structs("v2")}
    assert {"ToolCallUpdate", "SessionReference", "Diff", "RequestPermissionRequest"} <= names


@pytest.mark.parametrize(("protocol", "unstable"), DOCUMENTS)
def test_the_untyped_updates_are_the_known_opaque_ones(protocol: Any, unstable: bool) -> None:
    typed = {"v1": {"tool_call", "tool_call_update"}}.get(
        protocol,
        {"tool_call_update", "tool_call_content_chunk", "terminal_update", "terminal_output_chunk"},
    )
    opaque = session_update_tags(protocol, unstable) - typed
    if protocol == "v1":
        known = KNOWN_SESSION_UPDATES | (UNSTABLE_SESSION_UPDATES["v1"] if unstable else set())
    else:
        known = KNOWN_V2_SESSION_UPDATES | (UNSTABLE_SESSION_UPDATES["v2"] if unstable else set())
    assert opaque == known - typed


@pytest.mark.parametrize("protocol", ["v1", "v2"])
def test_a_field_made_non_nullable_is_named(protocol: Any) -> None:
    changed = schema_copy(protocol)
    title = changed["$defs"]["ToolCallUpdate"]["properties"]["title"]
    assert title["type"] == ["string", "null"]
    title["type"] = "string"
    found = unexpected(compare(changed, protocol))
    assert f"{protocol}.ToolCallUpdate.title: nullable: schema false, model true" in found
    assert all(".title: nullable" in line for line in found), found  # nothing else


def test_every_difference_is_reported_at_once() -> None:
    changed = schema_copy("v2")
    defs = changed["$defs"]
    defs["ToolCallUpdate"]["properties"]["title"]["type"] = "string"  # nullability
    defs["ToolCallUpdate"]["required"].append("status")  # required
    defs["ToolCallLocation"]["properties"]["path"] = {"type": "integer"}  # type
    defs["ToolCallUpdate"]["properties"]["newField"] = {"type": "string"}  # a new property
    del defs["Terminal"]["properties"]["terminalId"]  # a removed property
    options = defs["PermissionOptionKind"]
    options.get("anyOf", options.get("oneOf")).insert(0, {"type": "string", "const": "maybe"})
    content = defs["ToolCallContent"]["anyOf"]
    chart = {"type": "object", "properties": {"type": {"type": "string", "const": "chart"}}}
    content.insert(0, {**chart, "required": ["type"]})
    found = unexpected(compare(changed, "v2"))
    for expected in (
        "v2.ToolCallUpdate.title: nullable: schema false, model true",
        "v2.ToolCallUpdate.status: required: schema true, model false",
        "v2.ToolCallLocation.path: type: schema {integer}, model {string}",
        "v2.ToolCallUpdate.newField: missing-field: schema a property, model no field",
        "v2.Terminal.terminalId: extra-field: schema no property, model a field",
        "v2.ToolCallUpdate.content[]: variants: schema {chart, content, diff, session, terminal}, "
        "model {content, diff, session, terminal}",
    ):
        assert expected in found, (expected, found)


def test_a_closed_enum_with_another_value_is_named() -> None:
    changed = schema_copy("v1")
    status = changed["$defs"]["ToolCallStatus"]
    status["oneOf"] = [b for b in status["oneOf"] if b.get("const") != "failed"]
    found = unexpected(compare(changed, "v1"))
    assert (
        "v1.ToolCallUpdate.status: enum: schema {completed, in_progress, pending}, "
        "model {completed, failed, in_progress, pending}"
    ) in found


def test_a_model_without_its_schema_entry_is_named() -> None:
    changed = schema_copy("v2")
    del changed["$defs"]["SessionReference"]  # what the overlay adds
    found = unexpected(compare(changed, "v2"))
    assert any(line.startswith("v2.SessionReference: no-schema:") for line in found), found
