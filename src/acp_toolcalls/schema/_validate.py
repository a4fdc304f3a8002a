"""Validation of JSON-RPC messages against the bundled upstream ACP JSON Schemas.

Rules this module owns (loading the schemas, the engines and the method table are
``_schemas``'):

- Only an invalid value is explained, always by jsonschema, so the violations (messages, paths,
  schema pointers) do not depend on the engine that said it is invalid.
- A message is never validated against the schema's root ``anyOf`` (its errors are useless).
  The envelope is checked first: a JSON object, ``jsonrpc == "2.0"``, a string ``method``, a
  ``RequestId`` ``id`` on requests, and for responses an ``id`` plus exactly one of
  ``result``/``error`` (JSON-RPC 2.0 forbids both; the upstream schema does not say so).
- Requests and notifications are bound to one ``$defs`` entry by their ``method`` (the method
  table). ``params`` is validated against that entry; a missing or ``null`` ``params`` is
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

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jsonschema.exceptions import ValidationError, best_match

from ..models import VersionName
from ._checks import json_path as _json_path
from ._checks import json_type as _json_type
from ._checks import short as _short
from ._schemas import (
    _defs,
    _escape_pointer,
    _method_table,
    _PathPart,
    _resolve_pointer,
    _schema,
    _validators,
)

_MAX_MESSAGE = 300

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


# --------------------------------------------------------------------------------------------
# Rendering paths, schema pointers and messages


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


def _schema_pointer(
    version: VersionName, start: str, schema_path: Iterable[_PathPart], unstable: bool
) -> str:
    schema = _schema(version, unstable)
    rest = list(schema_path)
    found = _walk_schema_path(schema, _resolve_pointer(schema, start), start, rest)
    if found is not None:
        return found
    return start + "".join(f"/{_escape_pointer(p)}" for p in rest)  # pragma: no cover


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
    version: VersionName, pointer: str, value: object, prefix: _Path, unstable: bool = False
) -> list[tuple[_Path, str, str]]:
    quick, full = _validators(version, pointer, unstable)
    found: list[tuple[_Path, str, str]] = []
    if quick.is_valid(value):
        return found
    for error in full.iter_errors(value):
        for leaf in _explain(error):
            schema_pointer = _schema_pointer(version, pointer, leaf.schema_path, unstable)
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


def validate_payload(
    value: object, def_name: str, version: VersionName, *, unstable: bool = False
) -> list[SchemaViolation]:
    """Validate ``value`` against ``$defs[def_name]`` of the bundled ``version`` schema (the
    unstable one with ``unstable``).

    Paths are relative to ``value`` (``$``). An unknown ``def_name`` raises ``KeyError``.
    """
    if def_name not in _defs(version, unstable):
        raise KeyError(f"{def_name!r} is not in $defs of the {version} schema")
    pointer = f"#/$defs/{_escape_pointer(def_name)}"
    return _finish(_violations(version, pointer, value, (), unstable))


def validate_message(
    message: object,
    version: VersionName,
    *,
    response_method: str | None = None,
    unstable: bool = False,
) -> list[SchemaViolation]:
    """Validate one decoded JSON-RPC message; an empty list means valid.

    ``response_method`` names the method of the request a response answers; without it a
    response's ``result`` is not checked (the envelope and any ``error`` still are).
    ``unstable`` validates against the version's ``schema.unstable.json``.
    """
    _schema(version, unstable)  # rejects an unknown protocol
    found: list[tuple[_Path, str, str]] = []
    if not isinstance(message, dict):
        found.append(((), f"{_short(message)} is not of type 'object'", "#/anyOf/0/type"))
        return _finish(found)

    if "jsonrpc" not in message:
        found.append(((), "'jsonrpc' is a required property", "#/anyOf/0/required"))
    else:
        found += _violations(
            version, "#/anyOf/0/properties/jsonrpc", message["jsonrpc"], ("jsonrpc",), unstable
        )

    if "method" in message:
        found += _check_call(message, version, unstable)
    elif "result" in message or "error" in message:
        found += _check_response(message, version, response_method, unstable)
    else:
        found.append(
            (
                (),
                "'method' is a required property (or 'result'/'error' for a response)",
                "#/$defs/AgentNotification/required",
            )
        )
    return _finish(found)


def _check_call(
    message: dict[str, Any], version: VersionName, unstable: bool
) -> list[tuple[_Path, str, str]]:
    method_pointer = "#/$defs/AgentNotification/properties/method"
    found = _violations(version, method_pointer, message["method"], ("method",), unstable)
    has_id = "id" in message
    if has_id:
        id_pointer = "#/$defs/AgentRequest/properties/id"
        found += _violations(version, id_pointer, message["id"], ("id",), unstable)
    method = message["method"]
    table = _method_table(version, unstable)
    spec = table.get(method) if isinstance(method, str) else None
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
        if _validators(version, pointer, unstable)[0].is_valid({}):
            return found
        if "params" in message:
            found.append((("params",), "null is not of type 'object'", f"{pointer}/type"))
        else:
            found.append(((), "'params' is a required property", f"{pointer}/required"))
        return found
    found += _violations(version, pointer, params, ("params",), unstable)
    return found


def _check_response(
    message: dict[str, Any], version: VersionName, response_method: str | None, unstable: bool
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
        id_pointer = f"#/$defs/AgentResponse/anyOf/{branch}/properties/id"
        found += _violations(version, id_pointer, message["id"], ("id",), unstable)
    if "error" in message:
        error_pointer = "#/$defs/AgentResponse/anyOf/1/properties/error"
        found += _violations(version, error_pointer, message["error"], ("error",), unstable)
    if has_result and response_method is not None:
        spec = _method_table(version, unstable).get(response_method)
        if spec is not None and spec.result_def is not None:
            result_pointer = f"#/$defs/{spec.result_def}"
            found += _violations(version, result_pointer, message["result"], ("result",), unstable)
    return found
