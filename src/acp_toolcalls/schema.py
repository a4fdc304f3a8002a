"""Validation of JSON-RPC messages against the bundled upstream ACP JSON Schemas.

Rules this module owns:

- The schemas are the unmodified upstream files in ``acp_toolcalls/schemas/{v1,v2}/schema.json``
  (draft 2020-12). Validators are compiled once per (protocol, ``$defs`` entry) and cached.
  ``format`` is an annotation only; it is never asserted.
- Whether a value is valid is asked of jsonschema-rs when it is installed (``ENGINE``), else
  of jsonschema; only an invalid value is then explained, always by jsonschema, so the
  violations (messages, paths, schema pointers) do not depend on the engine.
- A message is never validated against the schema's root ``anyOf`` (its errors are useless).
  The envelope is checked first: a JSON object, ``jsonrpc == "2.0"``, a string ``method``, a
  ``RequestId`` ``id`` on requests, and for responses an ``id`` plus exactly one of
  ``result``/``error`` (JSON-RPC 2.0 forbids both; the upstream schema does not say so).
- Requests and notifications are bound to one ``$defs`` entry by their ``method``: the table is
  derived from the schema's own ``x-method`` annotations, classified as request, notification or
  response by the envelope unions (``AgentRequest``, ``ClientNotification``, ``AgentResponse``,
  ...) that the root ``anyOf`` refers to. ``x-side`` is the side that handles the method (and
  answers it). ``params`` is validated against that entry; a missing or ``null`` ``params`` is
  accepted only when the entry accepts ``{}``. A request method sent without ``id``, or a
  notification method sent with one, is reported.
- A response's ``result`` is validated only when the caller names the method of the request it
  answers (``response_method``); ``error`` is always validated against ``$defs.Error``.
- Unknown methods (including ``_``-prefixed extension methods) get the envelope checks only.
- Failed unions (``anyOf``/``oneOf``) are explained, not reported whole: branches that fail on
  their discriminator ``const``, on the instance's JSON type, or on a catch-all branch's ``not``
  are discarded; the remaining branch's own errors are reported. When no branch is left, one
  line lists the accepted values/types. Every error is reported, deduplicated, sorted by path.
- Violation paths are JSON paths (``$``, ``.key``, ``[index]``, ``["odd key"]``); schema paths
  are JSON pointers into the bundled file with ``$ref`` resolved
  (``#/$defs/ToolCallUpdate/properties/title/type``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any, Literal, cast

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match
from jsonschema.validators import extend
from referencing import Registry
from referencing.jsonschema import DRAFT202012

__all__ = [
    "ENGINE",
    "MethodSpec",
    "Protocol",
    "SchemaViolation",
    "method_table",
    "validate_message",
    "validate_payload",
]

Protocol = Literal["v1", "v2"]
MethodKind = Literal["request", "notification"]

_PROTOCOLS: tuple[Protocol, ...] = ("v1", "v2")
_BASE_URI = "urn:acp-toolcalls:schema:"
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_MAX_MESSAGE = 300
_MAX_INSTANCE = 60

_PathPart = str | int
_Path = tuple[_PathPart, ...]


@dataclass(frozen=True)
class SchemaViolation:
    """One way a message does not match the schema."""

    path: str
    """JSON path of the offending value in the message, e.g. ``$.params.update.title``."""
    message: str
    """One human-readable line, e.g. ``42 is not of type 'string', 'null'``."""
    schema_path: str
    """JSON pointer of the failing keyword in the bundled schema file."""

    def __str__(self) -> str:
        return f"{self.path}: {self.message} [{self.schema_path}]"


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


@cache
def _schema(protocol: Protocol) -> Mapping[str, Any]:
    if protocol not in _PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; expected 'v1' or 'v2'")
    resource = files("acp_toolcalls") / "schemas" / protocol / "schema.json"
    loaded = json.loads(resource.read_text(encoding="utf-8"))
    if not isinstance(loaded, dict):
        raise ValueError(f"bundled {protocol} schema is not a JSON object")
    return loaded


@cache
def _registry(protocol: Protocol) -> Any:
    resource = DRAFT202012.create_resource(_schema(protocol))
    return Registry().with_resource(_BASE_URI + protocol, resource)


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
def _compiled_registry(protocol: Protocol) -> Any:
    engine = _compiled_engine()
    return engine.Registry([(_BASE_URI + protocol, _schema(protocol))])


def _validators(protocol: Protocol, pointer: str) -> tuple[Any, Any]:
    """(yes/no, full) validators for the subschema at ``pointer`` (``#/...``) of the file."""
    return _validators_of(protocol, pointer, ENGINE)


@cache
def _validators_of(protocol: Protocol, pointer: str, engine: str) -> tuple[Any, Any]:
    _resolve_pointer(_schema(protocol), pointer)  # fail early on a bad pointer
    wrapper = {"$ref": _BASE_URI + protocol + pointer}
    registry = _registry(protocol)
    quick: Any = _YesNoValidator(wrapper, registry=registry)
    if engine == "jsonschema-rs":
        compiled = _compiled_engine().validator_for(
            {"$schema": _schema(protocol).get("$schema"), **wrapper},
            registry=_compiled_registry(protocol),
            validate_formats=False,
        )
        quick = _CompiledYesNo(compiled, quick)
    return quick, Draft202012Validator(wrapper, registry=registry)


def _defs(protocol: Protocol) -> Mapping[str, Any]:
    return cast("Mapping[str, Any]", _schema(protocol)["$defs"])


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
def _method_table(protocol: Protocol) -> dict[str, MethodSpec]:
    schema = _schema(protocol)
    defs = _defs(protocol)
    # def name -> kind, as classified by the envelope unions reachable from the root anyOf.
    kinds: dict[str, str] = {}
    for side_branch in schema.get("anyOf", []):
        titled = side_branch.get("anyOf")
        if isinstance(titled, list):
            envelopes = [(str(b.get("title", "")).lower(), _ref_target(schema, b)) for b in titled]
        else:  # the "ProtocolLevel" branch carries params directly
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


def method_table(protocol: Protocol) -> Mapping[str, MethodSpec]:
    """The methods the bundled schema of ``protocol`` defines, keyed by method name."""
    return dict(_method_table(protocol))


# --------------------------------------------------------------------------------------------
# Rendering paths, schema pointers and messages


def _json_path(path: Iterable[_PathPart]) -> str:
    out = ["$"]
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _IDENTIFIER.match(part):
            out.append(f".{part}")
        else:
            out.append(f"[{json.dumps(part, ensure_ascii=False)}]")
    return "".join(out)


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


def _walk_schema_path(
    schema: Mapping[str, Any], node: Any, pointer: str, rest: Sequence[_PathPart]
) -> str | None:
    """Follow a jsonschema ``schema_path`` (which omits ``$ref`` hops) to a resolved pointer."""
    if not rest:
        return pointer
    key = rest[0]
    if isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
        found = _walk_schema_path(schema, node[key], f"{pointer}/{key}", rest[1:])
        if found is not None:
            return found
    elif isinstance(node, dict) and isinstance(key, str) and key in node:
        found = _walk_schema_path(schema, node[key], f"{pointer}/{_escape_pointer(key)}", rest[1:])
        if found is not None:
            return found
    if isinstance(node, dict) and isinstance(node.get("$ref"), str):
        ref = str(node["$ref"])
        target = ref[ref.index("#") :] if "#" in ref else "#"
        return _walk_schema_path(schema, _resolve_pointer(schema, target), target, rest)
    return None


def _schema_pointer(protocol: Protocol, start: str, schema_path: Iterable[_PathPart]) -> str:
    schema = _schema(protocol)
    rest = list(schema_path)
    found = _walk_schema_path(schema, _resolve_pointer(schema, start), start, rest)
    if found is not None:
        return found
    return start + "".join(f"/{_escape_pointer(p)}" for p in rest)  # pragma: no cover


def _short(instance: object) -> str:
    """A short rendering of a JSON value: Python repr for strings and numbers, JSON otherwise."""
    if isinstance(instance, str) or (
        isinstance(instance, int | float) and not isinstance(instance, bool)
    ):
        text = repr(instance)
    else:
        try:
            text = json.dumps(instance, ensure_ascii=False, separators=(", ", ": "))
        except (TypeError, ValueError):
            text = repr(instance)
    if len(text) > _MAX_INSTANCE:
        closing = text[-1] if text[-1] in "]}'\"" else ""
        text = text[: _MAX_INSTANCE - 2] + "…" + closing
    return text


def _clip(message: str) -> str:
    message = " ".join(message.split())
    return message if len(message) <= _MAX_MESSAGE else message[: _MAX_MESSAGE - 1] + "…"


def _readable(error: ValidationError) -> str:
    """jsonschema's message, with the (possibly huge) instance repr shortened."""
    message = str(error.message)
    instance = error.instance
    try:
        prefix = repr(instance)
    except Exception:  # pragma: no cover - repr of decoded JSON does not fail
        prefix = ""
    if prefix and message.startswith(prefix):
        message = _short(instance) + message[len(prefix) :]
    return _clip(message)


# --------------------------------------------------------------------------------------------
# Explaining errors


@dataclass(frozen=True)
class _Found:
    path: _Path
    message: str
    schema_path: _Path  # relative to the validator's schema


def _rel_path(error: ValidationError) -> _Path:
    return tuple(error.relative_path)


def _branch_of(error: ValidationError) -> int:
    first = error.relative_schema_path[0] if error.relative_schema_path else -1
    return first if isinstance(first, int) else -1


def _is_mismatch(error: ValidationError) -> bool:
    """Whether a branch error says "this branch is not the one meant", not "this is broken"."""
    depth = len(error.relative_path)
    if depth == 0 and error.validator in ("type", "const", "enum", "not"):
        return True
    if depth == 0 and error.validator in ("anyOf", "oneOf") and error.context:
        return _alternatives(error.context) is not None  # a nested union of plain values
    return depth == 1 and error.validator in ("const", "enum")


def _alternatives(errors: Sequence[ValidationError]) -> tuple[list[object], list[str]] | None:
    """Accepted consts and types of a union whose every branch failed at the top level."""
    consts: list[object] = []
    types: list[str] = []
    by_branch: dict[int, list[ValidationError]] = {}
    for error in errors:
        by_branch.setdefault(_branch_of(error), []).append(error)
    for branch_errors in by_branch.values():
        if any(len(e.relative_path) for e in branch_errors):
            return None
        branch_consts: list[object] = []
        branch_types: list[str] = []
        for error in branch_errors:
            if error.validator == "const":
                branch_consts.append(error.validator_value)
            elif error.validator == "enum":
                branch_consts.extend(error.validator_value)
            elif error.validator == "type":
                value = error.validator_value
                branch_types.extend([value] if isinstance(value, str) else value)
            elif error.validator in ("anyOf", "oneOf") and error.context:
                nested = _alternatives(error.context)
                if nested is None:
                    return None
                branch_consts.extend(nested[0])
                branch_types.extend(nested[1])
            else:
                return None
        if branch_consts:
            consts.extend(c for c in branch_consts if c not in consts)
        else:
            types.extend(t for t in branch_types if t not in types)
    free = set(types)
    consts = [c for c in consts if _json_type(c) not in free]
    return consts, types


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _alternatives_message(instance: object, consts: list[object], types: list[str]) -> str:
    type_list = ", ".join(repr(t) for t in types)
    if not consts:
        return f"{_short(instance)} is not of type {type_list}"
    message = f"{_short(instance)} is not one of {_short_list(consts)}"
    return message + (f" or of type {type_list}" if types else "")


def _short_list(values: list[object]) -> str:
    return "[" + ", ".join(_short(v) for v in values) + "]"


def _explain(error: ValidationError) -> Iterator[_Found]:
    """The useful leaf errors behind ``error`` (descending into failed unions)."""
    if error.validator not in ("anyOf", "oneOf") or not error.context:
        yield _Found(
            tuple(error.absolute_path), _readable(error), tuple(error.absolute_schema_path)
        )
        return
    context: list[ValidationError] = list(error.context)
    by_branch: dict[int, list[ValidationError]] = {}
    for sub in context:
        by_branch.setdefault(_branch_of(sub), []).append(sub)
    candidates = {
        index: errs for index, errs in by_branch.items() if not any(map(_is_mismatch, errs))
    }
    if len(candidates) == 1:
        for sub in next(iter(candidates.values())):
            yield from _explain(sub)
        return
    if not candidates:
        yield from _explain_no_branch(error, context)
        return
    # Several plausible branches: report what they all agree on, else the best branch's errors.
    branches = list(candidates.values())
    common = [
        sub
        for sub in branches[0]
        if all(any(_same(sub, other) for other in others) for others in branches[1:])
    ]
    if common:
        for sub in common:
            yield from _explain(sub)
        return
    best = best_match([sub for errs in branches for sub in errs])
    for sub in candidates.get(_branch_of(best), [best]):
        yield from _explain(sub)


def _same(a: ValidationError, b: ValidationError) -> bool:
    return a.message == b.message and _rel_path(a) == _rel_path(b)


def _explain_no_branch(error: ValidationError, context: list[ValidationError]) -> Iterator[_Found]:
    """Every branch rejected the instance as "not meant": say what would have been accepted."""
    here = tuple(error.absolute_path)
    schema_path = (*tuple(error.absolute_schema_path),)
    alternatives = _alternatives(context)
    if alternatives is not None:
        consts, types = alternatives
        yield _Found(here, _alternatives_message(error.instance, consts, types), schema_path)
        return
    # A discriminated union: every known branch failed on the same property's const.
    tags = [e for e in context if len(e.relative_path) == 1 and e.validator in ("const", "enum")]
    keys = {e.relative_path[0] for e in tags}
    if len(keys) == 1 and isinstance(error.instance, dict):
        key = next(iter(keys))
        tag_values: list[object] = []
        for sub in tags:
            values = [sub.validator_value] if sub.validator == "const" else sub.validator_value
            tag_values.extend(v for v in values if v not in tag_values)
        value = error.instance.get(key)
        yield _Found(
            (*here, key),
            f"{_short(value)} is not one of {_short_list(tag_values)}",
            schema_path,
        )
        return
    best = best_match(context)
    yield from _explain(best)


def _violations(
    protocol: Protocol, pointer: str, value: object, prefix: _Path
) -> list[tuple[_Path, str, str]]:
    quick, full = _validators(protocol, pointer)
    found: list[tuple[_Path, str, str]] = []
    if quick.is_valid(value):
        return found
    for error in full.iter_errors(value):
        for leaf in _explain(error):
            schema_pointer = _schema_pointer(protocol, pointer, leaf.schema_path)
            found.append(((*prefix, *leaf.path), leaf.message, schema_pointer))
    return found


def _path_key(path: _Path) -> tuple[tuple[int, int, str], ...]:
    return tuple((0, p, "") if isinstance(p, int) else (1, 0, p) for p in path)


def _finish(found: Iterable[tuple[_Path, str, str]]) -> list[SchemaViolation]:
    unique = dict.fromkeys(found)
    ordered = sorted(unique, key=lambda item: (_path_key(item[0]), item[1], item[2]))
    return [
        SchemaViolation(_json_path(path), message, pointer) for path, message, pointer in ordered
    ]


# --------------------------------------------------------------------------------------------
# Public API


def validate_payload(value: object, def_name: str, protocol: Protocol) -> list[SchemaViolation]:
    """Validate ``value`` against ``$defs[def_name]`` of the bundled ``protocol`` schema.

    Paths are relative to ``value`` (``$``). An unknown ``def_name`` raises ``KeyError``.
    """
    if def_name not in _defs(protocol):
        raise KeyError(f"{def_name!r} is not in $defs of the {protocol} schema")
    return _finish(_violations(protocol, f"#/$defs/{_escape_pointer(def_name)}", value, ()))


def validate_message(
    message: object, protocol: Protocol, *, response_method: str | None = None
) -> list[SchemaViolation]:
    """Validate one decoded JSON-RPC message; an empty list means valid.

    ``response_method`` names the method of the request a response answers; without it a
    response's ``result`` is not checked (the envelope and any ``error`` still are).
    """
    _schema(protocol)  # rejects an unknown protocol
    found: list[tuple[_Path, str, str]] = []
    if not isinstance(message, dict):
        found.append(((), f"{_short(message)} is not of type 'object'", "#/anyOf/0/type"))
        return _finish(found)

    if "jsonrpc" not in message:
        found.append(((), "'jsonrpc' is a required property", "#/anyOf/0/required"))
    else:
        found += _violations(
            protocol, "#/anyOf/0/properties/jsonrpc", message["jsonrpc"], ("jsonrpc",)
        )

    if "method" in message:
        found += _check_call(message, protocol)
    elif "result" in message or "error" in message:
        found += _check_response(message, protocol, response_method)
    else:
        found.append(
            (
                (),
                "'method' is a required property (or 'result'/'error' for a response)",
                "#/$defs/AgentNotification/required",
            )
        )
    return _finish(found)


def _check_call(message: dict[str, Any], protocol: Protocol) -> list[tuple[_Path, str, str]]:
    found = _violations(
        protocol, "#/$defs/AgentNotification/properties/method", message["method"], ("method",)
    )
    has_id = "id" in message
    if has_id:
        found += _violations(protocol, "#/$defs/AgentRequest/properties/id", message["id"], ("id",))
    method = message["method"]
    spec = _method_table(protocol).get(method) if isinstance(method, str) else None
    if spec is None:
        return found  # unknown or extension method: envelope only

    if spec.kind == "request" and not has_id:
        found.append(
            (
                (),
                f"{method!r} is a request: 'id' is a required property",
                "#/$defs/AgentRequest/required",
            )
        )
    elif spec.kind == "notification" and has_id:
        found.append(
            (
                ("id",),
                f"{method!r} is a notification and must not have an 'id'",
                f"#/$defs/{spec.params_def}",
            )
        )

    pointer = f"#/$defs/{spec.params_def}"
    params = message.get("params")
    if params is None:
        if _validators(protocol, pointer)[0].is_valid({}):
            return found
        if "params" in message:
            found.append((("params",), "null is not of type 'object'", f"{pointer}/type"))
        else:
            found.append(((), "'params' is a required property", f"{pointer}/required"))
        return found
    found += _violations(protocol, pointer, params, ("params",))
    return found


def _check_response(
    message: dict[str, Any], protocol: Protocol, response_method: str | None
) -> list[tuple[_Path, str, str]]:
    found: list[tuple[_Path, str, str]] = []
    has_result = "result" in message
    if has_result and "error" in message:
        found.append(
            (
                (),
                "a response must not contain both 'result' and 'error'",
                "#/$defs/AgentResponse/anyOf",
            )
        )
    branch = 0 if has_result else 1
    if "id" not in message:
        found.append(
            ((), "'id' is a required property", f"#/$defs/AgentResponse/anyOf/{branch}/required")
        )
    else:
        found += _violations(
            protocol, f"#/$defs/AgentResponse/anyOf/{branch}/properties/id", message["id"], ("id",)
        )
    if "error" in message:
        found += _violations(
            protocol, "#/$defs/AgentResponse/anyOf/1/properties/error", message["error"], ("error",)
        )
    if has_result and response_method is not None:
        spec = _method_table(protocol).get(response_method)
        if spec is not None and spec.result_def is not None:
            found += _violations(
                protocol, f"#/$defs/{spec.result_def}", message["result"], ("result",)
            )
    return found
