"""The leniency markers on the wire models agree with the bundled upstream schemas.

For each wire struct of ``acp_toolcalls.v1`` / ``acp_toolcalls.v2`` the test resolves the schema
object it models (its ``$defs`` entry, with ``allOf`` references merged in, or for a union variant
the union's shared properties plus the variant's payload) and checks, property by property:

- ``x-deserialize-default-on-error`` in the schema <=> ``DEFAULT_ON_ERROR`` on the annotation;
- ``x-deserialize-skip-invalid-items`` in the schema <=> ``SKIP_INVALID_ITEMS`` on the annotation;
- required in the schema <=> required in the struct;
- every schema property is a struct field (by its wire name) and every field is a schema property.

The discriminator of a tagged struct (``type``, ``operation``, ``sessionUpdate``...) is not a struct
field (msgspec writes the tag itself), so it is left out of the comparison.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Iterator, Mapping
from typing import Any

import msgspec
import pytest

from acp_toolcalls import v1, v2
from acp_toolcalls.models import DEFAULT_ON_ERROR, SKIP_INVALID_ITEMS, WireStruct
from acp_toolcalls.schema._checks import document

DEFAULT_KEY = "x-deserialize-default-on-error"
SKIP_KEY = "x-deserialize-skip-invalid-items"


def _schema(protocol: str) -> Mapping[str, Any]:
    # As the library loads it: with the overlays (acp_toolcalls.schema._overlay).
    return document(protocol)


SCHEMAS = {"v1": _schema("v1"), "v2": _schema("v2")}


# What each struct models: a list of "sources" merged together. A source is a `$defs` name, or
# ("union", <union $defs name>, <tag value>) for a variant whose payload is given inline or by
# reference inside the union (the union's own top-level properties are shared by all variants).
DIFF_CHANGE_PATH = [("union", "DiffChange", "add")]
SOURCES: dict[tuple[str, str], list[Any] | None] = {
    # v2
    ("v2", "SessionToolCallUpdate"): ["ToolCallUpdate"],
    ("v2", "AddDiffChange"): DIFF_CHANGE_PATH,
    ("v2", "DeleteDiffChange"): [("union", "DiffChange", "delete")],
    ("v2", "ModifyDiffChange"): [("union", "DiffChange", "modify")],
    ("v2", "MoveDiffChange"): [("union", "DiffChange", "move")],
    ("v2", "CopyDiffChange"): [("union", "DiffChange", "copy")],
    ("v2", "_DiffChangeBase"): None,  # abstract base, covered by the five changes above
    ("v2", "SessionUpdateMessage"): None,  # JSON-RPC envelopes: checked by the schema tests
    ("v2", "PermissionRequestMessage"): None,
    # v1
    ("v1", "SessionToolCallUpdate"): ["ToolCallUpdate"],
    ("v1", "CancelledPermissionOutcome"): [("union", "RequestPermissionOutcome", "cancelled")],
    ("v1", "SessionUpdateMessage"): None,
    ("v1", "PermissionRequestMessage"): None,
}


def _deref(protocol: str, node: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = node.get("$ref")
    if ref is None:
        return node
    prefix = "#/$defs/"
    assert ref.startswith(prefix), ref
    target: Mapping[str, Any] = SCHEMAS[protocol]["$defs"][ref[len(prefix) :]]
    return target


class ObjectShape:
    """Properties (by wire name) and required names of one schema object, ``allOf`` merged."""

    def __init__(self) -> None:
        self.properties: dict[str, Mapping[str, Any]] = {}
        self.required: set[str] = set()

    def add(self, protocol: str, node: Mapping[str, Any]) -> None:
        node = _deref(protocol, node)
        for key, prop in node.get("properties", {}).items():
            merged = dict(self.properties.get(key, {}))
            merged.update(prop)
            self.properties[key] = merged
        self.required |= set(node.get("required", ()))
        for part in node.get("allOf", ()):
            self.add(protocol, part)


def _branches(union: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    branches: list[Mapping[str, Any]] = union.get("anyOf") or union.get("oneOf") or []
    return branches


def _union_variant(protocol: str, union_name: str, tag: str) -> tuple[ObjectShape, str]:
    union = SCHEMAS[protocol]["$defs"][union_name]
    shape = ObjectShape()
    # Properties declared next to the anyOf are shared by every variant (DiffChange).
    for key, prop in union.get("properties", {}).items():
        shape.properties[key] = prop
    shape.required |= set(union.get("required", ()))
    for branch in _branches(union):
        for key, prop in branch.get("properties", {}).items():
            if prop.get("const") == tag:
                shape.add(protocol, branch)
                return shape, key
    raise AssertionError(f"no variant {tag!r} in {protocol} $defs.{union_name}")


def _shape_for(protocol: str, cls: type[WireStruct]) -> ObjectShape | None:
    sources = SOURCES.get((protocol, cls.__name__), [cls.__name__])
    if sources is None:
        return None
    shape = ObjectShape()
    tag_field = cls.__struct_config__.tag_field
    for source in sources:
        if isinstance(source, tuple):
            _, union_name, tag = source
            part, tag_key = _union_variant(protocol, union_name, tag)
            assert tag_key == tag_field, (cls, tag_key, tag_field)
            shape.properties.update(part.properties)
            shape.required |= part.required
        else:
            shape.add(protocol, SCHEMAS[protocol]["$defs"][source])
    if tag_field is not None:  # the discriminator is msgspec's tag, not a field
        shape.properties.pop(tag_field, None)
        shape.required.discard(tag_field)
    return shape


def _wire_structs() -> Iterator[tuple[str, type[WireStruct]]]:
    for module, protocol in ((v2, "v2"), (v1, "v1")):
        # The modules of acp_toolcalls.models that define this version's models (issue 18).
        defining = {
            cls.__module__
            for name in module.__all__
            if isinstance(cls := getattr(module, name), type)
        }
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if (
                issubclass(cls, WireStruct)
                and cls.__module__ in defining
                and cls.__name__ != "Struct"
            ):
                yield protocol, cls


STRUCTS = sorted(_wire_structs(), key=lambda pc: (pc[0], pc[1].__name__))
CHECKED = [(p, c) for p, c in STRUCTS if _shape_for(p, c) is not None]


def _field_extras(cls: type[WireStruct]) -> dict[str, tuple[Any, ...]]:
    """Annotation metadata of every field, by wire name (nested ``Annotated`` flattened)."""
    hints = typing.get_type_hints(cls, include_extras=True)
    out: dict[str, tuple[Any, ...]] = {}
    for info in msgspec.structs.fields(cls):
        out[info.encode_name] = tuple(_metadata(hints[info.name]))
    return out


def _metadata(tp: Any) -> Iterator[Any]:
    if typing.get_origin(tp) is typing.Annotated:
        inner, *extras = typing.get_args(tp)
        yield from extras
        yield from _metadata(inner)


def _ids(pc: tuple[str, type[WireStruct]]) -> str:
    return f"{pc[0]}.{pc[1].__name__}"


def test_every_struct_is_checked_or_listed_as_exempt() -> None:
    # Adding a model without a schema counterpart must be a conscious decision.
    for protocol, cls in STRUCTS:
        if (protocol, cls.__name__) in SOURCES:
            continue
        assert cls.__name__ in SCHEMAS[protocol]["$defs"], (
            f"{protocol}.{cls.__name__} has no $defs entry; map it in SOURCES"
        )
    assert len(CHECKED) >= 50


@pytest.mark.parametrize(("protocol", "cls"), CHECKED, ids=[_ids(pc) for pc in CHECKED])
def test_fields_match_schema_properties(protocol: str, cls: type[WireStruct]) -> None:
    shape = _shape_for(protocol, cls)
    assert shape is not None
    fields = {info.encode_name for info in msgspec.structs.fields(cls)}
    assert sorted(set(shape.properties) - fields) == [], "schema properties missing from struct"
    assert sorted(fields - set(shape.properties)) == [], "struct fields not in the schema"


@pytest.mark.parametrize(("protocol", "cls"), CHECKED, ids=[_ids(pc) for pc in CHECKED])
def test_required_fields_match(protocol: str, cls: type[WireStruct]) -> None:
    shape = _shape_for(protocol, cls)
    assert shape is not None
    required = {info.encode_name for info in msgspec.structs.fields(cls) if info.required}
    assert required == shape.required


@pytest.mark.parametrize(("protocol", "cls"), CHECKED, ids=[_ids(pc) for pc in CHECKED])
def test_default_on_error_markers_match(protocol: str, cls: type[WireStruct]) -> None:
    shape = _shape_for(protocol, cls)
    assert shape is not None
    extras = _field_extras(cls)
    in_schema = {k for k, p in shape.properties.items() if p.get(DEFAULT_KEY) is True}
    on_model = {k for k, marks in extras.items() if DEFAULT_ON_ERROR in marks}
    assert sorted(in_schema - on_model) == [], "schema default-on-error without model marker"
    assert sorted(on_model - in_schema) == [], "model DEFAULT_ON_ERROR without schema marker"


@pytest.mark.parametrize(("protocol", "cls"), CHECKED, ids=[_ids(pc) for pc in CHECKED])
def test_skip_invalid_items_markers_match(protocol: str, cls: type[WireStruct]) -> None:
    shape = _shape_for(protocol, cls)
    assert shape is not None
    extras = _field_extras(cls)
    in_schema = {k for k, p in shape.properties.items() if p.get(SKIP_KEY) is True}
    on_model = {k for k, marks in extras.items() if SKIP_INVALID_ITEMS in marks}
    assert sorted(in_schema - on_model) == [], "schema skip-invalid-items without model marker"
    assert sorted(on_model - in_schema) == [], "model SKIP_INVALID_ITEMS without schema marker"


@pytest.mark.parametrize(("protocol", "cls"), CHECKED, ids=[_ids(pc) for pc in CHECKED])
def test_nullable_in_schema_iff_none_allowed(protocol: str, cls: type[WireStruct]) -> None:
    """A property that admits JSON ``null`` is a field that keeps ``None`` (and vice versa).

    Otherwise a schema-valid ``null`` would be salvaged away (and not re-encoded), or the model
    would let a sender put a ``null`` the schema rejects.
    """
    shape = _shape_for(protocol, cls)
    assert shape is not None
    hints = typing.get_type_hints(cls)
    mismatched = []
    for info in msgspec.structs.fields(cls):
        prop = shape.properties[info.encode_name]
        schema_null = _admits_null(protocol, prop)
        model_null = _allows_none(hints[info.name])
        if schema_null != model_null:
            mismatched.append((info.encode_name, schema_null, model_null))
    assert mismatched == [], "(property, schema admits null, model allows None)"


def _admits_null(protocol: str, prop: Mapping[str, Any]) -> bool:
    if not set(prop) & {"type", "$ref", "const", "enum", "anyOf", "oneOf", "allOf"}:
        return True  # no type constraint at all (rawInput): any JSON value, null included
    if "$ref" in prop:
        return _admits_null(protocol, _deref(protocol, prop))
    kind = prop.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if kind is not None:
        return False
    if "const" in prop:
        return prop["const"] is None
    for key in ("anyOf", "oneOf"):
        if key in prop:
            return any(_admits_null(protocol, branch) for branch in prop[key])
    if "enum" in prop:
        return None in prop["enum"]
    return all(_admits_null(protocol, part) for part in prop["allOf"])


def _allows_none(tp: Any) -> bool:
    if tp is Any:
        return True
    if tp is type(None):
        return True
    return any(_allows_none(arg) for arg in typing.get_args(tp) if arg is not Ellipsis)


def test_markers_are_checked_at_all() -> None:
    # Guard against a resolver bug that would make every comparison above vacuous.
    default_on_error = skip = 0
    for protocol, cls in CHECKED:
        shape = _shape_for(protocol, cls)
        assert shape is not None
        default_on_error += sum(p.get(DEFAULT_KEY) is True for p in shape.properties.values())
        skip += sum(p.get(SKIP_KEY) is True for p in shape.properties.values())
    assert default_on_error > 100
    assert skip >= 8


# --------------------------------------------------------------------------------------------
# Known enum values and union tags agree with the schema


def _consts(protocol: str, def_name: str, key: str | None = None) -> set[str]:
    """The ``const`` values of a union/enum's branches (of property ``key`` for object unions)."""
    out: set[str] = set()
    for branch in _branches(SCHEMAS[protocol]["$defs"][def_name]):
        node = branch["properties"][key] if key is not None else branch
        if "const" in node:
            out.add(node["const"])
    return out


def _union_tags(union: Any) -> set[str]:
    """The tags of the structs in a runtime union annotation (``Annotated`` stripped)."""
    inner = typing.get_args(union)[0] if typing.get_origin(union) is typing.Annotated else union
    tags = set()
    for member in typing.get_args(inner):
        tag = member.__struct_config__.tag
        assert isinstance(tag, str)
        tags.add(tag)
    return tags


@pytest.mark.parametrize(
    ("union", "def_name", "key"),
    [
        (v2.ToolCallContent, "ToolCallContent", "type"),
        (v2.ContentBlock, "ContentBlock", "type"),
        (v2.DiffChange, "DiffChange", "operation"),
        (v2.PermissionSubject, "RequestPermissionSubject", "type"),
        (v2.PermissionOutcome, "RequestPermissionOutcome", "outcome"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_v2_open_union_knows_exactly_the_schema_variants(
    union: Any, def_name: str, key: str
) -> None:
    assert _union_tags(union) == _consts("v2", def_name, key)


@pytest.mark.parametrize(
    ("union", "def_name", "key"),
    [
        (v1.ToolCallContent, "ToolCallContent", "type"),
        (v1.ContentBlock, "ContentBlock", "type"),
        (v1.PermissionOutcome, "RequestPermissionOutcome", "outcome"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_v1_closed_union_knows_exactly_the_schema_variants(
    union: Any, def_name: str, key: str
) -> None:
    assert _union_tags(union) == _consts("v1", def_name, key)


def test_v2_session_update_tool_call_variants_are_schema_variants() -> None:
    known = _consts("v2", "SessionUpdate", "sessionUpdate")
    typed = _union_tags(v2.SessionUpdate)
    assert typed == {
        "tool_call_update",
        "tool_call_content_chunk",
        "terminal_update",
        "terminal_output_chunk",
    }
    assert typed <= known
    assert "tool_call" not in known  # removed in v2: it must stay an opaque update (D17)


def test_v1_session_update_variants_match_the_schema() -> None:
    assert _consts("v1", "SessionUpdate", "sessionUpdate") == set(v1.KNOWN_SESSION_UPDATES)
    assert _union_tags(v1.SessionUpdate) == {"tool_call", "tool_call_update"}


@pytest.mark.parametrize(
    ("known", "def_name"),
    [
        ({m.value for m in v2.ToolKind}, "ToolKind"),
        ({m.value for m in v2.ToolCallStatus}, "ToolCallStatus"),
        ({m.value for m in v2.PermissionOptionKind}, "PermissionOptionKind"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_v2_enum_members_are_the_schema_values(known: set[str], def_name: str) -> None:
    assert known == _consts("v2", def_name)


@pytest.mark.parametrize(
    ("known", "def_name"),
    [
        (v1.KNOWN_KINDS, "ToolKind"),
        (v1.KNOWN_STATUSES, "ToolCallStatus"),
        (v1.KNOWN_OPTION_KINDS, "PermissionOptionKind"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_v1_closed_enums_are_the_schema_values(known: tuple[str, ...], def_name: str) -> None:
    assert set(known) == _consts("v1", def_name)


def test_v2_final_statuses() -> None:
    assert {"completed", "failed", "cancelled"} == v2.FINAL_STATUSES
