"""The wire models held to a schema document, field by field, every difference at once.

Rules this module owns (issue 28; tests/schema/test_models_vs_schema.py runs it on the bundled
schemas, overlays applied):

- Each wire struct of ``acp_toolcalls.v1`` / ``acp_toolcalls.v2`` (a ``WireStruct`` defined in
  the modules those roots re-export) models one schema object: the ``$defs`` entry of its own
  name, or what ``SOURCES`` says (a ``$defs`` entry of another name, a variant of a tagged
  union, or nothing: the JSON-RPC envelopes, an abstract base). An object's properties are its
  own merged with those of its ``allOf`` references; a union variant adds the union's shared
  properties. A tagged struct's discriminator is msgspec's tag, not a field: it is compared as
  the struct's tag, not as a property.
- Per struct: every property is a field (by wire name) and every field a property; and per
  field: required or optional, nullable (``null`` accepted), JSON type (``string``,
  ``integer``, ``number``, ``boolean``, ``object``, ``array``; any), the closed set of values
  of an enum (``Literal``/``Enum`` against ``enum``/``const`` branches, none when either side
  is open), the tags of a union of tagged structs against the union's ``const`` branches; an
  array field's items are compared the same way (``field[]``).
- ``compare(document, protocol)`` returns every difference, as ``Difference`` records sorted
  by struct and path; nothing stops at the first. Which differences are deliberate is the
  caller's table (tests/schema/test_models_vs_schema.py ``ALLOWED``), not this module's.
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec
import msgspec.inspect as mi

from ..models import VersionName
from ._checks import json_type as _json_type

ANY = frozenset({"string", "integer", "number", "boolean", "object", "array", "null"})

Source = str | tuple[str, str] | None
"""A ``$defs`` name; ``(union $defs name, tag)`` for a variant; ``None``: not compared."""

SOURCES: Mapping[tuple[str, str], tuple[Source, ...]] = {
    # Both versions: a session update variant is the ToolCallUpdate entry behind its tag.
    ("v2", "SessionToolCallUpdate"): ("ToolCallUpdate",),
    ("v1", "SessionToolCallUpdate"): ("ToolCallUpdate",),
    ("v2", "AddDiffChange"): (("DiffChange", "add"),),
    ("v2", "DeleteDiffChange"): (("DiffChange", "delete"),),
    ("v2", "ModifyDiffChange"): (("DiffChange", "modify"),),
    ("v2", "MoveDiffChange"): (("DiffChange", "move"),),
    ("v2", "CopyDiffChange"): (("DiffChange", "copy"),),
    ("v1", "CancelledPermissionOutcome"): (("RequestPermissionOutcome", "cancelled"),),
    # An abstract base (its five changes are compared) and the JSON-RPC envelopes, which the
    # schema tests check as whole messages.
    ("v2", "_DiffChangeBase"): (None,),
    ("v2", "SessionUpdateMessage"): (None,),
    ("v2", "PermissionRequestMessage"): (None,),
    ("v1", "SessionUpdateMessage"): (None,),
    ("v1", "PermissionRequestMessage"): (None,),
}
"""(version, struct name) -> what it models, where that is not its own ``$defs`` name."""


@dataclass(frozen=True, order=True)
class Difference:
    """One way a model differs from the schema."""

    protocol: str
    struct: str
    path: str
    """The field's wire name (``title``; ``content[]`` for its items), or ``""``."""
    aspect: str
    """``missing-field``, ``extra-field``, ``required``, ``nullable``, ``type``, ``enum``,
    ``variants``, ``tag`` or ``no-schema``."""
    schema: str
    model: str

    def __str__(self) -> str:
        where = f"{self.protocol}.{self.struct}" + (f".{self.path}" if self.path else "")
        return f"{where}: {self.aspect}: schema {self.schema}, model {self.model}"


# --------------------------------------------------------------------------------------------
# The schema side


class _Schema:
    def __init__(self, document: Mapping[str, Any]) -> None:
        self.defs: Mapping[str, Any] = document.get("$defs", {})

    def deref(self, node: Any) -> Any:
        """``node``, its local ``$ref`` followed (a missing entry: no constraint at all)."""
        seen = 0
        while isinstance(node, dict) and isinstance(node.get("$ref"), str) and seen < 64:
            node, seen = self.defs.get(node["$ref"].rsplit("/", 1)[-1], {}), seen + 1
        return node

    def parts(self, node: Any) -> list[Any]:
        """``node`` dereferenced and its ``allOf`` parts, dereferenced (the conjunction)."""
        node = self.deref(node)
        out = [node]
        for part in node.get("allOf", ()) if isinstance(node, dict) else ():
            out += self.parts(part)
        return out

    def branches(self, node: Any) -> list[Any]:
        for part in self.parts(node):
            found = part.get("anyOf") or part.get("oneOf") if isinstance(part, dict) else None
            if found:
                return list(found)
        return []

    def types(self, node: Any) -> frozenset[str]:
        """The JSON types a value of ``node`` may have (``ANY`` when unconstrained)."""
        result = ANY
        for part in self.parts(node):
            if not isinstance(part, dict):
                continue
            if "type" in part:
                named = part["type"]
                found = {named} if isinstance(named, str) else set(named)
                if "number" in found:
                    found.add("integer")
                result &= found
            if "const" in part:
                result &= {_json_type(part["const"])}
            if "enum" in part:
                result &= {_json_type(v) for v in part["enum"]}
            union = part.get("anyOf") or part.get("oneOf")
            if union:
                result &= frozenset().union(*(self.types(b) for b in union))
        return frozenset(result)

    def values(self, node: Any) -> frozenset[object] | None:
        """The closed set of non-null values of an enum, or ``None`` (open, or no enum)."""
        found: set[object] = set()
        for part in self.parts(node):
            if "const" in part:
                return frozenset({part["const"]})
            if "enum" in part:
                return frozenset(v for v in part["enum"] if v is not None)
        union = self.branches(node)
        if not union:
            return None
        for branch in union:
            if self.types(branch) == {"null"}:
                continue
            inner = self.values(branch)
            if inner is None:
                return None
            found |= inner
        return frozenset(found)

    def tags(self, node: Any, tag_field: str) -> frozenset[str]:
        """The ``tag_field`` consts of the branches of a union (one level of nesting)."""
        out: set[str] = set()
        for branch in self.branches(node):
            for part in self.parts(branch):
                const = part.get("properties", {}).get(tag_field, {}).get("const")
                if isinstance(const, str):
                    out.add(const)
            if not any("properties" in p for p in self.parts(branch)):
                out |= self.tags(branch, tag_field)
        return frozenset(out)

    def items(self, node: Any) -> Any:
        for part in self.parts(node):
            if "items" in part:
                return part["items"]
        for branch in self.branches(node):
            found = self.items(branch)
            if found is not None:
                return found
        return None

    def shape(self, source: Source) -> tuple[dict[str, Any], set[str]] | None:
        """(properties, required) of the object ``source`` names, ``allOf`` merged."""
        properties: dict[str, Any] = {}
        required: set[str] = set()
        if source is None:
            return None
        if isinstance(source, str):
            if source not in self.defs:
                return None
            nodes = self.parts(self.defs[source])
        else:
            union_name, tag = source
            union = self.defs.get(union_name)
            if union is None:
                return None
            nodes = [union]
            for branch in self.branches(union):
                parts = self.parts(branch)
                if any(p.get("properties", {}).get(k, {}).get("const") == tag
                       for p in parts for k in p.get("properties", {})):  # fmt: skip
                    nodes += parts
                    break
            else:
                return None
        for node in nodes:
            for name, prop in node.get("properties", {}).items():
                properties.setdefault(name, {"allOf": []})["allOf"].append(prop)
            required |= set(node.get("required", ()))
        return properties, required


# --------------------------------------------------------------------------------------------
# The model side


_SIMPLE: Mapping[type, frozenset[str]] = {
    mi.StrType: frozenset({"string"}),
    mi.IntType: frozenset({"integer"}),
    mi.FloatType: frozenset({"number", "integer"}),
    mi.BoolType: frozenset({"boolean"}),
    mi.NoneType: frozenset({"null"}),
    mi.DictType: frozenset({"object"}),
    mi.StructType: frozenset({"object"}),
    mi.TypedDictType: frozenset({"object"}),
    mi.DataclassType: frozenset({"object"}),
    mi.ListType: frozenset({"array"}),
    mi.TupleType: frozenset({"array"}),
    mi.VarTupleType: frozenset({"array"}),
    mi.SetType: frozenset({"array"}),
    mi.FrozenSetType: frozenset({"array"}),
    mi.AnyType: ANY,
    mi.RawType: ANY,
}
"""msgspec type -> the JSON types its values have."""


def _members(info: mi.Type) -> tuple[mi.Type, ...]:
    """The members of a union, nested unions flattened."""
    if not isinstance(info, mi.UnionType):
        return (info,)
    return tuple(member for inner in info.types for member in _members(inner))


def _model_types(info: mi.Type) -> frozenset[str]:
    out: set[str] = set()
    for member in _members(info):
        if isinstance(member, mi.LiteralType | mi.EnumType):
            out |= {_json_type(v) for v in _model_values(member) or ()}
        elif isinstance(member, mi.CustomType):
            out |= ANY  # a hook decides (lenient fields): any JSON value reaches it
        else:
            out |= _SIMPLE.get(type(member), ANY)
    return frozenset(out)


def _model_values(info: mi.Type) -> frozenset[object] | None:
    values: set[object] = set()
    for member in _members(info):
        if isinstance(member, mi.LiteralType):
            values |= set(member.values)
        elif isinstance(member, mi.EnumType):
            values |= {m.value for m in member.cls if isinstance(m, enum.Enum)}
        elif not isinstance(member, mi.NoneType):
            return None
    return frozenset(values) or None


def _model_tags(info: mi.Type) -> tuple[str | None, frozenset[str]]:
    field, tags = None, set()
    for member in _members(info):
        if isinstance(member, mi.StructType) and member.tag_field is not None:
            field = member.tag_field
            tags.add(str(member.tag))
    return field, frozenset(tags)


def _list_item(info: mi.Type) -> mi.Type | None:
    for member in _members(info):
        if isinstance(member, mi.ListType | mi.VarTupleType):
            return member.item_type
    return None


# --------------------------------------------------------------------------------------------
# Comparing


def _shown(values: object) -> str:
    if isinstance(values, frozenset | set):
        return "{" + ", ".join(sorted(map(str, values))) + "}" if values else "{}"
    return str(values)


_Found = tuple[str, str, str, str]
"""(path, aspect, schema side, model side) of one difference of a field."""


def _compare_value(schema: _Schema, node: Any, info: mi.Type, path: str) -> Iterator[_Found]:
    types, modelled = schema.types(node), _model_types(info)
    if ("null" in types) != ("null" in modelled):
        yield path, "nullable", str("null" in types).lower(), str("null" in modelled).lower()
    if types - {"null"} != modelled - {"null"}:
        yield path, "type", _shown(types - {"null"}), _shown(modelled - {"null"})
    values, model_values = schema.values(node), _model_values(info)
    if values is not None and values != model_values:
        yield path, "enum", _shown(values), "open" if model_values is None else _shown(model_values)
    tag_field, model_tags = _model_tags(info)
    if tag_field is not None:
        tags = schema.tags(node, tag_field)
        if tags != model_tags:
            yield path, "variants", _shown(tags), _shown(model_tags)
    item, schema_item = _list_item(info), schema.items(node)
    if item is not None and schema_item is not None and not path.endswith("[]"):
        yield from _compare_value(schema, schema_item, item, path + "[]")


def compare_struct(
    document: Mapping[str, Any], version: str, cls: type[msgspec.Struct]
) -> list[Difference]:
    """Every difference between ``cls`` and the schema object it models in ``document``."""
    schema = _Schema(document)
    name = cls.__name__
    sources = SOURCES.get((version, name), (name,))
    if sources == (None,):
        return []
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    out: list[Difference] = []

    def add(path: str, aspect: str, in_schema: str, in_model: str) -> None:
        out.append(Difference(version, name, path, aspect, in_schema, in_model))

    properties: dict[str, Any] = {}
    required: set[str] = set()
    for source in sources:
        shape = schema.shape(source)
        if shape is None:
            add("", "no-schema", f"no $defs entry for {source!r}", name)
            return out
        properties |= shape[0]
        required |= shape[1]
    if info.tag_field is not None:
        tag_node = properties.pop(info.tag_field, None)
        required.discard(info.tag_field)
        tag_values = schema.values(tag_node) if tag_node is not None else None
        if isinstance(sources[0], tuple):
            tag_values = frozenset({sources[0][1]})
        if tag_values is not None and tag_values != {info.tag}:
            add(info.tag_field, "tag", _shown(tag_values), str(info.tag))
    fields = {f.encode_name: f for f in info.fields}
    for missing in sorted(set(properties) - set(fields)):
        add(missing, "missing-field", "a property", "no field")
    for extra in sorted(set(fields) - set(properties)):
        add(extra, "extra-field", "no property", "a field")
    for wire, field in fields.items():
        if wire not in properties:
            continue
        if (wire in required) != field.required:
            add(wire, "required", str(wire in required).lower(), str(field.required).lower())
        for found in _compare_value(schema, properties[wire], field.type, wire):
            add(*found)
    return out


def wire_structs(version: VersionName) -> list[type[msgspec.Struct]]:
    """The wire structs of ``acp_toolcalls.<version>``, by name."""
    from .. import v1, v2
    from ..models import WireStruct

    module = {"v1": v1, "v2": v2}[version]
    defining = {
        cls.__module__ for name in module.__all__ if isinstance(cls := getattr(module, name), type)
    }
    found = {
        cls.__name__: cls
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if issubclass(cls, WireStruct) and cls.__module__ in defining and cls.__name__ != "Struct"
    }
    return [found[name] for name in sorted(found)]


def compare(document: Mapping[str, Any], version: VersionName) -> list[Difference]:
    """Every difference between the wire models of ``version`` and ``document``, sorted."""
    out: list[Difference] = []
    for cls in wire_structs(version):
        out += compare_struct(document, version, cls)
    return sorted(out)
