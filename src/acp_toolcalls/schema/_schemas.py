"""The bundled upstream ACP JSON Schemas: loading, the two engines, and the method table.

Rules this module owns:

- The schemas are the unmodified upstream files in ``acp_toolcalls/schemas/{v1,v2}/schema.json``
  and ``schema.unstable.json`` (draft 2020-12; ``_provenance``), read once by
  ``_checks.document``, which applies the overlays (``_overlay``); every function takes
  ``unstable`` to use the unstable file of the version. Validators are compiled once per
  (version, ``$defs`` entry) and cached. ``format`` is an annotation only; it is never
  asserted.
- Whether a value is valid is asked of jsonschema-rs when it is installed (``ENGINE``), else
  of jsonschema (a yes/no validator whose unions stop at the first error of each branch); the
  full jsonschema validator beside it explains invalid values (``_schema``).
- Requests and notifications are bound to one ``$defs`` entry by their ``method``: the table is
  derived from the schema's own ``x-method`` annotations, classified as request, notification or
  response by the envelope unions (``AgentRequest``, ``ClientNotification``, ``AgentResponse``,
  ...) that the root ``anyOf`` refers to. ``x-side`` is the side that handles the method (and
  answers it).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, cast

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError
from jsonschema.validators import extend
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from ..models import VersionName
from ._checks import document

MethodKind = Literal["request", "notification"]

_BASE_URI = "urn:acp-toolcalls:schema:"

_PathPart = str | int


@dataclass(frozen=True)
class MethodSpec:
    """What the schema says about one method."""

    method: str
    kind: MethodKind
    side: str
    """``x-side``: the side that handles the method: "agent", "client" or "protocol"."""
    params_def: str
    result_def: str | None
    """Response ``$defs`` entry for requests; ``None`` for notifications."""


# --------------------------------------------------------------------------------------------
# Schema loading and the method table


def _schema(version: VersionName, unstable: bool = False) -> Mapping[str, Any]:
    return document(version, unstable)  # read once, for the structure checks too


def _uri(version: VersionName, unstable: bool) -> str:
    return _BASE_URI + version + ("-unstable" if unstable else "")


@cache
def _registry(version: VersionName, unstable: bool = False) -> Any:
    resource = DRAFT202012.create_resource(_schema(version, unstable))
    return Registry().with_resource(_uri(version, unstable), resource)


def _any_of_fast(validator: Any, any_of: list[Any], instance: object, schema: object) -> Any:
    for subschema in any_of:
        if validator.evolve(schema=subschema).is_valid(instance):
            return
    yield ValidationError("is not valid under any of the given schemas")


def _one_of_fast(validator: Any, one_of: list[Any], instance: object, schema: object) -> Any:
    matches = 0
    for subschema in one_of:
        if validator.evolve(schema=subschema).is_valid(instance):
            matches += 1
            if matches > 1:
                break
    if matches != 1:
        yield ValidationError("is not valid under exactly one of the given schemas")


# Answers only "valid or not": a union stops at the first error of each branch instead of
# collecting every error of every failed branch (which makes a 20-branch union slow). Only an
# invalid value is then revalidated with the full validator, for the explanations.
_YesNoValidator: Any = extend(Draft202012Validator, {"anyOf": _any_of_fast, "oneOf": _one_of_fast})


def _compiled_engine() -> Any:
    """The jsonschema-rs module, or ``None`` where it is not installed (an optional,
    platform-dependent dependency: pyproject.toml)."""
    try:
        import jsonschema_rs
    except ImportError:
        return None
    return jsonschema_rs


ENGINE: Literal["jsonschema-rs", "jsonschema"] = (
    "jsonschema" if _compiled_engine() is None else "jsonschema-rs"
)
"""What answers "valid or not" for each value: jsonschema-rs (compiled, about 400 times
faster on these schemas: docs/benchmarks.md) when installed, else jsonschema. Every
explanation of an invalid value comes from jsonschema either way, so findings are the same."""


class _CompiledYesNo:
    """jsonschema-rs behind the ``is_valid`` of a jsonschema validator; a value it cannot take
    (nested too deep for it, say) is asked of jsonschema instead."""

    def __init__(self, compiled: Any, fallback: Any) -> None:
        self._compiled = compiled
        self._fallback = fallback

    def is_valid(self, value: object) -> bool:
        try:
            return bool(self._compiled.is_valid(value))
        except Exception:
            return bool(self._fallback.is_valid(value))


@cache
def _compiled_registry(version: VersionName, unstable: bool = False) -> Any:
    engine = _compiled_engine()
    return engine.Registry([(_uri(version, unstable), _schema(version, unstable))])


def _validators(version: VersionName, pointer: str, unstable: bool = False) -> tuple[Any, Any]:
    """(yes/no, full) validators for the subschema at ``pointer`` (``#/...``) of the file."""
    return _validators_of(version, pointer, ENGINE, unstable)


@cache
def _validators_of(
    version: VersionName, pointer: str, engine: str, unstable: bool = False
) -> tuple[Any, Any]:
    schema = _schema(version, unstable)
    _resolve_pointer(schema, pointer)  # fail early on a bad pointer
    wrapper = {"$ref": _uri(version, unstable) + pointer}
    registry = _registry(version, unstable)
    quick: Any = _YesNoValidator(wrapper, registry=registry)
    if engine == "jsonschema-rs":
        compiled = _compiled_engine().validator_for(
            {"$schema": schema.get("$schema"), **wrapper},
            registry=_compiled_registry(version, unstable),
            validate_formats=False,
        )
        quick = _CompiledYesNo(compiled, quick)
    return quick, Draft202012Validator(wrapper, registry=registry)


def _defs(version: VersionName, unstable: bool = False) -> Mapping[str, Any]:
    return cast("Mapping[str, Any]", _schema(version, unstable)["$defs"])


def _collect_refs(node: object) -> Iterator[str]:
    """Names of ``#/$defs/X`` entries referenced anywhere under ``node`` (not following refs)."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            yield ref.removeprefix("#/$defs/")
        for value in node.values():
            yield from _collect_refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _collect_refs(value)


def _ref_target(schema: Mapping[str, Any], node: Mapping[str, Any]) -> Mapping[str, Any]:
    """``node`` itself, or the def it wraps as ``{"allOf": [{"$ref": ...}]}``."""
    refs = list(_collect_refs(node))
    if len(refs) == 1 and "properties" not in node:
        return cast("Mapping[str, Any]", schema["$defs"][refs[0]])
    return node


@cache
def _method_table(version: VersionName, unstable: bool = False) -> dict[str, MethodSpec]:
    schema = _schema(version, unstable)
    defs = _defs(version, unstable)
    # def name -> kind, as classified by the envelope unions reachable from the root anyOf.
    kinds: dict[str, str] = {}
    for side_branch in schema.get("anyOf", []):
        titled = side_branch.get("anyOf")
        if isinstance(titled, list):
            envelopes = [(str(b.get("title", "")).lower(), _ref_target(schema, b)) for b in titled]
        else:  # the "VersionNameLevel" branch carries params directly
            is_request = "id" in side_branch.get("required", [])
            envelopes = [("request" if is_request else "notification", side_branch)]
        for kind, envelope in envelopes:
            if kind == "response":
                payload: object = [
                    branch.get("properties", {}).get("result")
                    for branch in envelope.get("anyOf", [])
                ]
            else:
                payload = envelope.get("properties", {}).get("params")
            for name in _collect_refs(payload):
                if "x-method" in defs.get(name, {}):
                    kinds[name] = kind
    # Defs with x-method that no union reaches: classify by their name (never seen upstream).
    for name, node in defs.items():
        if isinstance(node, dict) and "x-method" in node and name not in kinds:
            for suffix in ("Request", "Response", "Notification"):
                if name.endswith(suffix):
                    kinds[name] = suffix.lower()

    responses = {defs[n]["x-method"]: n for n, k in kinds.items() if k == "response"}
    table: dict[str, MethodSpec] = {}
    for name, kind in sorted(kinds.items()):
        if kind == "response":
            continue
        node = defs[name]
        method = str(node["x-method"])
        table[method] = MethodSpec(
            method=method,
            kind=cast("MethodKind", kind),
            side=str(node.get("x-side", "")),
            params_def=name,
            result_def=responses.get(method) if kind == "request" else None,
        )
    return table


def method_table(version: VersionName, *, unstable: bool = False) -> Mapping[str, MethodSpec]:
    """The methods the bundled schema of ``version`` (its unstable one with ``unstable``)
    defines, keyed by method name."""
    return dict(_method_table(version, unstable))


# --------------------------------------------------------------------------------------------
# JSON pointers into the bundled files


def _escape_pointer(part: _PathPart) -> str:
    return str(part).replace("~", "~0").replace("/", "~1")


def _resolve_pointer(schema: Mapping[str, Any], pointer: str) -> Any:
    node: Any = schema
    if pointer in ("#", ""):
        return node
    for raw in pointer.removeprefix("#/").split("/"):
        key = raw.replace("~1", "/").replace("~0", "~")
        node = node[int(key)] if isinstance(node, list) else node[key]
    return node
